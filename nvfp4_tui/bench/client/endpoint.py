"""EndpointClient: streams chat completions to one endpoint, one Measurement per request.

The clock starts when the request's bytes reach the socket (``trace``); each read of the socket is
stamped once, before any parsing, and every SSE event in that read shares the stamp, so events
that arrived together are 0 s apart. A request that never reached the socket (a connect error) is
timed from just before aiohttp was called; time spent waiting for the client's concurrency slot
is ``queue_s``. Every failure becomes a Measurement with ``status="error"``, an ``error_kind`` and
a short message that never contains the API key; it keeps whatever was measured and received
before the failure.

One endpoint cannot make the client do unbounded work for it, since every endpoint shares the
loop that times the others: replies are asked for uncompressed and a compressed one is a protocol
error (a gzip bomb would otherwise be inflated on that loop); a read is parsed in slices of
``SLICE_BYTES`` with a yield to the loop between them, so a flood of tiny chunks delays another
stream by one slice at most, and a stream past its ``EventBudget`` is read no faster than that
allows; ``ReplyLimits`` bound what one reply may hold; and after
``[DONE]`` at most ``MAX_DRAIN_BYTES`` are read before the connection is dropped. Redirects are
never followed: a 3xx is an error row naming its target.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from time import perf_counter
from typing import TYPE_CHECKING, Any, Literal

import aiohttp

from nvfp4_tui.bench.client.budget import EventBudget
from nvfp4_tui.bench.client.errors import (
    BODY_EXCERPT_CHARS,
    Failure,
    body_excerpt,
    classify,
    describe,
    http_kind,
    retry_after_seconds,
)
from nvfp4_tui.bench.client.measurement import Measurement, first_chunk_tokens_of, measure
from nvfp4_tui.bench.client.request import ChatRequest, Timeouts
from nvfp4_tui.bench.client.stream import Attempt, Stream
from nvfp4_tui.bench.client.trace import SendClock, send_clock_trace
from nvfp4_tui.bench.sse import SseError, SseParser, SseTooLarge
from nvfp4_tui.config.profile import ReplyLimits
from nvfp4_tui.core.outside_text import (
    NO_SECRETS,
    Secrets,
    outside_line,
    secrets_of,
    without_secrets,
)
from nvfp4_tui.telemetry.prometheus import read_at_most

if TYPE_CHECKING:
    from nvfp4_tui.bench.progress import TokenMeter

READ_BUFSIZE = 4 * 1024 * 1024  # aiohttp's 64 KiB default stalls on long replies
# Parsed between two yields to the loop: at most ~1,600 of the smallest events, a few ms. Normal
# reads are smaller, so a healthy stream never yields more than it did.
SLICE_BYTES = 16 * 1024
MAX_DRAIN_BYTES = 64 * 1024  # read after [DONE] so the connection can be reused, and no more
# How long the end of a body may lag its [DONE] before the connection is dropped instead: the
# next request of a closed loop waits for this one to let go, and a server slow to end its
# bodies would otherwise hold every worker for as long as it lags.
DRAIN_WAIT_S = 0.1
MEASURED_ON_LOOP_CHUNKS = 16_384  # a few ms of measuring; longer streams are measured off it
MAX_MODELS_BYTES = 1 << 20  # a /v1/models listing; past this it is no listing
HEALTH_CONNECTIONS = 2  # pool slots beyond the concurrency, so a health check never waits
MODELS_LISTED_IN_MESSAGE = 5
MODEL_ID_CHARS = 80  # each listed id is cut to this, after its scrub
FINISH_REASON_CHARS = 40  # "stop", "length", "tool_calls": a longer one is cut
FULL_USAGE = {"include_usage": True, "continuous_usage_stats": True}
FINAL_USAGE = {"include_usage": True}
USAGE_OPTION_KEYS = ("continuous_usage_stats", "stream_options")
REJECTED_STATUSES = (400, 422)
JSON_HEADERS = {"Content-Type": "application/json"}
IDENTITY = "identity"  # the only Content-Encoding the client reads


class EndpointClient:
    """Streams chat completions to one endpoint, at most ``concurrency`` at a time.

    Use it as ``async with EndpointClient(...) as client``: it owns one aiohttp session whose pool
    holds ``concurrency`` streams plus room for health checks.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        concurrency: int,
        timeouts: Timeouts,
        api_key: str | None = None,
        verify_tls: bool = True,
        limits: ReplyLimits | None = None,
        secrets: Secrets = NO_SECRETS,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self._base_url = base_url.rstrip("/")
        self._chat_url = f"{self._base_url}/v1/chat/completions"
        self._model = model
        self._concurrency = concurrency
        self._timeouts = timeouts
        self._api_key = api_key or None
        # Scrubbed from whatever the server sends back: this key and ``secrets`` (the run's
        # other keys, which a gateway serving several endpoints can echo).
        self._secrets = secrets | secrets_of(self._api_key)
        self._verify_tls = verify_tls
        self._limits = limits or ReplyLimits()
        self._slots = asyncio.Semaphore(concurrency)
        self.waiting = 0  # requests waiting for a slot (the client's own queue)
        self.sending = 0  # requests holding one
        self._session: aiohttp.ClientSession | None = None
        # Whether the server takes continuous_usage_stats; learnt from this client's first answers.
        self._usage_options: Literal["untested", "accepted", "rejected"] = "untested"

    async def __aenter__(self) -> EndpointClient:
        connections = self._concurrency + HEALTH_CONNECTIONS
        headers = {"Accept-Encoding": IDENTITY}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(
                limit=connections, limit_per_host=connections, ssl=self._verify_tls
            ),
            timeout=aiohttp.ClientTimeout(total=None, connect=self._timeouts.connect_s),
            headers=headers,
            read_bufsize=READ_BUFSIZE,
            auto_decompress=False,
            trace_configs=[send_clock_trace()],
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def chat(
        self, request: ChatRequest, *, progress: TokenMeter | None = None
    ) -> Measurement:
        """Stream one completion and measure it; never raises for a failed request.

        ``progress`` counts tokens as they arrive (server counts when usage streams per chunk,
        else one per generated chunk) and the time each stream spends decoding, for live rates
        across the requests in flight.
        """
        session = self._open_session()
        asked_at = perf_counter()
        self.waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        queue_s = perf_counter() - asked_at
        self.sending += 1
        try:
            if self._usage_options == "rejected":
                attempt = await self._attempt(session, request, FINAL_USAGE, progress)
            else:
                attempt = await self._attempt(session, request, FULL_USAGE, progress)
                if _options_rejected(attempt) and (
                    self._usage_options == "untested" or _blames_usage_options(attempt)
                ):
                    attempt = await self._attempt(session, request, FINAL_USAGE, progress)
                    if _options_rejected(attempt):
                        self._usage_options = "accepted"  # the option was not what it refused
                    elif attempt.http_status is not None:
                        self._usage_options = "rejected"
                elif attempt.http_status is not None and attempt.http_status < 300:
                    self._usage_options = "accepted"
        finally:
            self.sending -= 1
            self._slots.release()
        failure = attempt.failure
        if failure is not None:
            failure.message = outside_line(failure.message, secrets=self._secrets)
        if len(attempt.stream.gen_times) > MEASURED_ON_LOOP_CHUNKS:
            # Tens of ms of gaps to sort: off the loop, which the interpreter then gets back
            # every few ms instead of waiting for all of it.
            measurement = await asyncio.to_thread(measure, attempt, queue_s)
        else:
            measurement = measure(attempt, queue_s)
        # A server that echoes request headers into its reply must not put the key on disk;
        # answers keep the rest of their text as sent, for scoring.
        tool_calls, finish = measurement.tool_calls_json, measurement.finish_reason
        return replace(
            measurement,
            finish_reason=None
            if finish is None
            else outside_line(finish, FINISH_REASON_CHARS, self._secrets),
            answer_text=without_secrets(measurement.answer_text, self._secrets),
            reasoning_text=without_secrets(measurement.reasoning_text, self._secrets),
            tool_calls_json=None
            if tool_calls is None
            else without_secrets(tool_calls, self._secrets),
        )

    async def health(self) -> tuple[bool, str]:
        """Whether the endpoint answers and serves the model, and a one-line reason."""
        session = self._open_session()
        try:
            async with asyncio.timeout(self._timeouts.health_s):
                url = f"{self._base_url}/health"
                async with session.get(url, allow_redirects=False) as response:
                    health_status = response.status
                    health_moved = self._redirect_note(response)
                url = f"{self._base_url}/v1/models"
                async with session.get(url, allow_redirects=False) as response:
                    models_status = response.status
                    models_moved = self._redirect_note(response)
                    served = await served_models(response) if models_status < 300 else None
        except TimeoutError:
            return False, f"timeout: no answer within {self._timeouts.health_s:g} s"
        except (aiohttp.ClientError, OSError) as error:
            kind, message = classify(error, self._secrets)
            return False, outside_line(f"{kind}: {message}", secrets=self._secrets)
        if served is not None:
            if self._model in served:
                return True, "ok"
            # The ids are the server's text: an echo of the key or an escape goes before the cut.
            ids = served[:MODELS_LISTED_IN_MESSAGE]
            shown = (outside_line(m, MODEL_ID_CHARS, self._secrets) for m in ids)
            listed = ", ".join(shown) or "nothing"
            model = outside_line(self._model, MODEL_ID_CHARS, self._secrets)
            return False, f"model {model!r} is not served here; /v1/models lists {listed}"
        if 200 <= health_status < 300:
            return True, f"ok (/health; /v1/models gave no model list, HTTP {models_status})"
        if 200 <= models_status < 300:
            return False, "/v1/models answered without a model list"
        return False, (
            f"/health: HTTP {health_status}{health_moved}; "
            f"/v1/models: HTTP {models_status}{models_moved}"
        )

    async def _attempt(
        self,
        session: aiohttp.ClientSession,
        request: ChatRequest,
        stream_options: dict[str, bool],
        progress: TokenMeter | None,
    ) -> Attempt:
        # Serialised before the clock starts: a long prompt's JSON is the client's time, not TTFT.
        body = json.dumps(self._body(request, stream_options), ensure_ascii=False).encode()
        exchange = _Exchange(
            Stream(self._limits, request.max_tokens, self._secrets),
            SseParser(self._limits.max_event_bytes),
            self._timeouts,
            AttemptProgress(progress),
        )
        clock = SendClock()
        called_at = perf_counter()
        try:
            async with (
                exchange.watchdog,
                session.post(
                    self._chat_url,
                    data=body,
                    headers=JSON_HEADERS,
                    allow_redirects=False,
                    trace_request_ctx=clock,
                ) as response,
            ):
                exchange.http_status = response.status
                await self._accept(response, exchange)
                await self._read(response, exchange)
        except Failure as caught:
            exchange.failure = caught
        except SseTooLarge as caught:
            exchange.failure = Failure("too_large", f"{caught} (run.max_event_bytes)")
        except SseError as caught:
            exchange.failure = Failure("protocol", str(caught))
        except TimeoutError as caught:
            exchange.failure = Failure("timeout", self._timeout_message(caught, exchange))
        except (aiohttp.ClientError, OSError) as caught:
            exchange.failure = Failure(*classify(caught, self._secrets))
        finally:
            exchange.progress.answered()
        return exchange.attempt(clock, called_at)

    async def _accept(self, response: aiohttp.ClientResponse, exchange: _Exchange) -> None:
        """Raise the Failure of a reply that is no event stream the client reads."""
        encoding = self._content_encoding(response)
        if not 200 <= response.status < 300:
            exchange.retry_after_s = retry_after_seconds(response.headers.get("Retry-After"))
            message = await self._status_message(response, encoding)
            raise Failure(http_kind(response.status), message)
        if encoding is not None:
            raise Failure(
                "protocol",
                f"reply is {encoding}-encoded (Content-Encoding) though the client "
                "asked for identity; compressed streams are not read",
            )
        if response.content_type != "text/event-stream":
            excerpt = await body_excerpt(response, self._secrets)
            raise Failure(
                "protocol", f"expected text/event-stream, got {response.content_type}: {excerpt}"
            )

    async def _read(self, response: aiohttp.ClientResponse, exchange: _Exchange) -> None:
        """Read the stream to its end, each read stamped once before it is parsed; raise the
        Failure of a stream that closed before any finish_reason."""
        stream, loop = exchange.stream, asyncio.get_running_loop()
        drained = 0  # bytes read after [DONE]
        async for buffer in response.content.iter_any():
            now = perf_counter()
            if stream.done_at is not None:
                # Drain a little so the connection can be reused; a server that goes on past
                # [DONE], or is slow to end the body, has it dropped instead.
                drained += len(buffer)
                if drained > MAX_DRAIN_BYTES:
                    break
                continue
            exchange.waiting_for = "idle"
            exchange.watchdog.reschedule(
                min(loop.time() + self._timeouts.idle_s, exchange.total_deadline)
            )
            await self._parse(buffer, exchange.parser, stream, now, exchange.budget)
            exchange.progress.saw(stream)
            if stream.done_at is not None:
                exchange.watchdog.reschedule(loop.time() + DRAIN_WAIT_S)
                # The server is done with it: full load and decoding time stop here, not when
                # the drain ends.
                exchange.progress.answered()
        exchange.eof_at = perf_counter()
        if stream.done_at is None:
            for payload in exchange.parser.end():
                stream.take(payload, exchange.eof_at)
            if stream.finish_reason is None:
                raise Failure("truncated", _truncated_message(stream, "the stream closed"))

    @staticmethod
    async def _parse(
        buffer: bytes, parser: SseParser, stream: Stream, now: float, budget: EventBudget
    ) -> None:
        """Take the events of one read, stamped ``now``, a slice at a time: between slices the
        loop reads (and times) the other streams, for as long as ``budget`` says this stream
        must wait."""
        for start in range(0, len(buffer), SLICE_BYTES):
            if start:
                await asyncio.sleep(budget.pause_after(stream.events))
            try:
                payloads = parser.feed(buffer[start : start + SLICE_BYTES])
            except SseTooLarge as too_large:
                _take_all(too_large.events, stream, now)  # the row keeps what came before
                raise
            if _take_all(payloads, stream, now):
                return
        pause_s = budget.pause_after(stream.events)
        if pause_s:
            await asyncio.sleep(pause_s)  # before the next read: TCP holds the rest back

    async def _status_message(self, response: aiohttp.ClientResponse, encoding: str | None) -> str:
        """One line for a reply that is no stream: a redirect names its target, a 1xx says so,
        an error gives an excerpt of its body (not of a compressed one)."""
        status = response.status
        if 300 <= status < 400:
            return f"HTTP {status}{self._redirect_note(response)}"
        if status < 200:
            return f"HTTP {status}: an interim reply (switching protocols?) instead of an answer"
        if encoding is not None:
            return f"HTTP {status}: ({encoding}-encoded body, not read)"
        return f"HTTP {status}: {await body_excerpt(response, self._secrets)}"

    def _redirect_note(self, response: aiohttp.ClientResponse) -> str:
        """What a 3xx says of its target (the Location header, made safe), else nothing."""
        if not 300 <= response.status < 400:
            return ""
        location = response.headers.get("Location")
        target = (
            outside_line(location, BODY_EXCERPT_CHARS, self._secrets)
            if location
            else "no Location given"
        )
        return f": redirect to {target} not followed (redirects never are)"

    def _content_encoding(self, response: aiohttp.ClientResponse) -> str | None:
        """The reply's Content-Encoding when it is not identity, as one safe line."""
        encoding = response.headers.get("Content-Encoding", "").strip()
        if not encoding or encoding.lower() == IDENTITY:
            return None
        return outside_line(encoding, 40, self._secrets)

    def _body(self, request: ChatRequest, stream_options: dict[str, bool]) -> dict[str, Any]:
        body: dict[str, Any] = dict(request.extra_body) if request.extra_body else {}
        body["model"] = self._model
        body["messages"] = list(request.messages)
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.tools:
            body["tools"] = list(request.tools)
        body["stream"] = True
        body["stream_options"] = stream_options
        return body

    def _timeout_message(self, error: TimeoutError, exchange: _Exchange) -> str:
        timeouts = self._timeouts
        if isinstance(error, aiohttp.ConnectionTimeoutError):
            return f"connect: no connection within {timeouts.connect_s:g} s"
        if not exchange.watchdog.expired():
            return describe(error, self._secrets)
        when = exchange.watchdog.when()
        if when is not None and when >= exchange.total_deadline:
            return f"total: request exceeded {timeouts.total_s:g} s"
        if exchange.waiting_for == "first byte":
            return f"first byte: no response within {timeouts.first_byte_s:g} s"
        return f"idle: no data for {timeouts.idle_s:g} s"

    def _open_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("EndpointClient is used outside `async with`")
        return self._session


class AttemptProgress:
    """One attempt's part in the live token count (``TokenMeter``): in flight from its send,
    decoding from its first generated chunk, neither once the server has ended its answer."""

    def __init__(self, meter: TokenMeter | None) -> None:
        self._meter = meter
        self._counted = 0  # tokens already counted
        self._decoding = False
        self._answered = False
        if meter is not None:
            meter.request_started()

    def saw(self, stream: Stream) -> None:
        """Count what ``stream`` generated since the last read."""
        meter = self._meter
        if meter is None or not stream.gen_times:
            return
        made = stream.tokens_so_far()
        if not self._decoding:
            # The first chunk's own tokens, as decode_tps leaves them out; the rest of this
            # read is decoding already.
            self._counted = min(made, first_chunk_tokens_of(stream.gen_tokens) or 1)
            meter.first_chunk(self._counted)
            self._decoding = True
        if made > self._counted:
            meter.decoded(made - self._counted)
            self._counted = made

    def answered(self) -> None:
        """The server ended the answer ([DONE], the body closed, a failure); once only."""
        if self._meter is not None and not self._answered:
            self._meter.request_answered(self._decoding)
        self._answered = True


class _Exchange:
    """One attempt in progress: its stream, its deadlines, and what the reply has said so far."""

    def __init__(
        self, stream: Stream, parser: SseParser, timeouts: Timeouts, progress: AttemptProgress
    ) -> None:
        started = asyncio.get_running_loop().time()
        self.stream = stream
        self.parser = parser
        self.budget = EventBudget()
        self.progress = progress
        self.total_deadline = started + timeouts.total_s
        self.watchdog = asyncio.timeout_at(
            min(started + timeouts.first_byte_s, self.total_deadline)
        )
        self.waiting_for = "first byte"  # then "idle": which timeout a stall runs into
        self.http_status: int | None = None
        self.retry_after_s: float | None = None
        self.failure: Failure | None = None
        self.eof_at: float | None = None  # when the body ended, if it did

    def attempt(self, clock: SendClock, called_at: float) -> Attempt:
        """The attempt as it ended; timed from when its bytes reached the socket, or from just
        before aiohttp was called when they never did."""
        stream = self.stream
        sent_at = called_at if clock.sent_at is None else clock.sent_at
        setup_s = None if clock.sent_at is None else clock.sent_at - called_at
        if stream.done_at is not None:
            # Anything after [DONE] (a reset, a stall) does not touch a finished measurement; a
            # [DONE] before any finish_reason ended no answer.
            cut = (
                None
                if stream.finish_reason is not None
                else Failure("truncated", _truncated_message(stream, "[DONE] came"))
            )
            return Attempt(stream, sent_at, stream.done_at, self.http_status, cut, setup_s=setup_s)
        if self.failure is not None or self.eof_at is None:
            return Attempt(
                stream,
                sent_at,
                perf_counter(),
                self.http_status,
                self.failure,
                self.retry_after_s,
                setup_s,
            )
        return Attempt(stream, sent_at, self.eof_at, self.http_status, None, setup_s=setup_s)


async def served_models(response: aiohttp.ClientResponse) -> list[str] | None:
    try:
        data = await read_at_most(response.content, MAX_MODELS_BYTES + 1)
        if len(data) > MAX_MODELS_BYTES:
            return None
        listing = json.loads(data)
        return [str(entry["id"]) for entry in listing["data"]]
    except (ValueError, TypeError, KeyError, RecursionError, aiohttp.ClientError):
        return None


def _take_all(payloads: list[bytes], stream: Stream, now: float) -> bool:
    """Take events in order until [DONE]; whether it came."""
    for payload in payloads:
        stream.take(payload, now)
        if stream.done_at is not None:
            return True
    return False


def _truncated_message(stream: Stream, ending: str) -> str:
    chunks = len(stream.gen_times)
    return (
        f"{ending} before any finish_reason, after {chunks} generated "
        f"chunk{'s' * (chunks != 1)}: the answer was cut short"
    )


def _options_rejected(attempt: Attempt) -> bool:
    return attempt.http_status in REJECTED_STATUSES


def _blames_usage_options(attempt: Attempt) -> bool:
    message = attempt.failure.message if attempt.failure else ""
    return any(key in message for key in USAGE_OPTION_KEYS)

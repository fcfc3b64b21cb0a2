"""Streaming measurement client: one chat completion request to one endpoint -> one Measurement.

Timing follows DESIGN.md "Metric definitions". The clock (``perf_counter``) starts when aiohttp
hands the request's bytes (head and body, one write) to the socket, stamped by a TraceConfig hook
right before that write: building the request and taking or opening a pooled connection (TCP and
TLS setup included) come before it, so TTFT and E2E are the endpoint's answer time, not the
client's setup; that setup is recorded beside them as ``setup_s``. A request that never reached
the socket (a connect error) is timed from just before aiohttp was called. Time spent waiting for
the client's concurrency slot is ``queue_s``.
Each read of the socket is stamped once, as the read is handed to this task and before any
parsing, and every SSE event in that read shares the stamp: events that arrived together are 0 s
apart. Per event the work is one JSON decode and a few dict lookups; percentiles, token counts and
text are computed once, after the stream.

Every failure becomes a Measurement with ``status="error"``, an ``error_kind`` and a short message
that never contains the API key; it keeps whatever was measured and received before the failure.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from dataclasses import dataclass, fields, replace
from email.utils import parsedate_to_datetime
from itertools import pairwise
from time import perf_counter
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Literal

import aiohttp
import orjson

from nvfp4_tui.bench.sse import SseError, SseParser
from nvfp4_tui.core.events import ErrorKind, RequestStatus
from nvfp4_tui.core.stats import percentile_of_sorted

if TYPE_CHECKING:
    from nvfp4_tui.bench.progress import TokenMeter

READ_BUFSIZE = 4 * 1024 * 1024  # aiohttp's 64 KiB default stalls on long replies
HEALTH_CONNECTIONS = 2  # pool slots beyond the concurrency, so a health check never waits
BODY_EXCERPT_BYTES = 2048
BODY_EXCERPT_CHARS = 200
CHUNK_EXCERPT_CHARS = 80
MODELS_LISTED_IN_MESSAGE = 5
FULL_USAGE = {"include_usage": True, "continuous_usage_stats": True}
FINAL_USAGE = {"include_usage": True}
USAGE_OPTION_KEYS = ("continuous_usage_stats", "stream_options")
REJECTED_STATUSES = (400, 422)
RETRYABLE_PREFIXES = tuple(f"HTTP {status}:" for status in (429, 503))  # see _attempt's message
JSON_HEADERS = {"Content-Type": "application/json"}

# Every chunk is parsed on the loop that times the stream: orjson decodes a typical 250-byte
# chunk in 1-3 us against 3-10 us for the standard library (benchmarks/client_ceiling.py), and
# rejects bad UTF-8 with a ValueError like json does.
_loads = orjson.loads


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to stream; only standard fields are sent unless ``extra_body`` is set."""

    messages: tuple[dict[str, Any], ...]
    max_tokens: int | None = None
    temperature: float | None = None
    tools: tuple[dict[str, Any], ...] | None = None
    extra_body: dict[str, Any] | None = None


@dataclass(frozen=True)
class Timeouts:
    """Limits of one request in seconds; ``total_s`` is the profile's ``run.timeout_s``."""

    connect_s: float = 10.0
    first_byte_s: float = 120.0  # a long prompt's prefill behind a full batch takes a while
    idle_s: float = 60.0  # between two reads of the stream
    total_s: float = 300.0
    health_s: float = 10.0  # both health probes together

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if not value > 0:
                raise ValueError(f"Timeouts.{field.name} must be > 0 seconds, got {value!r}")


@dataclass(frozen=True, slots=True)
class Measurement:
    """One request's numbers: the fields of ``events.RequestFinished`` the client can know."""

    status: RequestStatus
    queue_s: float
    setup_s: float | None = None
    ttft_s: float | None = None
    ttfa_s: float | None = None
    e2e_s: float | None = None
    itl_p50_s: float | None = None
    itl_p95_s: float | None = None
    itl_p99_s: float | None = None
    itl_max_s: float | None = None
    itl_per_token: bool = False
    chunks: int = 0
    first_chunk_tokens: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    reasoning_tokens: int | None = None
    tokens_estimated: bool = False
    decode_tps: float | None = None
    e2e_tps: float | None = None
    finish_reason: str | None = None
    answer_text: str = ""
    reasoning_text: str = ""
    tool_calls_json: str | None = None
    error_kind: ErrorKind | None = None
    error_message: str | None = None
    retry_after_s: float | None = None


class _Failure(Exception):
    """Why an attempt ended early; what the stream delivered before it is kept."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message


class _SendClock:
    """When one attempt's request went to the socket; stamped by ``_on_request_bytes``."""

    __slots__ = ("sent_at",)

    def __init__(self) -> None:
        self.sent_at: float | None = None


async def _on_request_bytes(
    _session: aiohttp.ClientSession, context: SimpleNamespace, _params: object
) -> None:
    # aiohttp calls this right before each body write, the first of which carries the
    # buffered request head too; only the first write starts the clock.
    clock = context.trace_request_ctx
    if isinstance(clock, _SendClock) and clock.sent_at is None:
        clock.sent_at = perf_counter()


def _send_clock_trace() -> aiohttp.TraceConfig:
    trace = aiohttp.TraceConfig()
    trace.on_request_chunk_sent.append(_on_request_bytes)
    return trace


class _ToolCall:
    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id: str | None = None
        self.name: str | None = None
        self.arguments: list[str] = []

    def take(self, delta: dict[str, Any]) -> None:
        if delta.get("id"):
            self.id = delta["id"]
        function = delta.get("function")
        if function:
            if function.get("name"):
                self.name = function["name"]
            arguments = function.get("arguments")
            if arguments:
                # A few servers send the arguments as an object instead of streamed JSON text.
                text = arguments if isinstance(arguments, str) else json.dumps(arguments)
                self.arguments.append(text)


class _Stream:
    """What one response stream has delivered so far; ``take`` runs once per SSE event."""

    __slots__ = (
        "answer",
        "completion_tokens",
        "done_at",
        "finish_reason",
        "gen_times",
        "gen_tokens",
        "reasoning",
        "tools",
        "ttfa_at",
        "usage",
    )

    def __init__(self) -> None:
        self.answer: list[str] = []
        self.reasoning: list[str] = []
        self.tools: dict[Any, _ToolCall] = {}
        self.gen_times: list[float] = []  # arrival of each chunk that carried generated text
        self.gen_tokens: list[Any] = []  # that chunk's cumulative usage.completion_tokens, or None
        self.ttfa_at: float | None = None
        self.usage: dict[str, Any] | None = None  # the last usage object seen
        self.completion_tokens: Any = None
        self.finish_reason: str | None = None
        self.done_at: float | None = None  # when ``data: [DONE]`` arrived

    def take(self, payload: bytes, now: float) -> None:
        if payload == b"[DONE]":
            self.done_at = now
            return
        try:
            chunk = _loads(payload)
        except ValueError:
            raise _Failure("protocol", f"malformed JSON chunk: {_excerpt(payload)}") from None
        try:
            choices = chunk.get("choices")
            usage = chunk.get("usage")
            tokens = None
            if usage:
                tokens = usage.get("completion_tokens")
                self.usage = usage
                self.completion_tokens = tokens
            if choices:
                choice = choices[0]
                delta = choice.get("delta")
                if delta:
                    content = delta.get("content")
                    # vLLM has sent both names with the same text; count it once.
                    reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                    tool_calls = delta.get("tool_calls")
                    if content or reasoning or tool_calls:
                        self.gen_times.append(now)
                        self.gen_tokens.append(tokens)
                        if content:
                            self.answer.append(content)
                            if self.ttfa_at is None:
                                self.ttfa_at = now
                        if reasoning:
                            self.reasoning.append(reasoning)
                        if tool_calls:
                            self._take_tool_calls(tool_calls)
                reason = choice.get("finish_reason")
                if reason:
                    self.finish_reason = reason
            elif not usage:
                problem = chunk.get("error") or (chunk if chunk.get("object") == "error" else None)
                if problem:
                    raise _Failure("protocol", f"server error in stream: {_error_text(problem)}")
        except (AttributeError, TypeError, IndexError, KeyError):
            raise _Failure("protocol", f"unexpected chunk: {_excerpt(payload)}") from None

    def _take_tool_calls(self, deltas: list[dict[str, Any]]) -> None:
        for position, delta in enumerate(deltas):
            index = delta.get("index", position)
            call = self.tools.get(index)
            if call is None:
                call = self.tools[index] = _ToolCall()
            call.take(delta)

    def tokens_so_far(self) -> int:
        """Server-counted tokens when usage streams per chunk, else generated chunks."""
        tokens = self.completion_tokens
        return tokens if type(tokens) is int else len(self.gen_times)


@dataclass(frozen=True, slots=True)
class _Attempt:
    stream: _Stream
    sent_at: float
    ended_at: float
    http_status: int | None
    failure: _Failure | None
    retry_after_s: float | None = None  # what a 429/503 asked for in Retry-After
    setup_s: float | None = None  # from calling aiohttp to the bytes reaching the socket

    @property
    def options_rejected(self) -> bool:
        return self.http_status in REJECTED_STATUSES

    def blames_usage_options(self) -> bool:
        message = self.failure.message if self.failure else ""
        return any(key in message for key in USAGE_OPTION_KEYS)


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
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self._base_url = base_url.rstrip("/")
        self._chat_url = f"{self._base_url}/v1/chat/completions"
        self._model = model
        self._concurrency = concurrency
        self._timeouts = timeouts
        self._api_key = api_key or None
        self._verify_tls = verify_tls
        self._slots = asyncio.Semaphore(concurrency)
        self._session: aiohttp.ClientSession | None = None
        # Whether the server takes continuous_usage_stats; learnt from this client's first answers.
        self._usage_options: Literal["untested", "accepted", "rejected"] = "untested"

    async def __aenter__(self) -> EndpointClient:
        connections = self._concurrency + HEALTH_CONNECTIONS
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(
                limit=connections, limit_per_host=connections, ssl=self._verify_tls
            ),
            timeout=aiohttp.ClientTimeout(total=None, connect=self._timeouts.connect_s),
            headers={"Authorization": f"Bearer {self._api_key}"} if self._api_key else None,
            read_bufsize=READ_BUFSIZE,
            trace_configs=[_send_clock_trace()],
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
        async with self._slots:
            queue_s = perf_counter() - asked_at
            if self._usage_options == "rejected":
                attempt = await self._attempt(session, request, FINAL_USAGE, progress)
            else:
                attempt = await self._attempt(session, request, FULL_USAGE, progress)
                if attempt.options_rejected and (
                    self._usage_options == "untested" or attempt.blames_usage_options()
                ):
                    attempt = await self._attempt(session, request, FINAL_USAGE, progress)
                    if attempt.options_rejected:
                        self._usage_options = "accepted"  # the option was not what it refused
                    elif attempt.http_status is not None:
                        self._usage_options = "rejected"
                elif attempt.http_status is not None and attempt.http_status < 300:
                    self._usage_options = "accepted"
        failure = attempt.failure
        if failure is not None:
            failure.message = self._scrub(failure.message)
        measurement = _measure(attempt, queue_s)
        if self._api_key:
            # A server that echoes request headers into its reply must not put the key on disk.
            tool_calls = measurement.tool_calls_json
            measurement = replace(
                measurement,
                answer_text=self._scrub(measurement.answer_text),
                reasoning_text=self._scrub(measurement.reasoning_text),
                tool_calls_json=None if tool_calls is None else self._scrub(tool_calls),
            )
        return measurement

    async def health(self) -> tuple[bool, str]:
        """Whether the endpoint answers and serves the model, and a one-line reason."""
        session = self._open_session()
        try:
            async with asyncio.timeout(self._timeouts.health_s):
                async with session.get(f"{self._base_url}/health") as response:
                    health_status = response.status
                async with session.get(f"{self._base_url}/v1/models") as response:
                    models_status = response.status
                    served = await _served_models(response) if models_status < 300 else None
        except TimeoutError:
            return False, f"timeout: no answer within {self._timeouts.health_s:g} s"
        except (aiohttp.ClientError, OSError) as error:
            kind, message = _classify(error)
            return False, self._scrub(f"{kind}: {message}")
        if served is not None:
            if self._model in served:
                return True, "ok"
            listed = ", ".join(served[:MODELS_LISTED_IN_MESSAGE]) or "nothing"
            return False, f"model {self._model!r} is not served here; /v1/models lists {listed}"
        if 200 <= health_status < 300:
            return True, f"ok (/health; /v1/models gave no model list, HTTP {models_status})"
        if 200 <= models_status < 300:
            return False, "/v1/models answered without a model list"
        return False, f"/health: HTTP {health_status}; /v1/models: HTTP {models_status}"

    async def _attempt(
        self,
        session: aiohttp.ClientSession,
        request: ChatRequest,
        stream_options: dict[str, bool],
        progress: TokenMeter | None,
    ) -> _Attempt:
        timeouts = self._timeouts
        loop = asyncio.get_running_loop()
        # Serialised before the clock starts: a long prompt's JSON is the client's time, not TTFT.
        body = json.dumps(self._body(request, stream_options), ensure_ascii=False).encode()
        stream = _Stream()
        parser = SseParser()
        http_status: int | None = None
        retry_after_s: float | None = None
        failure: _Failure | None = None
        waiting_for = "first byte"
        counted = 0  # tokens already added to progress
        decoding = False  # the first generated chunk arrived: progress counts this stream
        eof_at: float | None = None
        started = loop.time()
        total_deadline = started + timeouts.total_s
        watchdog = asyncio.timeout_at(min(started + timeouts.first_byte_s, total_deadline))
        clock = _SendClock()
        called_at = perf_counter()
        try:
            async with (
                watchdog,
                session.post(
                    self._chat_url, data=body, headers=JSON_HEADERS, trace_request_ctx=clock
                ) as response,
            ):
                http_status = response.status
                if not 200 <= http_status < 300:
                    retry_after_s = retry_after_seconds(response.headers.get("Retry-After"))
                    excerpt = await _body_excerpt(response)
                    raise _Failure(_http_kind(http_status), f"HTTP {http_status}: {excerpt}")
                if response.content_type != "text/event-stream":
                    excerpt = await _body_excerpt(response)
                    raise _Failure(
                        "protocol",
                        f"expected text/event-stream, got {response.content_type}: {excerpt}",
                    )
                async for buffer in response.content.iter_any():
                    now = perf_counter()
                    waiting_for = "idle"
                    watchdog.reschedule(min(loop.time() + timeouts.idle_s, total_deadline))
                    if stream.done_at is not None:
                        continue  # drain to the end so the connection can be reused
                    for payload in parser.feed(buffer):
                        stream.take(payload, now)
                        if stream.done_at is not None:
                            break
                    if progress is not None and stream.gen_times:
                        made = stream.tokens_so_far()
                        if not decoding:
                            # The first chunk's own tokens, as decode_tps leaves them out; the
                            # rest of this buffer is decoding already.
                            counted = min(made, _first_chunk_tokens(stream.gen_tokens) or 1)
                            progress.first_chunk(counted)
                            decoding = True
                        if made > counted:
                            progress.decoded(made - counted)
                            counted = made
                eof_at = perf_counter()
                if stream.done_at is None:
                    for payload in parser.end():
                        stream.take(payload, eof_at)
                    if stream.finish_reason is None:
                        raise _Failure("protocol", "stream ended before finish_reason")
        except _Failure as caught:
            failure = caught
        except SseError as caught:
            failure = _Failure("protocol", str(caught))
        except TimeoutError as caught:
            message = self._timeout_message(caught, watchdog, waiting_for, total_deadline)
            failure = _Failure("timeout", message)
        except (aiohttp.ClientError, OSError) as caught:
            failure = _Failure(*_classify(caught))
        finally:
            if progress is not None and decoding:
                progress.stream_ended()
        sent_at = called_at if clock.sent_at is None else clock.sent_at
        setup_s = None if clock.sent_at is None else clock.sent_at - called_at
        if stream.done_at is not None:
            # Anything after [DONE] (a reset, a stall) does not touch a finished measurement.
            return _Attempt(stream, sent_at, stream.done_at, http_status, None, setup_s=setup_s)
        if failure is not None or eof_at is None:
            ended_at = perf_counter()
            return _Attempt(stream, sent_at, ended_at, http_status, failure, retry_after_s, setup_s)
        return _Attempt(stream, sent_at, eof_at, http_status, None, setup_s=setup_s)

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

    def _timeout_message(
        self,
        error: TimeoutError,
        watchdog: asyncio.Timeout,
        waiting_for: str,
        total_deadline: float,
    ) -> str:
        timeouts = self._timeouts
        if isinstance(error, aiohttp.ConnectionTimeoutError):
            return f"connect: no connection within {timeouts.connect_s:g} s"
        if not watchdog.expired():
            return _describe(error)
        when = watchdog.when()
        if when is not None and when >= total_deadline:
            return f"total: request exceeded {timeouts.total_s:g} s"
        if waiting_for == "first byte":
            return f"first byte: no response within {timeouts.first_byte_s:g} s"
        return f"idle: no data for {timeouts.idle_s:g} s"

    def _scrub(self, text: str) -> str:
        # Servers that echo request headers into an error body would otherwise leak the key.
        return text.replace(self._api_key, "***") if self._api_key else text

    def _open_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("EndpointClient is used outside `async with`")
        return self._session


def _measure(attempt: _Attempt, queue_s: float) -> Measurement:
    stream = attempt.stream
    failure = attempt.failure
    sent_at = attempt.sent_at
    times = stream.gen_times
    ttft_s = times[0] - sent_at if times else None
    e2e_s = attempt.ended_at - sent_at
    usage = stream.usage or {}
    reported = _count(usage.get("completion_tokens"))
    if reported is not None:
        tokens_out, estimated = reported, False
    elif times or failure is None:
        tokens_out, estimated = len(times), True
    else:
        tokens_out, estimated = None, False
    details = usage.get("completion_tokens_details")
    samples, per_token = _itl_samples(times, stream.gen_tokens)
    samples.sort()
    if failure is not None:
        status: RequestStatus = "error"
    else:
        status = "incomplete" if stream.finish_reason == "length" else "ok"
    finished_tokens = tokens_out if failure is None else None
    first_chunk_tokens = _first_chunk_tokens(stream.gen_tokens)
    decode_tps = None
    if finished_tokens is not None and ttft_s is not None and e2e_s > ttft_s:
        # The first chunk's tokens were decoded before TTFT: the window after it holds only the
        # rest (DESIGN.md "Decode tok/s"). Counted chunks are one token each, as is a first
        # chunk the server gave no count for.
        k = first_chunk_tokens if first_chunk_tokens is not None and not estimated else 1
        if finished_tokens > k:
            decode_tps = (finished_tokens - k) / (e2e_s - ttft_s)
    return Measurement(
        status=status,
        queue_s=queue_s,
        setup_s=attempt.setup_s,
        ttft_s=ttft_s,
        ttfa_s=stream.ttfa_at - sent_at if stream.ttfa_at is not None else None,
        e2e_s=e2e_s,
        itl_p50_s=percentile_of_sorted(samples, 50),
        itl_p95_s=percentile_of_sorted(samples, 95),
        itl_p99_s=percentile_of_sorted(samples, 99),
        itl_max_s=samples[-1] if samples else None,
        itl_per_token=per_token,
        chunks=len(times),
        first_chunk_tokens=first_chunk_tokens,
        tokens_in=_count(usage.get("prompt_tokens")),
        tokens_out=tokens_out,
        reasoning_tokens=_count(details.get("reasoning_tokens"))
        if isinstance(details, dict)
        else None,
        tokens_estimated=estimated,
        decode_tps=decode_tps,
        e2e_tps=finished_tokens / e2e_s if finished_tokens is not None and e2e_s > 0 else None,
        finish_reason=stream.finish_reason if isinstance(stream.finish_reason, str) else None,
        answer_text=_join_text(stream.answer),
        reasoning_text=_join_text(stream.reasoning),
        tool_calls_json=_tool_calls_json(stream.tools),
        error_kind=failure.kind if failure else None,
        error_message=failure.message if failure else None,
        retry_after_s=attempt.retry_after_s,
    )


def _first_chunk_tokens(tokens: list[Any]) -> int | None:
    """Tokens up to and with the first generated chunk, by its cumulative usage, if it had one.

    Usage is cumulative, so tokens decoded before it without text of their own (a tool parser
    holding back a call's head) count too: they also came before TTFT. A count of 0 beside
    generated text is no count.
    """
    count = _count(tokens[0]) if tokens else None
    return count if count else None


def _itl_samples(times: list[float], tokens: list[Any]) -> tuple[list[float], bool]:
    """Gaps between generated chunks, split per token when every chunk carried cumulative usage.

    A chunk whose usage did not grow hands its gap on to the next chunk that brings tokens.
    """
    per_token = bool(tokens) and all(type(count) is int for count in tokens)
    if not per_token:
        return [later - earlier for earlier, later in pairwise(times)], False
    samples: list[float] = []
    carried_s = 0.0
    for index in range(1, len(times)):
        gap_s = times[index] - times[index - 1] + carried_s
        count = tokens[index] - tokens[index - 1]
        if count < 1:
            carried_s = gap_s
            continue
        carried_s = 0.0
        if count == 1:
            samples.append(gap_s)
        else:
            samples.extend([gap_s / count] * count)
    return samples, True


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _join_text(parts: list[Any]) -> str:
    try:
        return "".join(parts)
    except TypeError:  # a server sent a non-string delta; keep what it said
        return "".join(part if isinstance(part, str) else json.dumps(part) for part in parts)


def _tool_calls_json(tools: dict[Any, _ToolCall]) -> str | None:
    if not tools:
        return None
    calls = [
        {"id": call.id, "name": call.name, "arguments": "".join(call.arguments)}
        for call in tools.values()  # in order of first appearance, which is index order
    ]
    return json.dumps(calls, ensure_ascii=False)


def retryable(error_message: str | None) -> bool:
    """Whether an error row is an HTTP 429 or 503, the answers a client may resend after."""
    return error_message is not None and error_message.startswith(RETRYABLE_PREFIXES)


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header in seconds: delay-seconds (decimals accepted) or an HTTP date."""
    if not value:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _http_kind(status: int) -> ErrorKind:
    return "http_5xx" if status >= 500 else "http_4xx"


async def _body_excerpt(response: aiohttp.ClientResponse) -> str:
    raw = b""
    try:
        while len(raw) < BODY_EXCERPT_BYTES:
            piece = await response.content.read(BODY_EXCERPT_BYTES - len(raw))
            if not piece:
                break
            raw += piece
    except (aiohttp.ClientError, OSError):
        pass  # the status already says what went wrong; the body is a courtesy
    text = " ".join(raw.decode("utf-8", "replace").split())
    return _truncate(text, BODY_EXCERPT_CHARS) if text else "(empty body)"


async def _served_models(response: aiohttp.ClientResponse) -> list[str] | None:
    try:
        listing = await response.json(content_type=None)
        return [str(entry["id"]) for entry in listing["data"]]
    except (ValueError, TypeError, KeyError, aiohttp.ClientError):
        return None


def _classify(error: BaseException) -> tuple[ErrorKind, str]:
    if isinstance(error, aiohttp.ClientConnectorCertificateError):
        reason = getattr(error.certificate_error, "verify_message", None) or "not trusted"
        return "connect", (
            f"TLS certificate of {error.host}:{error.port} rejected ({reason}); "
            "set verify_tls = false on the endpoint to skip the check"
        )
    if isinstance(error, aiohttp.ClientConnectorDNSError):
        return "connect", f"cannot resolve host {error.host}"
    if isinstance(error, aiohttp.ClientConnectorError):
        cause = error.os_error
        if isinstance(cause, ConnectionRefusedError):
            reason = "connection refused"
        else:
            reason = cause.strerror or str(cause) or type(cause).__name__
        return "connect", f"{reason} ({error.host}:{error.port})"
    if isinstance(error, aiohttp.InvalidURL):
        return "connect", f"invalid URL {error.url}"
    if isinstance(error, aiohttp.ClientResponseError):
        return "protocol", f"bad HTTP response: {error.message}"
    if isinstance(
        error, (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, ConnectionError)
    ):
        return "reset", f"connection lost: {_describe(error)}"
    return "protocol", _describe(error)


def _describe(error: BaseException) -> str:
    return _truncate(str(error) or type(error).__name__, BODY_EXCERPT_CHARS)


def _error_text(problem: Any) -> str:
    message = problem.get("message") if isinstance(problem, dict) else None
    return _truncate(str(message or problem), BODY_EXCERPT_CHARS)


def _excerpt(payload: bytes) -> str:
    text = payload[: CHUNK_EXCERPT_CHARS * 4].decode("utf-8", "replace")
    return repr(_truncate(text, CHUNK_EXCERPT_CHARS))


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""One simulated vLLM server: the aiohttp app, its socket, and the token schedule it streams on.

Routes: ``POST /v1/chat/completions`` (streaming and not), ``GET /v1/models``, ``GET /health``,
``GET /metrics`` (vLLM's Prometheus names), and the simulator's own ``GET /sim/stats``,
``POST /sim/faults`` (``?endpoint=ID`` targets another endpoint of the same fleet, which is how a
downed endpoint is brought back over HTTP) and ``GET /sim/gpu``.

Every chunk is scheduled on an absolute deadline (``deadline += interval``), so timer lateness
never accumulates: the stream's average rate is exact even when single wake-ups are late. A
request's schedule starts when its bytes arrived on the socket (``_ReadClock``), not when aiohttp
got round to parsing it and running the handler, and each chunk is written as soon as its timer
fires, the bookkeeping after it; ``sim.timer`` makes the timers themselves punctual.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from nvfp4_tui import __version__
from nvfp4_tui.config.profile import Endpoint, FaultSpec
from nvfp4_tui.sim.answers import Answer, ChatRequest, Piece, compose
from nvfp4_tui.sim.dataset_answers import AnswerKey
from nvfp4_tui.sim.faults import FaultPlan, draw_faults, faults_from_json, faults_to_json
from nvfp4_tui.sim.gpu import SimGpu
from nvfp4_tui.sim.kv_cache import kv_capacity_tokens
from nvfp4_tui.sim.load import DEFAULT_MAX_NUM_SEQS, EndpointLoad, PrefixCache
from nvfp4_tui.sim.metrics import SimMetrics
from nvfp4_tui.sim.quirks import ENGINE_CRASH_MESSAGE, ENGINE_EXIT_S, with_utf8_fragments
from nvfp4_tui.sim.schedule import expected_ttft_s, token_interval_s
from nvfp4_tui.sim.tokens import count_prompt_tokens
from nvfp4_tui.sim.validation import (
    BadRequest,
    check_context,
    error_response,
    parse_request,
    refuse_vllm_sampling_fields,
)
from nvfp4_tui.sim.wire import DONE, ChunkEncoder, full_response, stream_error

MAX_MODEL_LEN = 131_072
SIM_SERVER_VERSION = f"nvfp4-tui-sim {__version__}"
_ANSWER_CACHE_SIZE = 128
_SHUTDOWN_TIMEOUT_S = 1.0
_MAX_BODY_BYTES = 64 * 1024 * 1024
_LISTEN_BACKLOG = 128  # aiohttp's web.SockSite default: a fleet's workers connect all at once


def reserve_socket(host: str, port: int) -> socket.socket:
    """A bound, not yet listening socket: the port is ours, connections to it are refused."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _reset(transport: asyncio.Transport | None) -> None:
    """Abort a connection with a TCP RST, as a crashing server or a middlebox does."""
    if transport is None or transport.is_closing():
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


class _ReadClock(asyncio.Protocol):
    """Stands between a connection and aiohttp's protocol and notes when bytes last arrived.

    That is before aiohttp parses them and schedules the handler, which takes a few hundred
    microseconds on a busy loop; the handler reads ``read_at`` once the request's body is in.
    """

    __slots__ = ("_inner", "_time", "read_at")

    def __init__(self, inner: asyncio.Protocol, time: Callable[[], float]) -> None:
        self._inner = inner
        self._time = time
        self.read_at = time()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.read_at = self._time()
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


def _read_at(request: web.Request, loop: asyncio.AbstractEventLoop) -> float:
    """When the last bytes of ``request`` arrived (its body is read by now)."""
    transport = request.transport
    protocol = transport.get_protocol() if transport is not None else None
    return protocol.read_at if isinstance(protocol, _ReadClock) else loop.time()


async def _sleep_until(
    loop: asyncio.AbstractEventLoop, deadline: float, abort: asyncio.Future[None] | None = None
) -> None:
    """Sleep until ``deadline``, or until ``abort`` is done, whichever comes first."""
    if deadline <= loop.time() or (abort is not None and abort.done()):
        return
    wake: asyncio.Future[None] = loop.create_future()

    def wake_up(*_: object) -> None:
        if not wake.done():
            wake.set_result(None)

    handle = loop.call_at(deadline, wake_up)
    if abort is not None:
        abort.add_done_callback(wake_up)
    try:
        await wake
    finally:
        handle.cancel()
        if abort is not None:
            abort.remove_done_callback(wake_up)


@dataclass(frozen=True)
class _Job:
    """One admitted-to-be chat request and everything decided about it up front."""

    chat: ChatRequest
    answer: Answer
    plan: FaultPlan
    prompt_tokens: int
    arrived: float  # event loop time
    completion_id: str
    created: int = field(default_factory=lambda: int(time.time()))
    # Done when a newer request aborts this one (QuirkSpec.new_request_aborts).
    abort: asyncio.Future[None] | None = None
    cached_tokens: int = 0  # of its prompt, found in the prefix cache when it came in
    blocks: list[bytes] = field(default_factory=list)  # its prompt's (PrefixCache.blocks)

    @property
    def aborted(self) -> bool:
        return self.abort is not None and self.abort.done()


class SimEndpoint:
    """One simulated endpoint: its load, metrics, GPU and faults, served on one port."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        gpu_index: int,
        time_scale: float = 1.0,
        max_num_seqs: int = DEFAULT_MAX_NUM_SEQS,
        peers: Mapping[str, SimEndpoint] | None = None,
        answer_key: AnswerKey | None = None,
    ) -> None:
        if endpoint.sim is None:
            raise ValueError(f"endpoint {endpoint.id!r} has no [sim] table")
        if time_scale <= 0:
            raise ValueError(f"time_scale must be > 0, got {time_scale}")
        self.endpoint = endpoint
        self.spec = endpoint.sim
        self.answer_key = answer_key  # dataset prompts' right and wrong answers
        self.time_scale = time_scale
        self.faults: FaultSpec = self.spec.faults
        self.quirks = self.spec.quirks
        self.load = EndpointLoad(
            time.monotonic,
            max_num_seqs=1 if self.quirks.serial else max_num_seqs,
            kv_capacity_tokens=kv_capacity_tokens(self.spec),
        )
        self.metrics = SimMetrics(endpoint.model, self.load, self.spec.served)
        self.gpu = SimGpu(
            self.spec,
            gpu_index,
            self.load.integrals,
            time.monotonic,
            lambda: self.load.running,
            time_scale,
        )
        self._prefix_cache = PrefixCache()
        self._answers: OrderedDict[str, Answer] = OrderedDict()
        self._peers = peers if peers is not None else {endpoint.id: self}
        self._sock: socket.socket | None = None
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.Server | None = None
        self._streams: dict[asyncio.Task[Any], asyncio.Transport | None] = {}
        self._abortable: set[asyncio.Future[None]] = set()  # streams a new request aborts
        self._background: set[asyncio.Task[None]] = set()
        self._engine_dead = False  # after an ``engine_crash_at`` crash, until the server exits
        self._switch = asyncio.Lock()
        self.host = "127.0.0.1"
        self.port = 0

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def listening(self) -> bool:
        return self._runner is not None

    # -- lifecycle -------------------------------------------------------------------------

    def bind(self, host: str, port: int) -> None:
        """Reserve the port (0: the OS picks); nothing is accepted until ``start``."""
        self._sock = reserve_socket(host, port)
        self.host = host
        self.port = self._sock.getsockname()[1]

    async def start(self) -> None:
        if self._sock is None:
            self.bind(self.host, self.port)
        if not self.faults.down:
            await self._listen()

    async def close(self) -> None:
        async with self._switch:
            await self._stop_listening()
            if self._sock is not None:
                self._sock.close()
                self._sock = None

    async def set_faults(self, faults: FaultSpec) -> None:
        """Switch faults now; ``down`` stops or resumes listening on the same port."""
        async with self._switch:
            self.faults = faults
            if faults.down and self.listening:
                await self._stop_listening()
                self._sock = reserve_socket(self.host, self.port)
            elif not faults.down and not self.listening and self._sock is not None:
                self._engine_dead = False  # a server started again has a new engine
                await self._listen()

    async def _listen(self) -> None:
        app = web.Application(client_max_size=_MAX_BODY_BYTES)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/health", self._health)
        app.router.add_get("/version", self._version)
        if self.quirks.metrics:
            app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/sim/stats", self._stats)
        app.router.add_post("/sim/faults", self._set_faults)
        app.router.add_get("/sim/gpu", self._gpu)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=_SHUTDOWN_TIMEOUT_S)
        await runner.setup()
        assert self._sock is not None
        protocol = runner.server
        assert protocol is not None
        loop = asyncio.get_running_loop()
        # Not a web.SockSite: its connections would reach aiohttp's protocol without _ReadClock.
        self._listener = await loop.create_server(
            lambda: _ReadClock(protocol(), loop.time), sock=self._sock, backlog=_LISTEN_BACKLOG
        )
        self._runner = runner

    async def _stop_listening(self) -> None:
        """Close the listening socket and drop every connection, as a dying server does."""
        if self._runner is None:
            return
        for task, transport in list(self._streams.items()):
            _reset(transport)
            task.cancel()
        if self._listener is not None:
            self._listener.close()  # closes the listening socket too
            self._listener = None
        await self._runner.cleanup()
        self._runner = None
        self._sock = None

    # -- simple routes ---------------------------------------------------------------------

    async def _health(self, _: web.Request) -> web.Response:
        return web.Response(status=200)

    async def _version(self, _: web.Request) -> web.Response:
        # vLLM's shape; the text says which simulator answered, never a vLLM it is not.
        return web.json_response({"version": SIM_SERVER_VERSION})

    async def _models(self, _: web.Request) -> web.Response:
        model = self.endpoint.model
        card = {
            "id": model,
            "object": "model",
            "created": int(time.time()),
            "owned_by": "vllm",
            "root": model,
            "parent": None,
            "max_model_len": MAX_MODEL_LEN,
        }
        return web.json_response({"object": "list", "data": [card]})

    async def _metrics(self, _: web.Request) -> web.Response:
        return web.Response(
            body=self.metrics.render(), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    async def _stats(self, _: web.Request) -> web.Response:
        return web.json_response(self.load.stats())

    async def _gpu(self, _: web.Request) -> web.Response:
        return web.json_response(self.gpu.sample())

    async def _set_faults(self, request: web.Request) -> web.StreamResponse:
        target = self._peers.get(request.query.get("endpoint", self.endpoint.id))
        if target is None:
            return error_response(404, f"no simulated endpoint {request.query['endpoint']!r}")
        try:
            faults = faults_from_json(await request.json())
        except ValueError as e:  # json.JSONDecodeError is a ValueError too
            return error_response(400, str(e))
        if target is not self or not faults.down:
            await target.set_faults(faults)
            return web.json_response(faults_to_json(faults))
        # Going down: answer first, then stop listening (which drops this connection too).
        response = web.json_response(faults_to_json(faults))
        await response.prepare(request)
        await response.write_eof()
        self._go_down()
        return response

    def _go_down(self, after_s: float = 0.0) -> None:
        """Stop listening ``after_s`` from now, once the handler running now has returned (its
        connection drops)."""
        task = asyncio.create_task(self._stop_after(after_s))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _stop_after(self, after_s: float) -> None:
        await asyncio.sleep(after_s)
        await self.set_faults(replace(self.faults, down=True))

    # -- chat completions ------------------------------------------------------------------

    def _answer(self, request: ChatRequest) -> Answer:
        key = request.digest()
        answer = self._answers.get(key)
        if answer is None:
            answer = compose(self.spec, request, self.answer_key)
            if self.quirks.utf8_fragments:
                answer = with_utf8_fragments(answer)
            self._answers[key] = answer
            if len(self._answers) > _ANSWER_CACHE_SIZE:
                self._answers.popitem(last=False)
        return answer

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        number = self.load.next_request_number()
        try:
            try:
                body = await request.json()
            except ValueError:
                raise BadRequest(400, "The request body is not valid JSON.") from None
            arrived = _read_at(request, loop)
            if not self.quirks.vllm_sampling_fields:
                refused = refuse_vllm_sampling_fields(body)
                if refused is not None:
                    return refused
            chat, stream_options = parse_request(body, self.endpoint.model, self.spec.tools)
            counted = count_prompt_tokens(chat.messages, chat.tools)
            prompt_tokens = round(counted * self.quirks.token_scale)
            check_context(prompt_tokens, chat.max_tokens, MAX_MODEL_LEN)
        except BadRequest as e:
            return error_response(e.status, str(e))
        if number == self.quirks.engine_crash_at:
            return await self._crash(request, bool(body.get("stream")))
        if self._engine_dead:
            return error_response(500, ENGINE_CRASH_MESSAGE)
        abort = self._abort_streams_in_flight(loop)
        answer = self._answer(chat)
        plan = draw_faults(self.faults, self.spec.seed, number, len(answer.pieces))
        if plan.http_status is not None:
            self.load.faults["http_error"] += 1
            return error_response(plan.http_status, "Simulated server error (injected fault).")
        task = asyncio.current_task()
        assert task is not None
        self._streams[task] = request.transport
        job_id = self._completion_id(number)
        try:
            # The prefix cache is looked up as the request comes in; it holds what was
            # prefilled before (``_prefilled`` adds each prompt once its first token is out).
            blocks = PrefixCache.blocks(chat.messages)
            cached = min(self._prefix_cache.hit_tokens(blocks), prompt_tokens)
            job = _Job(
                chat,
                answer,
                plan,
                prompt_tokens,
                arrived,
                job_id,
                abort=abort,
                cached_tokens=cached,
                blocks=blocks,
            )
            if body.get("stream"):
                return await self._stream(request, job, stream_options)
            return await self._complete(request, job)
        finally:
            self._streams.pop(task, None)
            if abort is not None:
                self._abortable.discard(abort)

    def _abort_streams_in_flight(
        self, loop: asyncio.AbstractEventLoop
    ) -> asyncio.Future[None] | None:
        """With ``new_request_aborts``: end every stream in flight, and the future that ends
        this one when the next request comes."""
        if not self.quirks.new_request_aborts:
            return None
        for other in self._abortable:
            if not other.done():
                other.set_result(None)
        abort: asyncio.Future[None] = loop.create_future()
        self._abortable.add(abort)
        return abort

    async def _crash(self, request: web.Request, stream: bool) -> web.StreamResponse:
        """The engine dies under this request, as vLLM 0.32's does: one error object and [DONE]
        in a 200; then, until the API server exits ``ENGINE_EXIT_S`` later, HTTP 500 with the
        same message to every request while /health still answers 200; then nothing listens."""
        self.load.faults["engine_crash"] += 1
        self._engine_dead = True
        if not stream:
            response: web.StreamResponse = error_response(500, ENGINE_CRASH_MESSAGE)
        else:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write(stream_error(500, ENGINE_CRASH_MESSAGE) + DONE)
            await response.write_eof()
        self._go_down(ENGINE_EXIT_S / self.time_scale)
        return response

    def _completion_id(self, number: int) -> str:
        return f"chatcmpl-sim{self.spec.seed:x}{number:010x}"

    async def _schedule(self, job: _Job) -> AsyncGenerator[tuple[int, Piece], None]:
        """Admit the request, then yield each piece when it is due; bookkeeping included."""
        loop = asyncio.get_running_loop()
        scale = self.time_scale
        pieces = job.answer.pieces
        # Admitted with room in the cache for all it will hold: a full cache queues it.
        needed = job.prompt_tokens + job.answer.completion_tokens
        # vLLM's queue time starts at its scheduler, after the request was read and tokenized.
        ready = loop.time()
        concurrency, queued = await self.load.admit(needed)
        admitted = loop.time()
        held_kv = job.prompt_tokens
        self.load.kv_tokens += job.prompt_tokens
        served = False
        try:
            # TTFT counts from arrival (parsing and writing the answer included, as in vLLM);
            # a request that queued for a slot starts its prefill when it gets one.
            start = admitted if queued else job.arrived
            # With prefix caching its cached tokens are not prefilled again.
            prefilled = job.prompt_tokens - (job.cached_tokens if self.spec.prefix_caching else 0)
            deadline = start + expected_ttft_s(self.spec, prefilled, concurrency) / scale
            first_interval = token_interval_s(self.spec, concurrency, self.load.kv_tokens)
            deadline += (pieces[0].tokens - 1) * first_interval / scale
            drip_s = self.faults.drip_s / scale
            last_emit = first_emit = job.arrived
            for index, piece in enumerate(pieces):
                if index > 0:
                    interval = token_interval_s(self.spec, self.load.running, self.load.kv_tokens)
                    deadline += piece.tokens * interval / scale
                deadline += drip_s
                if index == job.plan.stall_at:
                    self.load.faults["stall"] += 1
                    deadline += self.faults.stall_s / scale
                await _sleep_until(loop, deadline, job.abort)
                if job.aborted:
                    self.load.faults["aborted"] += 1
                    return
                now = loop.time()
                try:
                    yield index, piece  # the consumer writes the chunk before any bookkeeping
                finally:
                    # Counted even when the consumer stops here (an injected reset or cutoff).
                    held_kv += piece.tokens
                    self._emitted(job, index, piece, now - last_emit)
                if index == 0:
                    first_emit = now
                last_emit = now
            served = True
            self.load.served += 1
            self.metrics.e2e_s.observe((loop.time() - job.arrived) * self.time_scale)
            self.metrics.queue_s.observe((admitted - ready) * self.time_scale)
            self.metrics.prefill_s.observe((first_emit - admitted) * self.time_scale)
            self.metrics.decode_s.observe((last_emit - first_emit) * self.time_scale)
            self.load.finished[job.answer.finish_reason] += 1
        finally:
            if not served:
                self.load.failed += 1
            self.load.release(held_kv, needed)

    def _emitted(self, job: _Job, index: int, piece: Piece, gap_s: float) -> None:
        """Account for a piece sent ``gap_s`` (real seconds) after the previous one (after
        arrival: TTFT); the histograms hold modelled seconds, as the client records them."""
        if index == 0:
            self._prefilled(job)
            self.metrics.ttft_s.observe(gap_s * self.time_scale)
        else:
            self.metrics.itl_s.observe(gap_s * self.time_scale)
        load = self.load
        load.kv_tokens += piece.tokens
        load.generation_tokens += piece.tokens
        load.running_while_decoding[load.running] += piece.tokens

    def _prefilled(self, job: _Job) -> None:
        self.load.prompt_tokens += job.prompt_tokens
        self.load.prefix_queries += job.prompt_tokens
        self.load.prefix_hits += job.cached_tokens
        self._prefix_cache.remember(job.blocks)

    async def _stream(
        self, request: web.Request, job: _Job, stream_options: dict[str, Any]
    ) -> web.StreamResponse:
        answer, plan = job.answer, job.plan
        quirks = self.quirks
        asked_usage = bool(stream_options.get("include_usage"))
        encoder = ChunkEncoder(
            job.completion_id,
            job.created,
            self.endpoint.model,
            job.prompt_tokens,
            continuous_usage=quirks.usage == "separate"
            and quirks.continuous_usage
            and bool(stream_options.get("continuous_usage_stats")),
            reasoning_model=self.spec.reasoning,
            usage_in_finish=quirks.usage == "finish" and asked_usage,
        )
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-cache",
            }
        )
        await response.prepare(request)
        last = len(answer.pieces) - 1
        generated = 0
        # A server that can abort a stream says whose it is at once (llama.cpp); vLLM sends its
        # role chunk with the first token.
        role_first = job.abort is not None
        if role_first:
            await response.write(encoder.role())
        schedule = self._schedule(job)
        try:
            async for index, piece in schedule:
                if index == plan.reset_at:
                    self.load.faults["reset"] += 1
                    _reset(request.transport)
                    return response
                if index == plan.cutoff_at:
                    self.load.faults["cutoff"] += 1
                    await response.write_eof()
                    return response
                generated += piece.tokens
                finish = answer.finish_reason if index == last else None
                frame = encoder.piece(piece, answer, generated, finish)
                if index == 0 and not role_first:
                    frame = encoder.role() + frame
                if index == plan.malformed_at:
                    self.load.faults["malformed"] += 1
                    frame = encoder.malformed(piece) + frame
                if index == last:
                    if asked_usage and quirks.usage == "separate":
                        frame += encoder.usage(answer)
                    if quirks.done:
                        frame += DONE
                await response.write(frame)
            if job.aborted and quirks.done:
                await response.write(DONE)  # no finish_reason: the answer was cut short
        except ConnectionError:
            return response  # the client went away; the schedule's cleanup has run
        finally:
            await schedule.aclose()
        await response.write_eof()
        return response

    async def _complete(self, request: web.Request, job: _Job) -> web.StreamResponse:
        plan = job.plan
        broken = plan.reset_at if plan.reset_at is not None else plan.cutoff_at
        schedule = self._schedule(job)
        try:
            async for index, _ in schedule:
                if index == broken:
                    self.load.faults["reset" if plan.reset_at is not None else "cutoff"] += 1
                    _reset(request.transport)
                    return web.Response(status=500)
        finally:
            await schedule.aclose()
        body = full_response(
            job.completion_id,
            job.created,
            self.endpoint.model,
            job.prompt_tokens,
            job.answer,
            self.spec.reasoning,
        )
        text = json.dumps(body, ensure_ascii=False)
        if plan.malformed_at is not None:
            self.load.faults["malformed"] += 1
            text = text[: len(text) // 2]
        return web.Response(text=text, content_type="application/json")

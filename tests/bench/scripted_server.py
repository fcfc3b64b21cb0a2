"""A tiny OpenAI-style server for client tests: each test scripts its replies and their timing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any
from unittest.mock import patch

from aiohttp import web

from nvfp4_tui.bench.client import EndpointClient, Timeouts
from nvfp4_tui.config.profile import ReplyLimits

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

ABORT = object()  # a script step that drops the connection without finishing the response
DONE = b"data: [DONE]\n\n"


@dataclass
class ServerLog:
    """What the server saw: request bodies and headers, and the most requests ever in flight."""

    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0


@dataclass
class Served:
    url: str
    port: int
    log: ServerLog


@asynccontextmanager
async def serve(
    chat: Handler, extra_routes: dict[str, Handler] | None = None
) -> AsyncIterator[Served]:
    """Run ``chat`` at /v1/chat/completions on 127.0.0.1 (an OS-chosen port) for the block."""
    log = ServerLog()

    async def logged_chat(request: web.Request) -> web.StreamResponse:
        log.paths.append(request.path)
        log.headers.append(dict(request.headers))
        log.bodies.append(await request.json())
        log.in_flight += 1
        log.max_in_flight = max(log.max_in_flight, log.in_flight)
        try:
            return await chat(request)
        finally:
            log.in_flight -= 1

    app = web.Application()
    app.router.add_post("/v1/chat/completions", logged_chat)
    for path, handler in (extra_routes or {}).items():
        app.router.add_get(path, handler)
    runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield Served(f"http://127.0.0.1:{port}", port, log)
    finally:
        await runner.cleanup()


@asynccontextmanager
async def serve_client(
    chat: Handler,
    extra_routes: dict[str, Handler] | None = None,
    *,
    concurrency: int = 1,
    timeouts: Timeouts | None = None,
    api_key: str | None = None,
    limits: ReplyLimits | None = None,
) -> AsyncIterator[tuple[Served, EndpointClient]]:
    """A scripted server and a client of model "m" pointed at it."""
    async with (
        serve(chat, extra_routes) as server,
        EndpointClient(
            server.url,
            "m",
            concurrency=concurrency,
            timeouts=timeouts or Timeouts(total_s=10),
            api_key=api_key,
            limits=limits,
        ) as client,
    ):
        yield server, client


class ScriptClock:
    """The client's clock in lockstep with a script (``play(..., clock=)``): it reads the offset
    of the step the server wrote last, so what the client measures is the script's own timing,
    whatever the machine's load. Each call is counted: the server writes a step only once the
    client has stamped the read of the one before."""

    READ_WAIT_S = 10.0  # for the client to read a step; past it the next step goes anyway
    POLL_S = 0.001

    def __init__(self) -> None:
        self.now = 0.0
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        return self.now

    async def read_after(self, calls: int) -> None:
        """Wait (bounded) until the client has read the clock since ``calls``."""
        for _ in range(round(self.READ_WAIT_S / self.POLL_S)):
            if self.calls > calls:
                return
            await asyncio.sleep(self.POLL_S)


@contextmanager
def script_clocked() -> Iterator[ScriptClock]:
    """A ScriptClock that the client reads for the block, in place of ``perf_counter``."""
    clock = ScriptClock()
    with (
        patch("nvfp4_tui.bench.client.endpoint.perf_counter", clock),
        patch("nvfp4_tui.bench.client.trace.perf_counter", clock),
    ):
        yield clock


def play(
    steps: list[tuple[float, Any]],
    content_type: str = "text/event-stream",
    status: int = 200,
    clock: ScriptClock | None = None,
) -> Handler:
    """A handler writing each step's bytes at its offset (s) from the request's arrival: on the
    wall clock, or with ``clock`` at once, the clock set to the offset and each write read by
    the client before the next."""

    async def handler(request: web.Request) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        start = loop.time()
        response = web.StreamResponse(status=status, headers={"Content-Type": content_type})
        await response.prepare(request)
        for at_s, data in steps:
            delay_s = start + at_s - loop.time()
            if clock is None and delay_s > 0:
                await asyncio.sleep(delay_s)
            if data is ABORT:
                assert request.transport is not None
                request.transport.abort()
                return response
            if clock is None:
                await response.write(data)
                continue
            clock.now, calls = at_s, clock.calls
            await response.write(data)
            await clock.read_after(calls)
        await response.write_eof()
        return response

    return handler


def reply(status: int, body: str, content_type: str = "application/json", delay_s: float = 0.0):
    """A handler answering one whole body, after ``delay_s``."""

    async def handler(request: web.Request) -> web.Response:
        if delay_s:
            await asyncio.sleep(delay_s)
        return web.Response(status=status, text=body, content_type=content_type)

    return handler


def chunk(
    content: str | None = None,
    *,
    role: str | None = None,
    reasoning: str | None = None,
    reasoning_key: str = "reasoning_content",
    tool_calls: list[dict[str, Any]] | None = None,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    choices: bool = True,
) -> bytes:
    """One SSE event holding a chat.completion.chunk."""
    body: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m"}
    if choices:
        delta: dict[str, Any] = {}
        if role is not None:
            delta["role"] = role
        if content is not None:
            delta["content"] = content
        if reasoning is not None:
            delta[reasoning_key] = reasoning
        if tool_calls is not None:
            delta["tool_calls"] = tool_calls
        body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    else:
        body["choices"] = []
    if usage is not None:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def usage(prompt: int, completion: int, reasoning: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if reasoning is not None:
        body["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return body

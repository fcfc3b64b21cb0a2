"""Small hostile OpenAI-style servers: each misbehaves in one way on /v1/chat/completions.

Every server answers ``/health`` and lists the model on ``/v1/models``, so a run's health check
passes and the fault shows up on the measured requests. ``serve`` runs some of them in-process on
127.0.0.1 (OS-chosen ports); ``HostileProcess`` runs them in a child process
(``python -m tests.reliability.hostile_servers NAME...``), so their CPU never shares a GIL with
the runner under test. The child prints one JSON line per server, then ``{"ready": true}``, and
stops when its stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import os
import selectors
import socket
import ssl
import struct
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any

from aiohttp import web

MODEL = "current"
HUGE_LINE_BYTES = 10 * 1024 * 1024
FOREVER_S = 30.0  # a stall "forever": far beyond any test's timeout, cancelled on disconnect
READY_TIMEOUT_S = 20.0
HTML_PAGE = (
    "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n"
    "<center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>\n"
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_SEEN: dict[int, int] = {}  # requests each app has had, for behaviours that alternate


def chunk(content: str | None = None, *, finish: str | None = None) -> bytes:
    """One SSE event holding a chat.completion.chunk."""
    delta: dict[str, Any] = {} if content is None else {"content": content}
    body = {
        "id": "chatcmpl-hostile",
        "object": "chat.completion.chunk",
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def usage_chunk(completion_tokens: int) -> bytes:
    usage = {"prompt_tokens": 10, "completion_tokens": completion_tokens}
    body = {"id": "chatcmpl-hostile", "object": "chat.completion.chunk", "choices": []}
    return b"data: " + json.dumps({**body, "usage": usage}).encode() + b"\n\n"


def good_stream(words: int = 8) -> list[bytes]:
    """A complete, well-formed stream of ``words`` content chunks."""
    pieces = [chunk(f" word{i}") for i in range(words)]
    return [*pieces, chunk(finish="stop"), usage_chunk(words), b"data: [DONE]\n\n"]


async def _open_stream(request: web.Request) -> web.StreamResponse:
    await request.read()
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    return response


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    body = {"object": "error", "message": message, "type": "error", "code": status}
    return web.json_response(body, status=status, headers=headers)


def _rst(request: web.Request) -> None:
    """Abort the connection with a TCP RST, as a crashing server does."""
    transport = request.transport
    assert transport is not None
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


# ---- the behaviours ---------------------------------------------------------------------------


async def http_429_retry_after(request: web.Request) -> web.StreamResponse:
    await request.read()
    return _error(429, "Too many requests; slow down.", {"Retry-After": "0.2"})


async def http_503_retry_after(request: web.Request) -> web.StreamResponse:
    await request.read()
    return _error(503, "Overloaded; come back later.", {"Retry-After": "0.2"})


async def stall_first_byte(request: web.Request) -> web.StreamResponse:
    await request.read()
    await asyncio.sleep(FOREVER_S)
    return _error(500, "unreachable")


async def stall_between_chunks(request: web.Request) -> web.StreamResponse:
    response = await _open_stream(request)
    for piece in good_stream()[:3]:
        await response.write(piece)
    await asyncio.sleep(FOREVER_S)
    return response


async def reset_mid_stream(request: web.Request) -> web.StreamResponse:
    response = await _open_stream(request)
    for piece in good_stream()[:3]:
        await response.write(piece)
    await asyncio.sleep(0.02)
    _rst(request)
    return response


async def malformed_chunk(request: web.Request) -> web.StreamResponse:
    response = await _open_stream(request)
    await response.write(chunk(" fine"))
    await response.write(b'data: {"choices": [{"delta": {"content": "cut here\n\n')
    for piece in good_stream()[2:]:
        await response.write(piece)
    return response


async def non_sse_200(request: web.Request) -> web.StreamResponse:
    await request.read()
    body = {
        "id": "chatcmpl-hostile",
        "object": "chat.completion",
        "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1},
    }
    return web.json_response(body)


async def html_error_page(request: web.Request) -> web.StreamResponse:
    await request.read()
    return web.Response(status=502, text=HTML_PAGE, content_type="text/html")


async def huge_line(request: web.Request) -> web.StreamResponse:
    response = await _open_stream(request)
    await response.write(chunk(" before"))
    await response.write(b"data: " + b"A" * HUGE_LINE_BYTES + b"\n\n")
    for piece in good_stream()[1:]:
        await response.write(piece)
    return response


async def never_ending(request: web.Request) -> web.StreamResponse:
    response = await _open_stream(request)
    deadline = time.monotonic() + FOREVER_S
    while time.monotonic() < deadline:
        await response.write(chunk(" more"))
        await asyncio.sleep(0.01)
    return response


async def slow_drip(request: web.Request) -> web.StreamResponse:
    """A valid stream, one byte every 20 ms: the idle timer never fires, only the total one."""
    response = await _open_stream(request)
    for byte in b"".join(good_stream(words=40)):
        await response.write(bytes([byte]))
        await asyncio.sleep(0.02)
    return response


async def health_only(request: web.Request) -> web.StreamResponse:
    """Healthy on /health and /v1/models, but hangs up on every completion."""
    await request.read()
    assert request.transport is not None
    request.transport.close()
    return web.Response(status=500)


async def echo_headers_400(request: web.Request) -> web.StreamResponse:
    await request.read()
    return web.json_response(
        {"error": {"message": f"bad request; you sent {dict(request.headers)}"}}, status=400
    )


async def echo_headers_in_answer(request: web.Request) -> web.StreamResponse:
    """A stream whose answer text quotes the request's Authorization header."""
    response = await _open_stream(request)
    await response.write(chunk(f" you said {request.headers.get('Authorization')}"))
    for piece in good_stream(words=2):
        await response.write(piece)
    return response


async def echo_headers_error_chunk(request: web.Request) -> web.StreamResponse:
    response = await _open_stream(request)
    await response.write(chunk(" start"))
    problem = {"error": {"message": f"upstream failed for {dict(request.headers)}"}}
    await response.write(b"data: " + json.dumps(problem).encode() + b"\n\n")
    return response


async def every_other_429(request: web.Request) -> web.StreamResponse:
    """Requests 1, 3, 5... get 429 (Retry-After 0.1 s); the others a good stream."""
    seen = _SEEN[id(request.app)] = _SEEN.get(id(request.app), 0) + 1
    if seen % 2:
        await request.read()
        return _error(429, "Busy; try again.", {"Retry-After": "0.1"})
    return await good(request)


LARGE_ANSWER_MIB = (1, 2, 3, 4)  # answer sizes, in turn
LARGE_ANSWER_CHUNK_BYTES = 64 * 1024


async def large_answer(request: web.Request) -> web.StreamResponse:
    """A well-formed stream whose answer is 1, 2, 3 or 4 MiB (in turn), in 64 KiB chunks."""
    seen = _SEEN[id(request.app)] = _SEEN.get(id(request.app), 0) + 1
    chunks = (
        LARGE_ANSWER_MIB[seen % len(LARGE_ANSWER_MIB)] * 1024 * 1024 // LARGE_ANSWER_CHUNK_BYTES
    )
    words = " ".join(f"river{i % 97}" for i in range(LARGE_ANSWER_CHUNK_BYTES // 8))
    piece = chunk(words[:LARGE_ANSWER_CHUNK_BYTES].ljust(LARGE_ANSWER_CHUNK_BYTES))
    response = await _open_stream(request)
    for _ in range(chunks):
        await response.write(piece)
    for tail in (chunk(finish="stop"), usage_chunk(chunks), b"data: [DONE]\n\n"):
        await response.write(tail)
    return response


async def good(request: web.Request) -> web.StreamResponse:
    response = await _open_stream(request)
    for piece in good_stream():
        await response.write(piece)
    return response


BEHAVIOURS: dict[str, Handler] = {
    handler.__name__: handler
    for handler in (
        http_429_retry_after,
        http_503_retry_after,
        stall_first_byte,
        stall_between_chunks,
        reset_mid_stream,
        malformed_chunk,
        non_sse_200,
        html_error_page,
        huge_line,
        never_ending,
        slow_drip,
        health_only,
        echo_headers_400,
        echo_headers_in_answer,
        echo_headers_error_chunk,
        every_other_429,
        good,
        large_answer,
    )
}


async def _health(_: web.Request) -> web.Response:
    return web.Response(status=200, text="ok")


async def _models(_: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model"}]})


async def _metrics_echo(request: web.Request) -> web.Response:
    # Not Prometheus text: a parser error that quotes it would quote the Authorization header.
    return web.json_response({"headers": dict(request.headers)})


def build_app(behaviour: str) -> web.Application:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", BEHAVIOURS[behaviour])
    app.router.add_get("/health", _health)
    app.router.add_get("/v1/models", _models)
    app.router.add_get("/metrics", _metrics_echo)
    return app


@asynccontextmanager
async def serve(
    behaviours: list[str],
    *,
    ssl_context: ssl.SSLContext | None = None,
    build: Callable[[str], web.Application] = build_app,
) -> AsyncIterator[dict[str, str]]:
    """Serve each behaviour (an app from ``build``) on its own 127.0.0.1 port for the block;
    yields name -> base URL."""
    runners: list[web.AppRunner] = []
    urls: dict[str, str] = {}
    scheme = "https" if ssl_context else "http"
    try:
        for name in behaviours:
            runner = web.AppRunner(
                build(name), handler_cancellation=True, shutdown_timeout=0.5, access_log=None
            )
            await runner.setup()
            runners.append(runner)
            site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)
            await site.start()
            urls[name] = f"{scheme}://127.0.0.1:{runner.addresses[0][1]}"
        yield urls
    finally:
        for runner in runners:
            await runner.cleanup()


class HostileProcess:
    """Hostile servers in a child process; a context manager that yields name -> base URL."""

    def __init__(self, behaviours: list[str]) -> None:
        self.behaviours = behaviours
        self.urls: dict[str, str] = {}
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> dict[str, str]:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.hostile_servers", *self.behaviours],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self._process.stdout is not None
        deadline = time.monotonic() + READY_TIMEOUT_S
        buffer = b""
        with selectors.DefaultSelector() as selector:
            selector.register(self._process.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not selector.select(deadline - time.monotonic()):
                    continue
                data = os.read(self._process.stdout.fileno(), 65536)
                if not data:
                    break
                buffer += data
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    record = json.loads(line)
                    if record.get("ready"):
                        return self.urls
                    self.urls[record["name"]] = record["url"]
        self.__exit__()
        raise RuntimeError("hostile servers did not come up")

    def __exit__(self, *exc_info: object) -> None:
        process = self._process
        if process is None:
            return
        assert process.stdin is not None and process.stdout is not None
        process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()


async def _serve_until_stdin_closes(behaviours: list[str]) -> None:
    loop = asyncio.get_running_loop()
    closed = asyncio.Event()

    def on_stdin() -> None:
        if not os.read(sys.stdin.fileno(), 4096):
            loop.remove_reader(sys.stdin.fileno())
            closed.set()

    async with serve(behaviours) as urls:
        for name, url in urls.items():
            print(json.dumps({"name": name, "url": url}))
        print(json.dumps({"ready": True}), flush=True)
        loop.add_reader(sys.stdin.fileno(), on_stdin)
        await closed.wait()


if __name__ == "__main__":
    with suppress(KeyboardInterrupt):
        asyncio.run(_serve_until_stdin_closes(sys.argv[1:]))

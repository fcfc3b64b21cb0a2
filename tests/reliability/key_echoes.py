"""Servers that send the caller's API key back, each where one chokepoint must catch it.

Every server quotes the request's ``Authorization`` header: in the model ids of ``/v1/models``,
in an error body where the key straddles the client's 200-character cut, in a malformed SSE
chunk where it straddles the 80-character cut, in a stream's finish_reason, in a judge's reason, and in a ``/metrics`` body
that also carries terminal escapes (OSC 52 clipboard, OSC 0 title, CSI 2J clear screen). They
listen on 127.0.0.1 on OS-chosen ports, in the test's own event loop.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager

from aiohttp import web

from nvfp4_tui.bench.client.errors import BODY_EXCERPT_CHARS, CHUNK_EXCERPT_CHARS
from tests.reliability.hostile_servers import MODEL, chunk, good_stream, serve

ESCAPES = "\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\x1b[2J\u202e"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _auth(request: web.Request) -> str:
    return request.headers.get("Authorization", "no header")


def _key(request: web.Request) -> str:
    return _auth(request).removeprefix("Bearer ")


def straddling(key: str, cut: int) -> str:
    """Padding then ``key``, so that a cut at ``cut`` characters would keep its first 15."""
    return "E" * (cut - 16) + key


async def models_echo(request: web.Request) -> web.Response:
    ids = [f"{ESCAPES}you-sent {_auth(request)}", "another"]
    return web.json_response({"object": "list", "data": [{"id": i} for i in ids]})


async def models_ok(_: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [{"id": MODEL}]})


async def error_straddling_cut(request: web.Request) -> web.Response:
    await request.read()
    body = straddling(_key(request), BODY_EXCERPT_CHARS) + " and more after it"
    return web.Response(status=400, text=body)


async def chunk_straddling_cut(request: web.Request) -> web.StreamResponse:
    await request.read()
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    await response.write(good_stream()[0])
    # Not JSON: the chunk is quoted in the error, the key across the excerpt's end.
    broken = straddling(_key(request), CHUNK_EXCERPT_CHARS - 1)
    await response.write(b"data: {" + broken.encode() + b"\n\n")
    return response


async def finish_reason_echo(request: web.Request) -> web.StreamResponse:
    await request.read()
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for piece in good_stream()[:2]:
        await response.write(piece)
    await response.write(chunk(finish=f"{ESCAPES}{_auth(request)}"))
    await response.write(b"data: [DONE]\n\n")
    return response


async def judge_echo(request: web.Request) -> web.Response:
    await request.read()
    reason = f"{ESCAPES}fine; you sent {_auth(request)}"
    verdict = json.dumps({"score": 7, "reason": reason})
    return web.json_response({"choices": [{"message": {"content": verdict}}]})


async def metrics_echo(request: web.Request) -> web.Response:
    # Not Prometheus text: the parser's error quotes the line, escapes and key included.
    return web.Response(text=f"{ESCAPES} {_auth(request)}\n")


async def _health(_: web.Request) -> web.Response:
    return web.Response(text="ok")


def build_app(chat: Handler | None, models: Handler = models_ok) -> web.Application:
    app = web.Application()
    app.router.add_get("/health", _health)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/metrics", metrics_echo)
    if chat is not None:
        app.router.add_post("/v1/chat/completions", chat)
    return app


APPS: dict[str, Callable[[], web.Application]] = {
    "models_echo": lambda: build_app(error_straddling_cut, models_echo),
    "error_cut": lambda: build_app(error_straddling_cut),
    "chunk_cut": lambda: build_app(chunk_straddling_cut),
    "finish_echo": lambda: build_app(finish_reason_echo),
    "judge": lambda: build_app(judge_echo),
}


def serve_echoes(names: list[str]) -> AbstractAsyncContextManager[dict[str, str]]:
    """Serve each named app on its own 127.0.0.1 port for the block; yields name -> base URL."""
    return serve(names, build=lambda name: APPS[name]())

"""Every failure becomes an error Measurement with the right kind, a short message, partial data."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys

import pytest
from aiohttp import web

from nvfp4_tui.bench.client import ChatRequest, EndpointClient, Measurement, Timeouts
from tests.bench.scripted_server import (
    ABORT,
    DONE,
    Handler,
    ServerLog,
    chunk,
    play,
    reply,
    serve_client,
)

HELLO = ChatRequest(messages=({"role": "user", "content": "hi"},))
SECRET = "sk-test-5ecret-value"


async def chat_once(
    handler: Handler, timeouts: Timeouts | None = None, api_key: str | None = None
) -> tuple[Measurement, ServerLog]:
    async with serve_client(handler, timeouts=timeouts, api_key=api_key) as (server, client):
        measurement = await client.chat(HELLO)
    return measurement, server.log


def assert_error(m: Measurement, kind: str, *words: str) -> None:
    assert m.status == "error" and m.error_kind == kind, (m.error_kind, m.error_message)
    assert m.error_message is not None and len(m.error_message) <= 240
    for word in words:
        assert word in m.error_message, (word, m.error_message)
    assert m.decode_tps is None and m.e2e_tps is None


async def test_refused_port_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with EndpointClient(
        f"http://127.0.0.1:{port}", "m", concurrency=1, timeouts=Timeouts(), api_key=SECRET
    ) as client:
        m = await client.chat(HELLO)
        healthy, message = await client.health()
    assert_error(m, "connect", "connection refused", str(port))
    assert m.ttft_s is None and m.tokens_out is None
    assert not healthy and message.startswith("connect: connection refused")
    assert SECRET not in message


@pytest.mark.skipif(
    sys.platform != "linux", reason="relies on Linux dropping SYNs to a full backlog"
)
async def test_connect_timeout_on_a_listener_that_never_accepts() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = [socket.socket() for _ in range(4)]
        for filler in fillers:
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", port))
        try:
            async with EndpointClient(
                f"http://127.0.0.1:{port}", "m", concurrency=1, timeouts=Timeouts(connect_s=0.3)
            ) as client:
                m = await client.chat(HELLO)
        finally:
            for filler in fillers:
                filler.close()
    assert_error(m, "timeout", "connect")
    assert 0.25 <= m.e2e_s <= 1.0


@pytest.mark.parametrize(
    ("status", "kind"), [(500, "http_5xx"), (503, "http_5xx"), (429, "http_4xx"), (404, "http_4xx")]
)
async def test_http_errors_name_the_status_and_the_start_of_the_body(
    status: int, kind: str
) -> None:
    body = "upstream said:   CUDA out of memory\n" + "x" * 5000
    m, log = await chat_once(reply(status, body, content_type="text/plain"))
    assert_error(m, kind, f"HTTP {status}", "upstream said: CUDA out of memory")
    assert len(log.bodies) == 1  # only 400/422 may be a complaint about stream_options


async def test_400_is_retried_once_on_a_fresh_client_then_reported() -> None:
    refusal = reply(400, '{"error": {"message": "messages: field required"}}')
    async with serve_client(refusal) as (server, client):
        first = await client.chat(HELLO)
        assert len(server.log.bodies) == 2
        second = await client.chat(HELLO)
    assert_error(first, "http_4xx", "HTTP 400", "messages: field required")
    assert_error(second, "http_4xx", "HTTP 400")
    assert len(server.log.bodies) == 3  # the option was not at fault, so no second retry


@pytest.mark.parametrize("headers_first", [False, True])
async def test_first_byte_timeout(headers_first: bool) -> None:
    handler = (
        play([(2.0, chunk("late", finish="stop"))])
        if headers_first
        else reply(200, "late", delay_s=2.0)
    )
    m, _ = await chat_once(handler, Timeouts(first_byte_s=0.3, total_s=10))
    assert_error(m, "timeout", "first byte")
    assert 0.25 <= m.e2e_s <= 1.0


async def test_idle_timeout_keeps_what_arrived() -> None:
    steps = [(0.0, chunk(role="assistant")), (0.05, chunk("partial")), (2.0, chunk("late"))]
    m, _ = await chat_once(play(steps), Timeouts(idle_s=0.3, total_s=10))
    assert_error(m, "timeout", "idle")
    assert m.answer_text == "partial" and m.chunks == 1
    assert m.ttft_s is not None and m.ttft_s < 0.25
    assert 0.3 <= m.e2e_s <= 1.0


async def test_total_timeout_while_tokens_keep_coming() -> None:
    steps = [(0.05 * i, chunk("t")) for i in range(40)]
    m, _ = await chat_once(play(steps), Timeouts(idle_s=5, total_s=0.4))
    assert_error(m, "timeout", "total")
    assert 3 <= m.chunks <= 9 and m.tokens_out == m.chunks and m.tokens_estimated


async def test_reset_mid_stream() -> None:
    steps = [
        (0.0, chunk(role="assistant")),
        (0.05, chunk("Hel")),
        (0.10, chunk("lo")),
        (0.15, ABORT),
    ]
    m, _ = await chat_once(play(steps))
    assert_error(m, "reset")
    assert m.answer_text == "Hello" and m.ttft_s is not None


async def test_server_closing_the_socket_before_answering() -> None:
    async def hang_up(request: web.Request) -> web.StreamResponse:
        assert request.transport is not None
        request.transport.close()
        await asyncio.sleep(0.2)
        return web.Response()

    m, _ = await chat_once(hang_up)
    assert_error(m, "reset")


async def test_malformed_json_chunk_names_the_bad_data() -> None:
    steps = [(0.0, chunk("ok")), (0.05, b'data: {"choices": [oops\n\n')]
    m, _ = await chat_once(play(steps))
    assert_error(m, "protocol", "malformed JSON", '{"choices": [oops')
    assert m.answer_text == "ok"


async def test_chunk_of_the_wrong_shape_is_a_protocol_error() -> None:
    m, _ = await chat_once(play([(0.0, b'data: {"choices": ["nope"]}\n\n')]))
    assert_error(m, "protocol", "unexpected chunk")


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/html", "<html><body>Welcome to nginx!</body></html>"),
        ("application/json", json.dumps({"choices": [{"message": {"content": "hi"}}]})),
    ],
)
async def test_200_that_is_not_an_event_stream(content_type: str, body: str) -> None:
    m, _ = await chat_once(reply(200, body, content_type=content_type))
    assert_error(m, "protocol", "text/event-stream", content_type, body[:20])


async def test_stream_closing_before_finish_reason() -> None:
    steps = [(0.0, chunk(role="assistant")), (0.05, chunk("cut")), (0.10, chunk(" short"))]
    m, _ = await chat_once(play(steps))
    assert_error(m, "truncated", "the stream closed before any finish_reason, after 2 generated")
    assert m.answer_text == "cut short" and m.chunks == 2


async def test_done_before_finish_reason_is_truncated_not_ok() -> None:
    # llama.cpp's server ends a stream a new request aborted so: a role chunk, then [DONE].
    m, _ = await chat_once(play([(0.0, chunk(role="assistant")), (0.05, DONE)]))
    assert_error(m, "truncated", "[DONE] came before any finish_reason, after 0 generated chunks")
    assert m.ttft_s is None and m.chunks == 0 and m.decode_tps is None


async def test_error_object_inside_the_stream() -> None:
    error = b'data: {"error": {"message": "engine died", "code": 500}}\n\n'
    m, _ = await chat_once(play([(0.0, chunk("a")), (0.05, error)]))
    assert_error(m, "protocol", "engine died")


async def test_ten_mib_single_line_is_read_whole() -> None:
    text = "y" * (10 * 1024 * 1024)
    steps = [(0.0, chunk(text)), (0.0, chunk(finish="stop")), (0.0, DONE)]
    m, _ = await chat_once(play(steps))
    assert m.status == "ok" and len(m.answer_text) == len(text) and m.chunks == 1


async def test_api_key_is_sent_and_never_in_messages() -> None:
    async def echo_headers(request: web.Request) -> web.Response:
        return web.Response(status=401, text=f"bad credentials: {dict(request.headers)}")

    m, log = await chat_once(echo_headers, api_key=SECRET)
    assert log.headers[0]["Authorization"] == f"Bearer {SECRET}"
    assert_error(m, "http_4xx", "HTTP 401", "***")
    assert SECRET not in m.error_message


async def test_no_authorization_header_without_a_key() -> None:
    _, log = await chat_once(play([(0.0, chunk("a", finish="stop"))]))
    assert "Authorization" not in log.headers[0]

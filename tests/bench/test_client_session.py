"""The client across requests: concurrency slots and queue time, the stream_options fallback,
health checks."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from nvfp4_tui.bench.client import ChatRequest, EndpointClient, Timeouts
from tests.bench.scripted_server import DONE, chunk, play, serve_client, usage

HELLO = ChatRequest(messages=({"role": "user", "content": "hi"},))
STREAM = [
    (0.0, chunk(role="assistant")),
    (0.10, chunk("a")),
    (0.20, chunk("b")),
    (0.30, chunk("c", finish="stop", usage=usage(3, 3))),
    (0.30, DONE),
]


async def test_concurrency_slots_bound_in_flight_and_time_the_queue() -> None:
    async with serve_client(play(STREAM), concurrency=2) as (server, client):
        requests = asyncio.gather(*(client.chat(HELLO) for _ in range(4)))
        results = await asyncio.wait_for(requests, timeout=10)
    assert server.log.max_in_flight == 2
    assert all(m.status == "ok" for m in results)
    queued = sorted(m.queue_s for m in results)
    # Two took a free slot at once; two waited for a whole stream (0.3 s) to end.
    assert queued[2] >= 0.29 and queued[1] < queued[2] / 4
    # Waiting for a slot never leaks into the request's own timings: each is its script's, give
    # or take a busy loop's delay, far less than the wait.
    leak = queued[2] / 2
    assert all(0.099 <= m.ttft_s < 0.10 + leak and 0.299 <= m.e2e_s < 0.30 + leak for m in results)


def usage_stats_refuser(log: list[dict], delay_s: float = 0.3):
    """A server like those that reject continuous_usage_stats with 400, slowly."""
    stream = play(STREAM)

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        log.append(body["stream_options"])
        if body["stream_options"].get("continuous_usage_stats"):
            await asyncio.sleep(delay_s)
            message = '{"error": {"message": "unknown field: continuous_usage_stats"}}'
            return web.Response(status=400, text=message, content_type="application/json")
        return await stream(request)

    return handler


async def test_rejected_continuous_usage_stats_falls_back_and_is_remembered() -> None:
    seen: list[dict] = []
    refusal_s = 1.0
    async with serve_client(usage_stats_refuser(seen, refusal_s)) as (_, client):
        first = await client.chat(HELLO)
        second = await client.chat(HELLO)
    assert first.status == "ok" and second.status == "ok"
    assert seen == [
        {"include_usage": True, "continuous_usage_stats": True},
        {"include_usage": True},
        {"include_usage": True},
    ]
    # Only the final attempt is timed: the refusal's second would put both past these bounds,
    # which leave half of it to a busy machine's delays.
    leak = refusal_s / 2
    assert 0.099 <= first.ttft_s < 0.10 + leak and 0.299 <= first.e2e_s < 0.30 + leak
    assert first.tokens_out == 3 and not first.itl_per_token


async def test_a_later_complaint_about_stream_options_is_retried() -> None:
    refusing = False
    stream = play(STREAM)
    seen: list[dict] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        options = (await request.json())["stream_options"]
        seen.append(options)
        if refusing and options.get("continuous_usage_stats"):
            return web.Response(status=422, text="stream_options.continuous_usage_stats: extra")
        return await stream(request)

    async with serve_client(handler) as (_, client):
        assert (await client.chat(HELLO)).status == "ok"
        refusing = True
        assert (await client.chat(HELLO)).status == "ok"
    assert [len(options) for options in seen] == [2, 2, 1]


def routes(health: int, models: int, listed: tuple[str, ...] = ("m",)):
    async def health_handler(request: web.Request) -> web.Response:
        return web.Response(status=health, text="")

    async def models_handler(request: web.Request) -> web.Response:
        if models != 200:
            return web.Response(status=models, text="nope")
        return web.json_response({"object": "list", "data": [{"id": name} for name in listed]})

    return {"/health": health_handler, "/v1/models": models_handler}


@pytest.mark.parametrize(
    ("health", "models", "listed", "healthy", "says"),
    [
        (200, 200, ("m",), True, "ok"),
        (404, 200, ("m",), True, "ok"),
        (200, 404, (), True, "ok (/health"),
        (
            200,
            200,
            ("other-a", "other-b"),
            False,
            "model 'm' is not served here; /v1/models lists other-a",
        ),
        (503, 500, (), False, "/health: HTTP 503; /v1/models: HTTP 500"),
    ],
)
async def test_health(
    health: int, models: int, listed: tuple[str, ...], healthy: bool, says: str
) -> None:
    async with serve_client(play(STREAM), routes(health, models, listed)) as (_, client):
        ok, message = await client.health()
    assert ok is healthy and message.startswith(says), message


async def test_health_timeout() -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.Response()

    slow_routes = {"/health": slow, "/v1/models": slow}
    timeouts = Timeouts(health_s=0.2)
    async with serve_client(play(STREAM), slow_routes, timeouts=timeouts) as (_, client):
        ok, message = await client.health()
    assert not ok and message == "timeout: no answer within 0.2 s"


async def test_chat_outside_async_with_is_refused() -> None:
    client = EndpointClient("http://127.0.0.1:1", "m", concurrency=1, timeouts=Timeouts())
    with pytest.raises(RuntimeError, match="async with"):
        await client.chat(HELLO)


def test_timeouts_must_be_positive() -> None:
    with pytest.raises(ValueError, match="idle_s"):
        Timeouts(idle_s=0)

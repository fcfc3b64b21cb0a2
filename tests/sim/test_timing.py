"""The token schedule as measured by a client, compared with the pure schedule functions.

Ratios with ~10% tolerances at a raised time_scale; the tight checks belong to the client's
own tests.
"""

from __future__ import annotations

import asyncio
import statistics

import aiohttp
import pytest

from nvfp4_tui.sim.schedule import decode_tps_at, expected_ttft_s
from tests.sim.conftest import FleetFactory
from tests.sim.simclient import RawStream, chat_body, make_endpoint, read_sse

SCALE = 10.0
CURVE = ((1, 1.0), (2, 0.85), (4, 0.7))
# TTFTs of ~150 ms and decode windows of ~0.5 s (real time) keep a loaded machine's jitter of a
# few milliseconds well inside the tolerances.
# The same prompt is sent again and again: without prefix caching each TTFT is the schedule's
# full prefill (test_prefix_caching_prefills_only_the_uncached_tokens checks the cache's share).
SPEC = {
    "decode_tps": 40.0,
    "ttft_s": 1.2,
    "prefill_tps": 1000.0,
    "concurrency_curve": CURVE,
    "prefix_caching": False,
}
PROMPT = "Write an essay on the history of timekeeping and railway schedules. " * 8


def _decode_rate(stream: RawStream, low: float = 0.2, high: float = 0.8) -> float:
    """Tokens per second between the ``low`` and ``high`` shares of the stream's tokens."""
    points = stream.generated()
    total = points[-1][1]
    start = next(p for p in points if p[1] >= total * low)
    end = next(p for p in points if p[1] >= total * high)
    return (end[1] - start[1]) / (end[0] - start[0])


@pytest.mark.slow  # wall-clock TTFT and decode within 10 %: 1.20 at load 10 on two cores
async def test_ttft_and_decode_rate_at_concurrency_1(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    endpoint = make_endpoint(**SPEC)
    fleet = await fleet_of(endpoint, time_scale=SCALE)
    url = fleet.urls["sim0"]
    await read_sse(session, url, chat_body("warm up the connection", max_tokens=2))
    ttft_ratios, rate_ratios = [], []
    for _ in range(3):
        stream = await read_sse(session, url, chat_body(PROMPT, max_tokens=120))
        prompt_tokens = stream.usage["prompt_tokens"]
        assert prompt_tokens > 150  # prefill is a visible part of the TTFT
        expected = expected_ttft_s(endpoint.sim, prompt_tokens, 1) / SCALE
        ttft_ratios.append(stream.ttft_s / expected)
        rate_ratios.append(
            _decode_rate(stream, 0.0, 1.0) / (decode_tps_at(endpoint.sim, 1) * SCALE)
        )
    assert statistics.median(ttft_ratios) == pytest.approx(1.0, abs=0.1)
    assert statistics.median(rate_ratios) == pytest.approx(1.0, abs=0.1)


async def test_decode_rate_and_in_flight_counts_at_concurrency_4(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    endpoint = make_endpoint(**SPEC)
    fleet = await fleet_of(endpoint, time_scale=SCALE / 2)
    url = fleet.urls["sim0"]
    body = chat_body(PROMPT, max_tokens=160)
    streams = await asyncio.gather(*(read_sse(session, url, body) for _ in range(4)))
    expected = decode_tps_at(endpoint.sim, 4) * SCALE / 2
    ratios = [_decode_rate(s) / expected for s in streams]
    assert statistics.median(ratios) == pytest.approx(1.0, abs=0.1)
    # the first admitted request saw c=1, the last c=4; their TTFTs follow the curve
    ttfts = sorted(s.ttft_s for s in streams)
    prompt_tokens = streams[0].usage["prompt_tokens"]
    assert ttfts[-1] / ttfts[0] == pytest.approx(
        expected_ttft_s(endpoint.sim, prompt_tokens, 4)
        / expected_ttft_s(endpoint.sim, prompt_tokens, 1),
        rel=0.1,
    )
    async with session.get(f"{url}/sim/stats") as reply:
        stats = await reply.json()
    assert stats["in_flight_at_start"] == {"1": 1, "2": 1, "3": 1, "4": 1}
    assert stats["max_in_flight"] == 4 and stats["in_flight"] == 0
    decoding = stats["in_flight_while_decoding"]
    assert decoding["4"] >= 0.8 * sum(decoding.values())
    assert sum(decoding.values()) == sum(s.usage["completion_tokens"] for s in streams)


async def test_a_closed_loop_keeps_exactly_n_in_flight(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(decode_tps=200.0, ttft_s=0.05), time_scale=SCALE)
    url = fleet.urls["sim0"]

    async def worker() -> None:
        for _ in range(3):
            await read_sse(session, url, chat_body(max_tokens=100))

    await asyncio.gather(worker(), worker())
    async with session.get(f"{url}/sim/stats") as reply:
        stats = await reply.json()
    assert stats["max_in_flight"] == 2 and stats["requests_served"] == 6
    assert set(stats["in_flight_at_start"]) <= {"1", "2"}
    decoding = stats["in_flight_while_decoding"]
    assert decoding.get("2", 0) > decoding.get("1", 0)


@pytest.mark.slow  # a wall-clock comparison: the slow run has the box alone
async def test_prefix_caching_prefills_only_the_uncached_tokens(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    endpoint = make_endpoint(
        **{**SPEC, "prefix_caching": True, "ttft_s": 0.2, "prefill_tps": 100.0}
    )
    fleet = await fleet_of(endpoint, time_scale=SCALE)
    url = fleet.urls["sim0"]
    first = await read_sse(session, url, chat_body(PROMPT, max_tokens=4))
    again = await read_sse(session, url, chat_body(PROMPT, max_tokens=4))
    prompt_tokens = first.usage["prompt_tokens"]
    cached = prompt_tokens // 16 * 16  # its whole blocks (the prompt is one message)
    assert again.usage["prompt_tokens"] == prompt_tokens
    # A floor that no scheduling can break: the repeat is prefilled for its tail alone, so it
    # is due sooner by the cached tokens' prefill; the first is due no sooner than its full one.
    assert first.ttft_s >= expected_ttft_s(endpoint.sim, prompt_tokens) / SCALE - 0.005
    saved_s = (
        expected_ttft_s(endpoint.sim, prompt_tokens)
        - expected_ttft_s(endpoint.sim, prompt_tokens - cached)
    ) / SCALE
    assert cached > 100 and saved_s > 0.05
    assert again.ttft_s < first.ttft_s - saved_s / 2

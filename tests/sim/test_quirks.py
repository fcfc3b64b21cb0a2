"""Each real server's quirk, played by the simulator, and the row the tool records for it.

The quirks are those seen on vLLM 0.32, ``transformers serve`` and llama.cpp's server
(``QuirkSpec``); every test reads the reply with the benchmark's own client, as a run would, and
checks its Measurement (a request row less its context) against the server's own counters.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import aiohttp
import pytest

from nvfp4_tui.bench.client import ChatRequest, EndpointClient, Measurement, Timeouts
from nvfp4_tui.config.profile import Endpoint, QuirkSpec, load_profile
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.sim.quirks import ENGINE_CRASH_MESSAGE
from nvfp4_tui.telemetry.prometheus import PrometheusScraper
from tests.sim.conftest import FleetFactory
from tests.sim.simclient import ESSAY_PROMPT, chat_body, make_endpoint, read_sse

SCALE = 50.0
ESSAY = ChatRequest(
    messages=({"role": "user", "content": ESSAY_PROMPT},), max_tokens=300, temperature=0.3
)
BOUND_S = 30.0
POLL_S = 0.01


def quirky(**quirks: object) -> Endpoint:
    return make_endpoint(quirks=QuirkSpec(**quirks))  # type: ignore[arg-type]


def client(fleet: SimFleet, concurrency: int = 1) -> EndpointClient:
    return EndpointClient(
        fleet.urls["sim0"], "current", concurrency=concurrency, timeouts=Timeouts(total_s=20.0)
    )


async def stats(session: aiohttp.ClientSession, fleet: SimFleet) -> dict:
    async with session.get(f"{fleet.urls['sim0']}/sim/stats") as reply:
        return await reply.json()


async def one_row(fleet: SimFleet) -> Measurement:
    async with client(fleet) as c:
        return await c.chat(ESSAY)


async def test_vllm_usage_in_a_chunk_of_its_own_after_a_role_chunk_with_empty_content(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(quirky(), time_scale=SCALE)
    raw = await read_sse(session, fleet.urls["sim0"], chat_body(continuous=False))
    assert raw.chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert raw.chunks[-1]["choices"] == [] and "usage" in raw.chunks[-1] and raw.done
    m = await one_row(fleet)
    sent = (await stats(session, fleet))["generation_tokens"] - raw.usage["completion_tokens"]
    assert m.status == "ok" and not m.tokens_estimated and m.tokens_out == sent
    assert m.ttft_s is not None and m.ttft_s == m.ttfa_s  # the role chunk is not the first token


async def test_usage_beside_finish_reason(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(quirky(usage="finish"), time_scale=SCALE)
    m = await one_row(fleet)
    raw = await read_sse(session, fleet.urls["sim0"], chat_body())
    last = raw.chunks[-1]
    assert last["choices"][0]["finish_reason"] and "usage" in last
    assert all("usage" not in c for c in raw.chunks[:-1]) and raw.done
    sent = (await stats(session, fleet))["generation_tokens"] - last["usage"]["completion_tokens"]
    assert m.status == "ok" and not m.tokens_estimated and m.tokens_out == sent


async def test_no_usage_at_all_is_an_estimate_marked_so(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(quirky(usage="none"), time_scale=SCALE)
    m = await one_row(fleet)
    assert m.status == "ok" and m.tokens_estimated and m.tokens_in is None
    # A chunk of two or three tokens counts once: without the server's count, an estimate.
    assert m.tokens_out == m.chunks <= (await stats(session, fleet))["generation_tokens"]


async def test_utf8_fragments_count_toward_the_estimate_but_not_the_timings(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(quirky(usage="none", utf8_fragments=True), time_scale=SCALE)
    m = await one_row(fleet)
    sent = (await stats(session, fleet))["generation_tokens"]
    assert m.status == "ok" and m.tokens_estimated and m.tokens_out is not None
    assert m.chunks < sent  # empty chunks came, and the test would fail if they were skipped
    assert abs(m.tokens_out - sent) <= 0.01 * sent
    assert m.ttft_s == m.ttfa_s and not m.itl_per_token  # timed on chunks with text alone
    assert m.decode_tps is not None


async def test_no_done_ends_at_the_close_with_the_answer_whole(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(quirky(done=False, continuous_usage=False), time_scale=SCALE)
    raw = await read_sse(session, fleet.urls["sim0"], chat_body())
    assert not raw.done and raw.chunks[-1]["choices"] == []
    assert "completion_tokens" not in raw.chunks[1].get("usage", {})  # no per-chunk usage
    m = await one_row(fleet)
    sent = (await stats(session, fleet))["generation_tokens"] - raw.usage["completion_tokens"]
    assert m.status == "ok" and m.error_kind is None and m.finish_reason == "stop"
    assert m.tokens_out == sent and not m.tokens_estimated


async def test_no_metrics_is_a_404_the_scraper_names(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(quirky(metrics=False), time_scale=SCALE)
    endpoint = make_endpoint().with_url(fleet.urls["sim0"])
    scraper = PrometheusScraper([endpoint], session)
    assert await scraper.scrape_once() == []
    assert scraper.state("sim0") == "no_metrics"
    m = await one_row(fleet)
    assert m.status == "ok"


@pytest.mark.slow  # a queued TTFT over twice a wall-clock e2e: 0.248 vs 2 x 0.244 at load 10
async def test_one_request_at_a_time_queues_the_others(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(quirky(serial=True), time_scale=SCALE)
    async with client(fleet, concurrency=4) as c:
        rows = await asyncio.gather(*(c.chat(ESSAY) for _ in range(4)))
    assert [m.status for m in rows] == ["ok"] * 4
    assert (await stats(session, fleet))["max_in_flight"] == 1
    ttfts = sorted(m.ttft_s or 0.0 for m in rows)
    first_e2e = min(m.e2e_s or 0.0 for m in rows)
    # The last one in waited at the server for the three before it: client queue_s says 0.
    assert ttfts[-1] > 2 * first_e2e and max(m.queue_s for m in rows) < first_e2e


async def test_an_engine_crash_is_an_error_row_with_its_message_then_the_server_is_gone(
    fleet_of: FleetFactory,
) -> None:
    fleet = await fleet_of(quirky(engine_crash_at=1), time_scale=SCALE)
    async with client(fleet) as c:
        m = await c.chat(ESSAY)
        assert m.status == "error" and m.error_kind == "protocol" and m.http_status == 200
        assert ENGINE_CRASH_MESSAGE in (m.error_message or "")
        async with asyncio.timeout(BOUND_S):
            while (health := await c.health())[0]:
                await asyncio.sleep(POLL_S)
    assert "connect" in health[1]


async def test_a_new_request_aborts_the_stream_in_flight(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    # A slow prefill keeps the first request in flight, without a token, when the second comes.
    endpoint = quirky(new_request_aborts=True)
    assert endpoint.sim is not None
    endpoint = replace(endpoint, sim=replace(endpoint.sim, ttft_s=2.0))
    fleet = await fleet_of(endpoint, time_scale=1.0)
    url = fleet.urls["sim0"]
    async with client(fleet, concurrency=2) as c:
        first = asyncio.create_task(c.chat(ESSAY))
        async with asyncio.timeout(BOUND_S):
            while (await stats(session, fleet))["in_flight"] < 1:
                await asyncio.sleep(POLL_S)
        second = asyncio.create_task(read_sse(session, url, chat_body(max_tokens=4)))
        aborted = await first
        await second
    assert aborted.status == "error" and aborted.error_kind == "truncated"
    assert aborted.chunks == 0 and aborted.ttft_s is None and aborted.answer_text == ""
    assert aborted.finish_reason is None and "[DONE]" in (aborted.error_message or "")
    assert (await stats(session, fleet))["faults"] == {"aborted": 1}


def test_quirks_are_read_from_the_profile_and_bad_ones_named(tmp_path) -> None:
    path = tmp_path / "profile.toml"
    body = """
[run]
suites = ["english"]
[[endpoint]]
id = "llamacpp"
url = "http://127.0.0.1:1"
model = "current"
[endpoint.sim]
decode_tps = 50.0
[endpoint.sim.quirks]
usage = "none"
new_request_aborts = true
utf8_fragments = true
"""
    path.write_text(body)
    (endpoint,) = load_profile(path).endpoints
    assert endpoint.sim is not None
    assert endpoint.sim.quirks == QuirkSpec(
        usage="none", new_request_aborts=True, utf8_fragments=True
    )
    path.write_text(body.replace('usage = "none"', 'usage = "sometimes"\nengine_crash = 1'))
    with pytest.raises(Exception) as raised:
        load_profile(path)
    message = str(raised.value)
    assert "quirks.usage" in message and '"separate", "finish" or "none"' in message
    assert "engine_crash" in message


async def test_transformers_serve_refuses_vllms_sampling_fields_with_422(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(quirky(vllm_sampling_fields=False), time_scale=SCALE)
    url = f"{fleet.urls['sim0']}/v1/chat/completions"
    async with session.post(url, json={**chat_body(), "min_tokens": 8, "top_k": 5}) as reply:
        assert reply.status == 422
        assert await reply.json() == {
            "detail": "Unexpected fields in the request: {'min_tokens', 'top_k'}"
        }
    m = await one_row(fleet)  # OpenAI's fields alone: answered
    assert m.status in ("ok", "incomplete")

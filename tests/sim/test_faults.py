"""Every injected fault shows up the way a client would meet it on a real server."""

from __future__ import annotations

import asyncio
import json
from itertools import pairwise

import aiohttp
import pytest

from nvfp4_tui.config.profile import FaultSpec
from nvfp4_tui.sim.faults import draw_faults, faults_from_json
from tests.sim.conftest import FleetFactory
from tests.sim.simclient import chat_body, faults, make_endpoint, read_sse

SCALE = 50.0


async def _stats(session: aiohttp.ClientSession, url: str) -> dict:
    async with session.get(f"{url}/sim/stats") as reply:
        return await reply.json()


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_http_errors_carry_vllm_error_json(
    fleet_of: FleetFactory, session: aiohttp.ClientSession, status: int
) -> None:
    endpoint = make_endpoint(faults=faults(http_status=status, error_rate=1.0))
    fleet = await fleet_of(endpoint, time_scale=SCALE)
    async with session.post(f"{fleet.urls['sim0']}/v1/chat/completions", json=chat_body()) as r:
        body = await r.json()
        assert r.status == status
        assert (r.headers.get("Retry-After") is not None) == (status == 429)
    error = body["error"]  # vLLM 0.32's shape
    assert error["code"] == status and error["param"] is None and error["message"]
    assert (await _stats(session, fleet.urls["sim0"]))["faults"] == {"http_error": 1}


async def test_down_refuses_connections_but_keeps_its_port(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(
        make_endpoint("up"), make_endpoint("off", gpu=1, faults=faults(down=True))
    )
    assert set(fleet.urls) == {"up", "off"} and fleet.urls["up"] != fleet.urls["off"]
    with pytest.raises(aiohttp.ClientConnectorError):
        await session.get(f"{fleet.urls['off']}/health")
    # brought back through a sibling, on the same port
    async with session.post(f"{fleet.urls['up']}/sim/faults?endpoint=off", json={}) as reply:
        assert reply.status == 200 and (await reply.json())["down"] is False
    async with session.get(f"{fleet.urls['off']}/health") as reply:
        assert reply.status == 200


async def test_switching_down_at_run_time_drops_streams_and_refuses(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(decode_tps=20.0), time_scale=2.0)
    url = fleet.urls["sim0"]
    streaming = asyncio.create_task(read_sse(session, url, chat_body(max_tokens=400)))
    await asyncio.sleep(0.3)
    # Its own pool: the switch drops every connection to the endpoint.
    async with (
        aiohttp.ClientSession() as other,
        other.post(f"{url}/sim/faults", json={"down": True}) as reply,
    ):
        assert reply.status == 200 and (await reply.json())["down"] is True
    stream = await asyncio.wait_for(streaming, 10)
    assert stream.error is not None and not stream.done
    for _ in range(50):  # the switch completes just after the reply
        if not fleet.servers["sim0"].listening:
            break
        await asyncio.sleep(0.02)
    with pytest.raises(aiohttp.ClientConnectorError):
        await session.get(f"{url}/health")
    await fleet.set_faults("sim0", FaultSpec())
    async with session.get(f"{url}/health") as reply:
        assert reply.status == 200


async def test_stall_pauses_mid_stream_then_finishes(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    endpoint = make_endpoint(decode_tps=200.0, faults=faults(stall_s=10.0, stall_rate=1.0))
    fleet = await fleet_of(endpoint, time_scale=SCALE)
    stream = await read_sse(session, fleet.urls["sim0"], chat_body(max_tokens=80))
    gaps = [b - a for a, b in pairwise(stream.times)]
    assert stream.done and max(gaps) >= 10.0 / SCALE * 0.9
    assert max(gaps) == max(gaps[1:-1])  # mid-stream, not before the first chunk


async def test_reset_aborts_the_connection_mid_stream(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(faults=faults(reset_rate=1.0)), time_scale=SCALE)
    url = fleet.urls["sim0"]
    stream = await read_sse(session, url, chat_body(max_tokens=80))
    assert stream.error is not None and not stream.done and stream.lines
    stats = await _stats(session, url)
    assert stats["faults"] == {"reset": 1} and stats["requests_failed"] == 1
    assert stats["in_flight"] == 0


async def test_malformed_chunk_is_not_json_and_the_rest_is(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(faults=faults(malformed_rate=1.0)), time_scale=SCALE)
    stream = await read_sse(session, fleet.urls["sim0"], chat_body(max_tokens=80))
    bad = []
    for line in stream.lines[:-1]:
        try:
            json.loads(line)
        except ValueError:
            bad.append(line)
    assert len(bad) == 1 and stream.done


async def test_cutoff_ends_cleanly_without_finish_reason_or_done(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(faults=faults(cutoff_rate=1.0)), time_scale=SCALE)
    stream = await read_sse(session, fleet.urls["sim0"], chat_body(max_tokens=80))
    assert stream.error is None and stream.lines and not stream.done
    assert stream.finish_reason is None


async def test_slow_drip_adds_a_delay_before_every_chunk(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fast = await fleet_of(make_endpoint(decode_tps=500.0), time_scale=SCALE)
    slow = await fleet_of(
        make_endpoint(decode_tps=500.0, faults=faults(drip_s=1.0)), time_scale=SCALE
    )
    a = await read_sse(session, fast.urls["sim0"], chat_body(max_tokens=30))
    b = await read_sse(session, slow.urls["sim0"], chat_body(max_tokens=30))
    chunks = len(b.generated())
    assert b.times[-1] - b.sent_at >= (a.times[-1] - a.sent_at) + chunks * 1.0 / SCALE * 0.9


async def test_faults_switch_at_run_time_and_bad_bodies_are_refused(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(), time_scale=SCALE)
    url = fleet.urls["sim0"]
    async with session.post(f"{url}/sim/faults", json={"cutoff_rate": 1.0}) as reply:
        assert reply.status == 200
    assert not (await read_sse(session, url, chat_body(max_tokens=40))).done
    async with session.post(f"{url}/sim/faults", json={}) as reply:
        assert reply.status == 200
    assert (await read_sse(session, url, chat_body(max_tokens=40))).done
    for bad in ({"reset_rate": 2}, {"bogus": 1}, {"down": "yes"}, [1], {"http_status": 418}):
        async with session.post(f"{url}/sim/faults", json=bad) as reply:
            assert reply.status == 400, bad
            assert (await reply.json())["error"]["code"] == 400


def test_fault_draws_are_deterministic_and_follow_the_rates() -> None:
    spec = FaultSpec(error_rate=0.5, http_status=503, reset_rate=0.25)
    plans = [draw_faults(spec, 1, n, 100) for n in range(400)]
    assert plans == [draw_faults(spec, 1, n, 100) for n in range(400)]
    errors = sum(p.http_status == 503 for p in plans)
    resets = sum(p.reset_at is not None for p in plans)
    assert 150 <= errors <= 250 and 60 <= resets <= 140
    assert all(1 <= p.reset_at <= 98 for p in plans if p.reset_at is not None)
    assert plans != [draw_faults(spec, 2, n, 100) for n in range(400)]


def test_fault_json_round_trip() -> None:
    spec = faults_from_json({"http_status": 429, "error_rate": 0.1, "down": False})
    assert spec == FaultSpec(http_status=429, error_rate=0.1)

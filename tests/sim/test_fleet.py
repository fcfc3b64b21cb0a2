"""SimFleet's ports and endpoints, serve_forever's failure path, non-streaming faults."""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path

import aiohttp
import pytest

from nvfp4_tui.config.profile import Profile, RunPlan
from nvfp4_tui.sim.fleet import SimFleet, serve_forever
from tests.sim.conftest import FleetFactory
from tests.sim.simclient import chat_body, faults, make_endpoint


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_only_simulated_endpoints_are_served_and_urls_are_rewritten(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    real = replace(make_endpoint("real", gpu=1), sim=None, url="http://10.0.0.1:8000")
    fleet = await fleet_of(make_endpoint("a"), real, make_endpoint("b", gpu=2))
    assert list(fleet.urls) == ["a", "b"]
    assert [e.id for e in fleet.endpoints] == ["a", "real", "b"]
    assert fleet.endpoints[1] == real
    assert [e.url for e in fleet.endpoints if e.sim] == [fleet.urls["a"], fleet.urls["b"]]
    for url in fleet.urls.values():
        async with session.get(f"{url}/health") as reply:
            assert reply.status == 200


async def test_profile_ports_serve_where_the_profile_says(
    session: aiohttp.ClientSession,
) -> None:
    port = _free_port()
    endpoint = replace(make_endpoint(), url=f"http://127.0.0.1:{port}")
    async with SimFleet([endpoint], profile_ports=True) as fleet:
        assert fleet.urls == {"sim0": f"http://127.0.0.1:{port}"}
        async with session.get(f"{fleet.urls['sim0']}/health") as reply:
            assert reply.status == 200


def test_serve_forever_reports_a_taken_port(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        profile = Profile(Path("x.toml"), RunPlan("x", ()), (make_endpoint(),))
        assert serve_forever(profile, port_base=port) == 1
    assert "x.toml: cannot serve the simulated fleet" in capsys.readouterr().err


def test_serve_forever_needs_a_simulated_endpoint(capsys: pytest.CaptureFixture[str]) -> None:
    profile = Profile(Path("y.toml"), RunPlan("y", ()), (replace(make_endpoint(), sim=None),))
    assert serve_forever(profile, port_base=0) == 2
    assert "y.toml" in capsys.readouterr().err


@pytest.mark.parametrize("fault", ["reset_rate", "cutoff_rate"])
async def test_non_streaming_request_is_dropped_by_a_mid_stream_fault(
    fleet_of: FleetFactory, session: aiohttp.ClientSession, fault: str
) -> None:
    fleet = await fleet_of(make_endpoint(faults=faults(**{fault: 1.0})), time_scale=50.0)
    with pytest.raises(aiohttp.ClientError):
        async with session.post(
            f"{fleet.urls['sim0']}/v1/chat/completions", json=chat_body(stream=False)
        ) as reply:
            await reply.read()


async def test_non_streaming_malformed_body_is_not_json(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(faults=faults(malformed_rate=1.0)), time_scale=50.0)
    async with session.post(
        f"{fleet.urls['sim0']}/v1/chat/completions", json=chat_body(stream=False)
    ) as reply:
        assert reply.status == 200
        with pytest.raises(ValueError):
            await reply.json()

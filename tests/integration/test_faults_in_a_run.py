"""Each simulator fault gives error rows of the right kind on its endpoint only; the rest finish."""

from __future__ import annotations

import asyncio
from pathlib import Path

import polars as pl
import pytest

from nvfp4_tui.bench.session import Session
from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.events import EndpointStatus
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.store.reader import open_snapshot
from tests.integration.fleet_files import (
    endpoint_toml,
    write_profile,
    write_suite,
    write_tool_suite,
)

FAULTY = {
    # endpoint id: (fault table, expected error kind on every request)
    "e500": ("http_status = 500\nerror_rate = 1.0", "http_5xx"),
    "e429": ("http_status = 429\nerror_rate = 1.0", "http_4xx"),
    "ereset": ("reset_rate = 1.0", "reset"),
    "emalformed": ("malformed_rate = 1.0", "protocol"),
    "ecutoff": ("cutoff_rate = 1.0", "truncated"),
    "estall": ("stall_s = 60.0\nstall_rate = 1.0", "timeout"),
}


@pytest.mark.slow  # a run of every simulated fault
def test_faults_stay_on_their_endpoint(tmp_path: Path) -> None:
    suites_dir = tmp_path / "suites"
    write_suite(suites_dir, "essay", max_tokens=24)
    write_tool_suite(suites_dir)
    endpoints = [endpoint_toml("clean", 0, decode_tps=400.0, ttft_s=0.05)]
    endpoints += [
        endpoint_toml(eid, i + 1, decode_tps=400.0, ttft_s=0.05, faults=faults)
        for i, (eid, (faults, _)) in enumerate(FAULTY.items())
    ]
    endpoints.append(endpoint_toml("edown", 8, faults="down = true"))
    endpoints.append(
        endpoint_toml("notools", 9, decode_tps=400.0, ttft_s=0.05, sim_extra="tools = false")
    )
    path = write_profile(
        tmp_path, endpoints, suites=["essay", "tools"], concurrency=[2], requests=2, timeout_s=3.0
    )
    profile = load_profile(path)
    suites = load_suites(profile.suite_dirs, profile.run.suites)

    async def run() -> Path:
        async with SimFleet(profile.endpoints, time_scale=10.0) as fleet:
            live = with_urls(profile, fleet.urls)
            session = Session(live, suites, tmp_path / "out")
            session.open()
            result = await session.run()
            assert result.status == "complete"
            return result.snapshot

    snapshot = open_snapshot(asyncio.run(run()))
    assert snapshot.status == "complete"
    rows = snapshot.requests()
    per_endpoint = {
        eid: frame for (eid,), frame in rows.group_by("endpoint_id", maintain_order=True)
    }

    clean = per_endpoint["clean"]
    assert clean.height == 4 and clean.filter(pl.col("status") == "error").is_empty()
    for eid, (_, kind) in FAULTY.items():
        frame = per_endpoint[eid]
        assert frame.height == 4, eid  # the plan finished: every request has its row
        assert frame.get_column("status").to_list() == ["error"] * 4, eid
        assert set(frame.get_column("error_kind")) == {kind}, eid
        assert frame.get_column("score_heuristic").null_count() == 4  # no score, never 0
    # Down from the start: reported, its first request tried once and recorded, the rest skipped.
    edown = per_endpoint["edown"]
    assert edown.get_column("error_kind").to_list() == ["connect"]
    statuses = [
        e for e in snapshot.events() if isinstance(e, EndpointStatus) and e.endpoint_id == "edown"
    ]
    assert statuses[-1].status == "down"

    notools = per_endpoint["notools"]
    tool_rows = notools.filter(pl.col("suite") == "tools")
    assert set(tool_rows.get_column("error_kind")) == {"http_4xx"}
    assert "400" in tool_rows.get_column("error_message")[0]
    assert (
        notools.filter(pl.col("suite") == "essay").get_column("status").to_list() != ["error"] * 2
    )


def test_server_metrics_are_scraped_live_during_a_run(tmp_path: Path) -> None:
    write_suite(tmp_path / "suites", "essay", max_tokens=200)
    path = write_profile(
        tmp_path,
        [endpoint_toml("e0", 0, decode_tps=100.0, ttft_s=0.05)],
        suites=["essay"],
        concurrency=[4],
        requests=8,
    )
    profile = load_profile(path)
    suites = load_suites(profile.suite_dirs, profile.run.suites)

    async def run() -> Path:
        async with SimFleet(profile.endpoints) as fleet:
            session = Session(with_urls(profile, fleet.urls), suites, tmp_path / "out")
            session.open()
            return (await session.run()).snapshot

    server = open_snapshot(asyncio.run(run())).server()
    assert server.height >= 2  # scraped at 1 Hz over a run of a few seconds
    assert server.get_column("requests_running").max() >= 1
    assert server.get_column("generation_tps").drop_nulls().max() > 0

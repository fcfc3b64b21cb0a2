"""The warm-up probe is recorded apart: on the wire and in the server's counters, in no row.

A reconciliation of a server's token counters with a run needs every request the tool sent, and
a probe that failed (a server that dies on its first request) must be seen, as the endpoint's
first error, carrying the server's message.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import polars as pl

from nvfp4_tui.bench.session import Session
from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.events import ProbeFinished
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.store.reader import Snapshot, open_snapshot
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite

REQUESTS = 2


def _run(tmp_path: Path, faults: str = "") -> Snapshot:
    write_suite(tmp_path / "suites", "essay", max_tokens=24)
    endpoint = endpoint_toml("e", 0, decode_tps=400.0, ttft_s=0.02, faults=faults)
    path = write_profile(
        tmp_path,
        [endpoint],
        suites=["essay"],
        concurrency=[1],
        requests=REQUESTS,
        timeout_s=5.0,
        warmup=True,
    )
    profile = load_profile(path)
    suites = load_suites(profile.suite_dirs, profile.run.suites)

    async def run() -> Path:
        async with SimFleet(profile.endpoints, time_scale=10.0) as fleet:
            session = Session(with_urls(profile, fleet.urls), suites, tmp_path / "out")
            session.open()
            return (await session.run()).snapshot

    return open_snapshot(asyncio.run(run()))


def _probes(snapshot: Snapshot) -> list[ProbeFinished]:
    return [e for e in snapshot.events() if isinstance(e, ProbeFinished)]


def test_a_probe_is_recorded_apart_from_the_rows(tmp_path: Path) -> None:
    snapshot = _run(tmp_path)
    (probe,) = _probes(snapshot)
    assert probe.endpoint_id == "e" and probe.purpose == "warmup"
    assert probe.http_status == 200 and probe.status != "error"
    assert probe.tokens_in and probe.tokens_out  # what the server's counters also hold
    rows = snapshot.requests()
    assert rows.height == REQUESTS  # the probe is in no row, so in no figure
    assert rows.get_column("request_index").min() == 0


def test_a_failed_probe_is_the_endpoints_first_error(tmp_path: Path) -> None:
    snapshot = _run(tmp_path, faults="http_status = 400\nerror_rate = 1.0")
    (probe,) = _probes(snapshot)
    assert probe.status == "error" and probe.error_kind == "http_4xx"
    assert probe.error_message and "400" in probe.error_message
    rows = snapshot.requests().sort("t")
    assert rows.height == REQUESTS + 1
    first = rows.row(0, named=True)
    assert first["request_index"] == -1 and first["status"] == "error"
    assert first["error_message"] == probe.error_message
    assert rows.filter(pl.col("status") == "error").height == REQUESTS + 1

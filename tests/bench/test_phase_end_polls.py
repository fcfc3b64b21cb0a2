"""Each level gets its server's own figures, however short: a phase that ends has its endpoint's
/metrics polled at once, so that the once-a-second poll does not hand a short level's
observations to the level beside it (vLLM on CPU: a c=4 level of 0.3 s had no server TTFT), and
a phase whose streams decode is polled once then, so that its gauges are read while it runs (the
same level read 0 requests running: its only poll fell between phases)."""

from __future__ import annotations

import asyncio
import functools
import urllib.request
from pathlib import Path

import pytest

from nvfp4_tui.bench import session
from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.output.report import snapshot_server_view
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.telemetry.prometheus import parse_metrics, scrape_loop
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite
from tests.reliability.runs import record_run

LEVELS = [1, 2, 4]
REQUESTS = 4
TIME_SCALE = 20.0  # a level lasts about 0.1 s: a tenth of the poll interval
BOUND_S = 60.0


async def test_levels_shorter_than_the_poll_interval_each_have_the_servers_figures(
    tmp_path: Path,
) -> None:
    write_suite(tmp_path / "suites", "essay", max_tokens=16)
    endpoints = [endpoint_toml("e0", 0, decode_tps=200.0, ttft_s=0.3)]
    path = write_profile(
        tmp_path, endpoints, suites=["essay"], concurrency=LEVELS, requests=REQUESTS
    )
    profile = load_profile(path)
    async with SimFleet(profile.endpoints, time_scale=TIME_SCALE) as fleet:
        async with asyncio.timeout(BOUND_S):
            _, snapshot = await record_run(
                with_urls(profile, fleet.urls, TIME_SCALE), tmp_path / "out"
            )
        metrics_url = f"{fleet.urls['e0']}/metrics"
        body = await asyncio.to_thread(lambda: urllib.request.urlopen(metrics_url).read())
    rows = snapshot_server_view(snapshot)
    assert [r.load.label for r in rows] == [f"c={c}" for c in LEVELS]
    assert all(r.server_ttft_mean_s is not None and r.server_ttft_count >= 1 for r in rows)
    assert all(r.server_itl_mean_s is not None for r in rows)
    # Every first token the server observed is counted in one level, none twice.
    served = parse_metrics(body.decode()).total("vllm:time_to_first_token_seconds_count")
    assert sum(r.server_ttft_count for r in rows) == served == REQUESTS * len(LEVELS)


async def test_a_level_shorter_than_the_poll_interval_has_its_gauges_read_while_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No tick of the periodic poll falls in a level: only the polls a phase makes read it.
    monkeypatch.setattr(session, "scrape_loop", functools.partial(scrape_loop, interval_s=600.0))
    write_suite(tmp_path / "suites", "essay", max_tokens=128)
    endpoints = [endpoint_toml("e0", 0, decode_tps=100.0, ttft_s=0.3)]
    path = write_profile(tmp_path, endpoints, suites=["essay"], concurrency=[1, 4], requests=4)
    profile = load_profile(path)
    async with SimFleet(profile.endpoints, time_scale=2.0) as fleet:
        async with asyncio.timeout(BOUND_S):
            _, snapshot = await record_run(with_urls(profile, fleet.urls, 2.0), tmp_path / "out")
    rows = snapshot_server_view(snapshot)
    assert [(r.load.label, r.running_peak) for r in rows] == [("c=1", 1.0), ("c=4", 4.0)]

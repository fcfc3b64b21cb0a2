"""The server's own view reaches the report: a run against the simulator, whose /metrics is
vLLM's, gives per level the server's TTFT and ITL means beside the client's, and its totals add
up to the simulator's own counters."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path

import pytest

from nvfp4_tui.bench.session import Session
from nvfp4_tui.cli import main
from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.output.report import render_snapshot, snapshot_server_view
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.telemetry.prometheus import parse_metrics
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite

pytestmark = pytest.mark.slow  # whole runs against the simulator

SERVER_KEYS = {
    "kind",
    "endpoint",
    "load",
    "concurrency",
    "client_ttft_mean_s",
    "server_ttft_mean_s",
    "client_itl_mean_s",
    "server_itl_mean_s",
    "server_queue_mean_s",
    "server_prefill_mean_s",
    "server_decode_mean_s",
    "kv_cache_peak_pct",
    "kv_cache_mean_pct",
    "running_peak",
    "waiting_peak",
    "preemptions",
    "prefix_cache_hit_rate",
    "ttft_gap_s",
    "note",
}
LEVELS = [1, 2]
REQUESTS = 8
# 60 tokens at 100 tok/s after 0.2 s, twice as fast: 0.4 s a request, so that each level spans
# a few of the once-a-second polls that give its gauges.
TIME_SCALE = 2.0


def _profile(tmp_path: Path) -> Path:
    write_suite(tmp_path / "suites", "essay", max_tokens=60)
    endpoints = [endpoint_toml("e0", 0, decode_tps=100.0, ttft_s=0.2)]
    return write_profile(
        tmp_path, endpoints, suites=["essay"], concurrency=LEVELS, requests=REQUESTS
    )


def _metrics(url: str) -> dict[str, float]:
    with urllib.request.urlopen(f"{url}/metrics", timeout=5) as reply:
        return dict(parse_metrics(reply.read().decode()).sums)


def test_the_server_view_adds_up_to_the_simulators_counters(tmp_path: Path) -> None:
    path = _profile(tmp_path)
    profile = load_profile(path)
    suites = load_suites(profile.suite_dirs, profile.run.suites)
    with SimProcess(path, port_base=0, time_scale=TIME_SCALE) as sim:
        session = Session(with_urls(profile, sim.urls, TIME_SCALE), suites, tmp_path / "out")
        session.open()
        asyncio.run(session.run())
        counters = _metrics(sim.urls["e0"])
    snapshot = open_snapshot(session.snapshot_path)
    rows = snapshot_server_view(snapshot)
    assert [(r.endpoint_id, r.load.label) for r in rows] == [("e0", "c=1"), ("e0", "c=2")]
    # Every timed request's first token is in one level; the start-up probe's in none, or in
    # the first one when its poll's interval reaches into it.
    ttft_count = counters["vllm:time_to_first_token_seconds_count"]
    timed = sum(r.server_ttft_count for r in rows)
    assert timed in (ttft_count, ttft_count - 1)
    assert timed >= REQUESTS * len(LEVELS)
    for row in rows:
        assert row.server_polls > 0 and row.preemptions == 0  # the simulator never preempts
        assert row.running_peak is not None and 1 <= row.running_peak <= row.concurrency
        assert row.waiting_peak == 0
        assert row.kv_cache_peak_pct is not None and row.kv_cache_mean_pct is not None
        assert 0 < row.kv_cache_mean_pct <= row.kv_cache_peak_pct
        for value in (
            row.server_ttft_mean_s,
            row.server_itl_mean_s,
            row.server_queue_mean_s,
            row.server_prefill_mean_s,
            row.server_decode_mean_s,
            row.client_ttft_mean_s,
            row.client_itl_mean_s,
            row.prefix_cache_hit_rate,
        ):
            assert value is not None, row
        # The client's clock starts before the server's and stops after it.
        assert row.ttft_gap_s is not None and row.ttft_gap_s > -0.005
        assert row.client_itl_mean_s == pytest.approx(row.server_itl_mean_s, rel=0.25)
    # One prompt over and over: after the first, its messages are all in the prefix cache.
    hits = counters["vllm:prefix_cache_hits_total"] / counters["vllm:prefix_cache_queries_total"]
    assert all(r.prefix_cache_hit_rate == pytest.approx(hits, abs=0.1) for r in rows)

    report = json.loads(render_snapshot(snapshot, "json"))
    server_rows = [r for r in report if r.get("kind") == "server"]
    assert [set(r) for r in server_rows] == [SERVER_KEYS] * 2
    assert [r["server_ttft_mean_s"] for r in server_rows] == [r.server_ttft_mean_s for r in rows]
    text = render_snapshot(snapshot, "text")
    assert "Server view" in text and "TTFT ms server" in text


def test_headless_json_ends_with_the_server_view(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _profile(tmp_path)
    argv = ["demo", "--profile", str(path), "--out", str(tmp_path / "out"), "--headless"]
    assert main([*argv, "--json", "--time-scale", str(TIME_SCALE)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    server = [line for line in lines if line.get("kind") == "server"]
    assert lines[-len(server) :] == server  # after the panes' final figures
    assert [(r["endpoint"], r["load"], r["concurrency"]) for r in server] == [
        ("e0", "c=1", 1),
        ("e0", "c=2", 2),
    ]
    assert all(set(r) == SERVER_KEYS and r["server_ttft_mean_s"] for r in server)

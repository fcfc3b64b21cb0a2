"""The context ladder's capacity step end to end (issue 29, item 4): a simulated endpoint whose
KV cache holds two 4K-token requests runs a rung at 1, 2 and 4 in flight; the server's own
gauges, polled while each level ran, show it queueing at 4, and the report says it fits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.output.report import render_snapshot
from nvfp4_tui.store.reader import open_snapshot
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite

pytestmark = pytest.mark.slow  # a whole run against the simulator, polled once a second

# Two requests of ~4,100 tokens (prompt and answer) fit in 10,000; a third waits. At 10 tok/s
# an answer of a few lines takes about two seconds: each level spans a few polls.
KV_CACHE_TOKENS = 10_000


def test_a_rung_that_overfills_the_kv_cache_queues_and_the_report_says_what_fits(
    tmp_path: Path,
) -> None:
    write_suite(tmp_path / "suites", "essay")
    sim = f"kv_cache_tokens = {KV_CACHE_TOKENS}\nprefill_tps = 8000"
    endpoints = [endpoint_toml("e0", 0, decode_tps=10.0, ttft_s=0.1, sim_extra=sim)]
    path = write_profile(tmp_path, endpoints, suites=["essay"], concurrency=[1], requests=2)
    out = tmp_path / "out"
    argv = ["demo", "--profile", str(path), "--out", str(out), "--headless"]
    assert main([*argv, "--context-lengths", "4k", "--concurrency", "1,2,4"]) == 0
    (snapshot_dir,) = out.iterdir()
    snapshot = open_snapshot(snapshot_dir)
    report = json.loads(render_snapshot(snapshot, "json"))
    levels = [r for r in report if r.get("kind") == "context"]
    assert [(r["suite"], r["concurrency"], r["requests"]) for r in levels] == [
        ("context_4k", c, 4) for c in (1, 2, 4)
    ]
    assert all(r["recall_mean"] == 1.0 and r["server_polls"] > 0 for r in levels)
    by_level = {r["concurrency"]: r for r in levels}
    assert by_level[1]["server_waiting_peak"] == by_level[2]["server_waiting_peak"] == 0
    assert by_level[4]["server_waiting_peak"] >= 1
    assert by_level[4]["server_running_peak"] == 2
    (capacity,) = [r for r in report if r.get("kind") == "context_capacity"]
    assert capacity == {
        "kind": "context_capacity",
        "endpoint": "e0",
        "suite": "context_4k",
        "input_tokens_asked": 4096,
        "fits": 2,
        "at_least": False,
        "full_at_concurrency": 4,
    }
    text = render_snapshot(snapshot, "text")
    assert "fits 2 × 4,096 tokens at once" in text

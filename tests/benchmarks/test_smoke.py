"""Each benchmark's code path on a tiny size, so the scripts keep working; no speed assertions."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import client_ceiling
import fidelity
import harness
import memory_rss
import metrics_parse
import neighbour
import peer
import pytest
import readme_table
import sandbox_throughput
import store_io
import ui_cost
import ui_speed
import worker_scaling

FAST_SIM = {"decode_tps": 200.0, "ttft_s": 0.2, "vram_used_mib": 1000.0, "tools": False}


def _rendered(parts: list[str]) -> str:
    text = "\n".join(parts)
    assert text.strip()
    return text


def test_harness_statistics_and_results_file(tmp_path: Path) -> None:
    assert harness.median([3.0, 1.0, 2.0, 4.0]) == pytest.approx(2.5)
    assert harness.median([]) is None
    assert harness.slope_per_unit([0, 1, 2, 3], [1, 3, 5, 7]) == pytest.approx(2.0)
    assert harness.slope_per_unit([1, 1], [1, 2]) is None
    assert harness.cpu_seconds(os.getpid()) > 0
    assert harness.rss_mib() > 1
    target = harness.Target("x", "goal", "1 s", True)
    path = harness.write_result(
        "smoke", tmp_path, quick=True, settings={}, numbers={"a": 1}, targets=[target], notes=[]
    )
    document = json.loads(path.read_text())
    assert document["numbers"] == {"a": 1}
    assert document["machine"]["nproc"] >= 1
    assert document["targets"][0]["met"] is True
    assert "met" in harness.targets_table([target])


def test_fidelity_measures_against_the_schedule(tmp_path: Path) -> None:
    profile = harness.write_sim_profile(
        tmp_path / "fleet.toml",
        "smoke",
        {"a": {**FAST_SIM, "seed": 1}, "b": {**FAST_SIM, "seed": 2}},
    )
    settings = fidelity.Settings(
        profile=profile,
        levels=(fidelity.Level(1, 2, 8), fidelity.Level(2, 1, 8)),
        seed_levels=(fidelity.Level(1, 1, 8),),
    )
    numbers = fidelity.run(settings)
    stream = [r for r in numbers["levels"] if r["method"] == "stream"]
    assert [r["requests"] for r in stream] == [4, 4]  # 2 endpoints x workers x scored
    for row in stream:
        # Within half the true TTFT and decode rate: the truth is the right schedule (a wrong one
        # is off by a factor), with room for a busy machine.
        assert abs(row["ttft_err_ms_median"]) < 0.5 * row["ttft_true_ms_median"]
        assert row["decode_abs_err_pct_median"] < 50
    # At c=1 the simulator's histogram holds exactly the scored requests: the bias splits.
    assert stream[0]["sim_late_ms_mean"] is not None
    seed = [r for r in numbers["levels"] if r["method"] == "seed"]
    assert seed[0]["seed_tps_err_pct_median"] < 0  # tokens / latency counts the prefill too
    assert "Fidelity" in _rendered(fidelity.report(numbers))
    assert len(fidelity.targets(numbers)) == 2


def test_client_ceiling_reads_the_same_streams_every_way() -> None:
    settings = client_ceiling.Settings(
        streams=2,
        requests_per_stream=1,
        max_tokens=64,
        repeats=1,
        trust_levels=(1,),
        trust_settle_s=0.3,
        trust_window_s=0.5,
        trust_max_tokens=8,
        decode_samples=1,
    )
    numbers = client_ceiling.run(settings)
    variants = numbers["variants"]
    assert {(v["reader"], v["loop"]) for v in variants} >= {
        ("bare", "asyncio"),
        ("client", "asyncio"),
    }
    # Every way saw the same chunks: the bare loop's event count matches the client's chunks.
    assert len({v["chunks"] for v in variants}) == 1
    assert all(v["chunks_per_cpu_s"] > 0 and math.isfinite(v["ratio_to_bare"]) for v in variants)
    assert {r["decoder"] for r in numbers["decode_us_per_chunk"]} >= {"json"}
    (level,) = numbers["trust_levels"]
    assert level["requests"] > 0
    assert level["server_ttft_ms_mean"] >= 100.0  # the endpoint's TTFT is 0.1 s
    assert "Trust limit" in _rendered(client_ceiling.report(numbers))
    assert len(client_ceiling.targets(numbers)) == 2


def test_client_ceiling_without_optional_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_ceiling, "_installed", lambda name: False)
    assert set(client_ceiling._decoders()) == {"json"}
    assert set(client_ceiling._loop_factories()) == {"asyncio"}
    assert client_ceiling._typed_msgspec_decoder() is None


@pytest.mark.slow  # the UI, its worker and the simulator sampled for seconds
def test_ui_cost_samples_the_ui_apart_from_its_children() -> None:
    settings = ui_cost.Settings(
        load_concurrency=1,
        warmup_s=0.5,
        load_window_s=1.0,
        idle_window_s=0.5,
        idle_run_timeout_s=60.0,
        idle_time_scale=50.0,
        sample_s=0.5,
    )
    numbers = ui_cost.run(settings)
    load = numbers["load"]["cpu_pct"]
    assert set(load) == {"ui", "sim", "worker"}
    assert all(pct >= 0 for pct in load.values())  # 1 s at 10 ms clock ticks: may read 0
    assert numbers["load"]["ui_cpu_pct_series"]
    assert "worker" not in numbers["idle"]["cpu_pct"]  # the short run had finished
    assert "UI cost" in _rendered(ui_cost.report(numbers))
    assert len(ui_cost.targets(numbers)) == 2


@pytest.mark.slow  # a demo started, then a live run driven for seconds
def test_ui_speed_times_switches_and_the_first_frame() -> None:
    settings = ui_speed.Settings(startups=1, rounds=1, warmup_s=0.5, dwell_s=0.1, concurrency=1)
    numbers = ui_speed.run(settings)
    assert len(numbers["first_frame_s"]) == 1 and numbers["first_frame_s"][0] > 0
    assert {name: len(ts) for name, ts in numbers["switch_s"].items()} == {
        "detail": 1,
        "grid": 2,
        "leaderboard": 1,
    }
    assert "Screen switches" in _rendered(ui_speed.report(numbers))
    assert [t.name for t in ui_speed.targets(numbers)] == [
        "screen switch under load",
        "demo's first frame",
    ]


def test_the_readmes_performance_table_is_the_results_files() -> None:
    assert readme_table.main(["--check"]) == 0, "rerun python benchmarks/readme_table.py"


def test_store_writes_opens_and_ranks() -> None:
    settings = store_io.Settings(
        write_rows=300, big_requests=2000, big_gpu_samples=10_000, leaderboard_requests=2000
    )
    numbers = store_io.run(settings)
    with_text = numbers["write_with_text"]
    without_text = numbers["write_without_text"]
    assert with_text["bytes_per_request"] > without_text["bytes_per_request"]
    big = numbers["big"]
    assert big["events"] > 12_000  # every request and GPU sample, plus the run's own events
    assert big["leaderboard_rows"] == 7 * 6 * 2
    assert numbers["extrapolated"]
    (target,) = store_io.targets(numbers)
    assert target.met is None  # not measured at 1M rows
    assert "Big snapshot" in _rendered(store_io.report(numbers))


@pytest.mark.slow  # a session sampled for seconds
def test_memory_samples_rss_during_a_session() -> None:
    settings = memory_rss.Settings(duration_s=3.0, time_scale=20.0, concurrency=1, sample_s=0.5)
    numbers = memory_rss.run(settings)
    assert numbers["status"] in ("complete", "aborted")
    assert numbers["requests"] > 0
    assert len(numbers["samples"]) >= 3
    assert numbers["rss_mib_peak"] >= numbers["rss_mib_first"]
    assert "Memory" in _rendered(memory_rss.report({**numbers, "time_scale": 20.0}))


def test_peer_says_why_it_skipped() -> None:
    numbers = peer.run(quick=True)
    if numbers["skipped"]:
        assert "guidellm" in numbers["reason"]
    assert _rendered(peer.report(numbers))


@pytest.mark.slow  # a simulator and the hostile servers, three cases of a second each
def test_neighbour_measures_the_healthy_endpoint_in_every_case() -> None:
    settings = neighbour.Settings(
        window_s=1.0,
        settle_s=0.3,
        healthy_streams=1,
        neighbour_streams=1,
        max_tokens=4,
        neighbour_timeout_s=0.5,
    )
    numbers = neighbour.run(settings)
    cases = numbers["cases"]
    assert set(cases) == {"alone", "flood", "gzip_bomb"}
    assert all(row["healthy_requests"] > 0 for row in cases.values())
    assert cases["alone"]["neighbour_rows"] == {}
    assert set(cases["gzip_bomb"]["neighbour_rows"]) == {"protocol"}  # refused, never inflated
    assert set(cases["flood"]["neighbour_rows"]) <= {"timeout", "too_large"}
    assert len(neighbour.targets(numbers)) == 2
    assert "Healthy endpoint" in _rendered(neighbour.report(numbers))


@pytest.mark.slow  # three runs, each starting its worker processes
def test_worker_scaling_runs_each_worker_count() -> None:
    settings = worker_scaling.Settings(
        endpoints=2, concurrency=2, duration_s=0.5, max_tokens=32, workers=(1, 2), sim_processes=1
    )
    numbers = worker_scaling.run(settings)
    rows = numbers["levels"]
    assert [r["workers"] for r in rows] == [1, 2]
    assert all(r["status"] == "complete" and r["endpoints"] == 2 for r in rows)
    assert all(r["output_tokens"] > 0 and r["errors"] == 0 for r in rows)
    assert rows[0]["ratio_to_1"] == 1.0
    assert "Ingest ceiling" in _rendered(worker_scaling.report(numbers))
    assert len(worker_scaling.targets(numbers)) == 1


def test_sandbox_throughput_verifies_and_rates_the_fleet() -> None:
    numbers = sandbox_throughput.run(sandbox_throughput.Settings(problems=3))
    assert (numbers["verifications"], numbers["passed"], numbers["failed"]) == (3, 3, [])
    assert set(numbers["fleet_answers_per_s"]) == {"c=1", "c=4"}
    assert numbers["fleet_answers_per_s"]["c=4"] > numbers["fleet_answers_per_s"]["c=1"] > 0
    assert sandbox_throughput.targets(numbers)[0].met is True
    assert _rendered(sandbox_throughput.report(numbers))


def test_metrics_parse_times_both_parsers_and_the_loop_beside_them() -> None:
    numbers = metrics_parse.run(metrics_parse.Settings(parses=2, loop_s=0.2))
    assert numbers["body_lines"] == 657 and numbers["speedup"] > 0
    for way in ("line_parser_on_loop", "prometheus_client_in_thread"):
        assert numbers[way]["ticks"] > 0 and numbers[way]["lag_max_ms"] >= 0
    assert "ms per body" in metrics_parse.report(numbers)[0]

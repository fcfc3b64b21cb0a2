"""compare: a planted difference is found and marked; noise is not."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.core.events import (
    Event,
    PhaseFinished,
    PhaseStarted,
    RequestFinished,
    RunFinished,
    RunStarted,
)
from nvfp4_tui.output.compare import (
    cliffs_delta,
    compare_snapshots,
    holm_adjust,
    mann_whitney_u,
    match_endpoints,
)
from nvfp4_tui.store.legacy import import_legacy
from nvfp4_tui.store.reader import open_snapshot
from tests.support.factories import endpoint_info, write_snapshot

from .builders import legacy_file, noisy_run

PLANTED = {("b", "math"): {"quality": 0.12}, ("c", "english"): {"decode_tps": -12.0}}


def test_mann_whitney_matches_hand_computed_values() -> None:
    # No ties: U=0, var = 3*3/12*7, z = (4.5 - 0.5)/sqrt(5.25).
    result = mann_whitney_u([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert result.u == 0.0
    assert result.p_value == pytest.approx(math.erfc(4 / math.sqrt(5.25) / math.sqrt(2)))
    assert result.p_value == pytest.approx(0.0808556, abs=1e-6)
    # Ties: ranks 2,2,2,5,5,5; U=3; var = 9/12 * (7 - 48/30) = 4.05.
    tied = mann_whitney_u([1.0, 1.0, 2.0], [1.0, 2.0, 2.0])
    assert tied.u == 3.0
    assert tied.p_value == pytest.approx(math.erfc(1 / math.sqrt(4.05) / math.sqrt(2)))
    assert mann_whitney_u([2.0, 2.0], [2.0, 2.0]).p_value == 1.0
    with pytest.raises(ValueError):
        mann_whitney_u([], [1.0])


def test_holm_adjustment() -> None:
    assert holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm_adjust([]) == []


def test_endpoints_match_by_id_then_model_then_label() -> None:
    a = [
        endpoint_info("x", 0, label="Same"),
        endpoint_info("y", 1, label="Label Y"),
        endpoint_info("z", 2, label="Only A"),
        endpoint_info("q", 4, label="Qwen3.6"),
    ]
    b = [
        endpoint_info("x", 0, label="Renamed"),
        endpoint_info("y2", 1, label="Label Y"),
        endpoint_info("w", 3, label="Only B"),
        endpoint_info("q2", 5, label="Qwen3.6 (fp8)"),
    ]
    # Every endpoint serves "current"; only q and q2 report one model root, the same.
    models_a = {"x": "current", "y": "current", "z": "current", "q": "/m/Qwen3.6"}
    models_b = {"x": "current", "y2": "current", "w": "current", "q2": "/m/Qwen3.6"}
    pairs, only_a, only_b = match_endpoints(a, b, models_a, models_b)
    assert [(p.endpoint_a, p.endpoint_b, p.matched_by) for p in pairs] == [
        ("x", "x", "id"),
        ("y", "y2", "label"),
        ("q", "q2", "model"),
    ]
    assert [e.id for e in only_a] == ["z"] and [e.id for e in only_b] == ["w"]
    assert [p.label for p in pairs] == ["Same → Renamed", "Label Y", "Qwen3.6 → Qwen3.6 (fp8)"]


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path, Path]:
    base = write_snapshot(tmp_path, "base", noisy_run("base", seed=1))
    same = write_snapshot(tmp_path, "same", noisy_run("same", seed=2))
    shifted = write_snapshot(tmp_path, "shifted", noisy_run("shifted", seed=3, shift=PLANTED))
    return base, same, shifted


def test_the_planted_difference_is_found_and_nothing_else(runs) -> None:
    base, _, shifted = runs
    comparison = compare_snapshots(open_snapshot(base), open_snapshot(shifted))
    assert comparison.tests == 9 * 3
    found = {
        (cell.endpoint_a, cell.suite, change.metric.name) for cell, change in comparison.significant
    }
    assert found == {("b", "math", "quality"), ("c", "english", "decode_tps")}
    for _cell, change in comparison.significant:
        assert change.n_a == change.n_b == 24
        assert change.p_adjusted is not None and change.p_adjusted < 0.05
        if change.metric.name == "quality":
            assert change.delta == pytest.approx(0.12, abs=0.04)
        else:
            assert change.delta == pytest.approx(-12.0, abs=4.0)


def test_two_runs_of_the_same_distribution_show_no_change(runs) -> None:
    base, same, _ = runs
    comparison = compare_snapshots(open_snapshot(base), open_snapshot(same))
    assert comparison.significant == ()
    assert all(change.p_value is not None for cell in comparison.cells for change in cell.changes)


def test_small_cells_are_not_tested(tmp_path: Path) -> None:
    a = write_snapshot(tmp_path, "a", noisy_run("a", seed=1, n=2))
    b = write_snapshot(tmp_path, "b", noisy_run("b", seed=2, n=2, shift=PLANTED))
    comparison = compare_snapshots(open_snapshot(a), open_snapshot(b))
    assert comparison.tests == 0 and comparison.significant == ()


def test_compare_command(runs, capsys) -> None:
    base, _, shifted = runs
    assert main(["compare", str(base), str(shifted)]) == 0
    out = capsys.readouterr().out
    marked = [line for line in out.splitlines() if line.rstrip().endswith("*") or " * " in line]
    assert len(marked) == 2
    assert any(line.startswith("Beta") and "math" in line for line in marked)
    assert "2 significant changes." in out
    assert main(["compare", str(base), str(shifted), "--format", "markdown"]) == 0
    assert "| endpoint | suite | load | n A/B |" in capsys.readouterr().out


def _open_loop(events: list[Event]) -> list[Event]:
    """``events`` as an open-loop run: english at 1 req/s, math at 1 req/s, then english again
    (where the closed run had its third suite) at 2 req/s."""
    rates = {0: 1.0, 1: 1.0, 2: 2.0}
    suites = {0: "english", 1: "math", 2: "english"}
    out: list[Event] = []
    for e in events:
        if isinstance(e, RunStarted):
            index: dict[str, int] = {}
            plans = []
            for p in e.phases:
                i = index[p.endpoint_id] = index.get(p.endpoint_id, -1) + 1
                plans.append(replace(p, suite=suites[i], concurrency=0, rate_rps=rates[i]))
            out.append(replace(e, phases=tuple(plans)))
        elif isinstance(e, PhaseStarted | PhaseFinished | RequestFinished):
            out.append(replace(e, suite=suites[e.phase_index], concurrency=0))
        else:
            out.append(e)
    return out


def test_open_loop_cells_are_compared_per_rate(tmp_path: Path) -> None:
    a = write_snapshot(tmp_path, "a", _open_loop(noisy_run("a", seed=1)))
    b = write_snapshot(tmp_path, "b", _open_loop(noisy_run("b", seed=2)))
    comparison = compare_snapshots(open_snapshot(a), open_snapshot(b))
    cells = [(c.endpoint_a, c.suite, c.load.label, c.changes[0].n_a) for c in comparison.cells]
    assert cells[:3] == [
        ("a", "english", "1 req/s", 24),
        ("a", "math", "1 req/s", 24),
        ("a", "english", "2 req/s", 24),
    ]
    assert len(cells) == 9


def _verified(events: list[Event], shift: float) -> list[Event]:
    """The heuristic score moved into ``score_verified`` (plus ``shift`` for Beta's math); the
    heuristic column flat, so only a comparison of verified scores can see the change."""
    out: list[Event] = []
    for e in events:
        if isinstance(e, RequestFinished):
            moved = shift if (e.endpoint_id, e.suite) == ("b", "math") else 0.0
            e = replace(e, score_verified=(e.score_heuristic or 0.0) + moved, score_heuristic=0.5)
        out.append(e)
    return out


def test_the_compared_score_is_chosen(tmp_path: Path, capsys) -> None:
    base = write_snapshot(tmp_path, "base", _verified(noisy_run("base", seed=1), 0.0))
    moved = write_snapshot(tmp_path, "moved", _verified(noisy_run("moved", seed=3), 0.2))
    a, b = open_snapshot(base), open_snapshot(moved)

    def quality_changes(score: str) -> set[tuple[str, str]]:
        comparison = compare_snapshots(a, b, score=score)
        return {
            (cell.endpoint_a, cell.suite)
            for cell, change in comparison.significant
            if change.metric.name == "quality"
        }

    assert quality_changes("heuristic") == set()
    assert quality_changes("verified") == {("b", "math")}
    assert main(["compare", str(base), str(moved), "--score", "verified"]) == 0
    assert "quality (verified, mean)" in capsys.readouterr().out


def test_cliffs_delta() -> None:
    assert cliffs_delta([1.0, 2.0], [3.0, 4.0]) == 1.0
    assert cliffs_delta([3.0, 4.0], [1.0, 2.0]) == -1.0
    # Pairs (B, A): B wins 6 of 9 (2>1, 3>1, 3>2, 5>1, 5>2, 5>4), loses 2 (2<4, 3<4), ties 1.
    assert cliffs_delta([1.0, 2.0, 4.0], [2.0, 3.0, 5.0]) == pytest.approx((6 - 2) / 9)
    assert cliffs_delta([], [1.0]) is None


def _legacy_pair(tmp_path: Path) -> tuple[Path, Path]:
    """The seed's configuration experiment in small: the same models run twice, the second run
    half again as fast per request and with more VRAM used on GPU 0 (an FP8 KV cache)."""
    first, second = tmp_path / "auto.json", tmp_path / "fp8.json"
    legacy_file(first, seed=5)
    body = legacy_file(second, seed=5)
    for row in body["results"]:
        if row["tokens_out"]:
            row["tok_per_sec"] *= 1.5
            row["latency_ms"] = row["tokens_out"] / row["tok_per_sec"] * 1000
    body["metadata"]["vram_mb"]["before"]["0"] = 87200
    body["metadata"]["vram_mb"]["after"]["0"] = 92470
    second.write_text(json.dumps(body), encoding="utf-8")
    return (
        import_legacy(first, tmp_path / "snapshots" / "auto"),
        import_legacy(second, tmp_path / "snapshots" / "fp8"),
    )


def test_two_legacy_imports_compare_on_e2e_speed_and_vram(tmp_path: Path, capsys) -> None:
    a, b = _legacy_pair(tmp_path)
    comparison = compare_snapshots(open_snapshot(a), open_snapshot(b))
    assert [m.name for m in comparison.metrics] == ["quality", "e2e_tps"]
    assert comparison.missing == ("TTFT p50 s: not measured in A or B",)
    math_c4 = next(
        c for c in comparison.cells if (c.endpoint_a, c.suite, c.load.value) == ("moe_a", "math", 4)
    )
    speed = math_c4.changes[1]
    assert speed.b == pytest.approx(speed.a * 1.5)
    assert speed.cliffs_delta is not None and speed.cliffs_delta > 0.5
    assert math_c4.changes[0].delta == 0  # the same answers, the same scores
    assert math_c4.level == "seed c=4: 8 in flight"
    # Every tool call failed silently in both: the cell is compared on its suspects alone.
    tools = next(c for c in comparison.cells if c.suite == "tool_call")
    assert (tools.failures_a.suspect, tools.failures_b.suspect, tools.n_a) == (2, 2, 0)
    failed = next(c for c in comparison.cells if c.failures_a.errors)
    assert (failed.endpoint_a, failed.suite, failed.failures_b.errors) == ("dense_b", "math", 1)
    # Throughput per level comes from the leaderboard; the same tokens in 2/3 of the time.
    assert [(lv.endpoint_a, lv.load_label) for lv in comparison.levels] == [
        ("moe_a", "seed c=1: 2 in flight"),
        ("moe_a", "seed c=4: 8 in flight"),
        ("dense_b", "seed c=1: 2 in flight"),
        ("dense_b", "seed c=4: 8 in flight"),
    ]
    assert [lv.relative for lv in comparison.levels] == pytest.approx([0.5] * 4, abs=0.01)
    assert [(v.gpu_a, v.label, v.after_a_mib, v.after_b_mib) for v in comparison.vram] == [
        (0, "Alpha MoE", 92866.0, 92470.0),
        (1, "Beta Dense", 92478.0, 92478.0),
        (2, "", 1156.0, 1156.0),
    ]
    assert comparison.vram[0].before_b_mib == 87200.0

    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "  e2e tok/s  " in out and "has no decode tok/s" in out
    assert "92,862 → 87,200 (-5,662)" in out
    assert "seed c=1: 2 in flight" in out and "+50.0%" in out
    assert "Cliff's delta" in out and "left out, TTFT p50 s" in out


def _two_levels(events: list[Event], throughput_scale: float) -> list[Event]:
    """``events`` run again at concurrency 4 (phases 3 to 5), each phase of that level in
    ``1 / throughput_scale`` of its wall time."""
    out = [e for e in events if not isinstance(e, RunFinished)]
    started = next(e for e in events if isinstance(e, RunStarted))
    more = [replace(p, concurrency=4) for p in started.phases]
    out[0] = replace(started, phases=(*started.phases, *more))
    for e in events:
        if isinstance(e, PhaseStarted | RequestFinished):
            out.append(replace(e, concurrency=4, phase_index=e.phase_index + 3))
        elif isinstance(e, PhaseFinished):
            wall_s = e.wall_s / (4 * throughput_scale)
            out.append(replace(e, concurrency=4, phase_index=e.phase_index + 3, wall_s=wall_s))
    return out


def test_two_simulated_runs_compare_on_decode_speed_and_throughput_per_level(
    tmp_path: Path, capsys
) -> None:
    a = write_snapshot(tmp_path, "a", _two_levels(noisy_run("a", seed=1), 1.0))
    b = write_snapshot(tmp_path, "b", _two_levels(noisy_run("b", seed=3, shift=PLANTED), 0.8))
    comparison = compare_snapshots(open_snapshot(a), open_snapshot(b))
    assert [m.name for m in comparison.metrics] == ["quality", "decode_tps", "ttft_p50_s"]
    assert comparison.missing == () and comparison.vram == ()
    assert {cell.level for cell in comparison.cells} == {"c=1", "c=4"}
    found = {(c.endpoint_a, c.suite, m.metric.name) for c, m in comparison.significant}
    assert ("c", "english", "decode_tps") in found
    by_level = {(lv.endpoint_a, lv.load_label): lv for lv in comparison.levels}
    assert sorted(by_level) == [(e, c) for e in "abc" for c in ("c=1", "c=4")]
    assert by_level[("a", "c=1")].throughput_a_tps == pytest.approx(100.0)
    assert by_level[("a", "c=1")].relative == pytest.approx(0.0)
    assert by_level[("a", "c=4")].throughput_a_tps == pytest.approx(400.0)
    assert by_level[("a", "c=4")].relative == pytest.approx(-0.2)

    assert main(["compare", str(a), str(b), "--format", "json"]) == 0
    out = capsys.readouterr().out
    body = json.loads(out)
    assert set(body) == {
        "run_a", "run_b", "alpha", "tests", "effect_size", "speed", "metrics", "missing",
        "configuration_changes", "only_a", "only_b", "pairs", "cells", "levels", "vram",
        "server_view", "context", "context_capacity",
    }  # fmt: skip
    assert body["context"] == body["context_capacity"] == []  # no context ladder in these runs
    assert (body["speed"], body["effect_size"]) == ("decode_tps", "cliffs_delta")
    cell = body["cells"][0]
    assert cell["load"] == {"kind": "concurrency", "value": 1, "label": "c=1"}
    assert '"value": 1,' in out  # a count of requests, not 1.0
    assert set(cell["metrics"]) == {"quality", "decode_tps", "ttft_p50_s"}
    assert set(cell["metrics"]["decode_tps"]) == {
        "column", "summary", "a", "b", "n_a", "n_b", "delta", "relative_change",
        "cliffs_delta", "p_value", "p_adjusted", "significant",
    }  # fmt: skip
    level = body["levels"][1]
    assert level["load"]["label"] == "c=4"
    assert level["relative_change"] == pytest.approx(-0.2)
    assert {"throughput_tps_a", "throughput_tps_b", "steady_a", "steady_b"} <= set(level)

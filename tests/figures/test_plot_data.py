"""The published figures' data, read from a recorded snapshot of a run whose every value is
known (``published_run``): what each figure would draw, not its pixels."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from nvfp4_tui.core.figures.intervals import wilson_95
from nvfp4_tui.core.figures.plot_data import (
    ADDED_FIGURES,
    SEED_FIGURES,
    Distributions,
    LoadFigure,
    Omitted,
    ParetoFigure,
    Profile,
    ScalingLines,
    SpeedBars,
    SuiteBars,
    VramFigure,
    published_figures,
    spread,
)
from nvfp4_tui.core.figures.recommendation import fleet_recommendation
from nvfp4_tui.core.figures.scores import HEURISTIC
from nvfp4_tui.core.series_colours import colour_indices, series_hex
from nvfp4_tui.output.figures.inputs import figure_inputs
from nvfp4_tui.store.reader import open_snapshot

from .published_run import (
    HOSTILE_LABEL,
    LEVELS,
    PROMPTS,
    SCORES,
    TIMING,
    TOKENS,
    VRAM_MIB,
    e2e_s,
    published_snapshot,
)


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("snapshots")
    inputs = figure_inputs(open_snapshot(published_snapshot(root)))
    return {f.name: f for f in published_figures(inputs)}


def test_every_figure_is_drawn_in_the_seed_order_then_the_added_ones(figures) -> None:
    assert tuple(figures) == SEED_FIGURES + ADDED_FIGURES
    # The run has no standard benchmark: that figure alone is left out.
    assert [f.name for f in figures.values() if isinstance(f, Omitted)] == ["benchmarks"]


def test_quality_bars_are_the_mean_per_suite_at_the_base_level_with_wilson_intervals(
    figures,
) -> None:
    quality = figures["quality"]
    assert isinstance(quality, SuiteBars) and quality.bounded
    assert quality.suites == ("coding", "math") and "concurrency 1" in quality.title
    for (endpoint, suite), score in SCORES.items():
        cell = quality.cell(suite, endpoint)
        assert cell is not None and cell.n == PROMPTS  # the answers at c=1
        assert cell.mean == pytest.approx(score)
        assert (cell.low, cell.high) == pytest.approx(wilson_95(score, PROMPTS))


def test_one_colour_and_class_per_endpoint_in_every_figure(figures) -> None:
    for figure in figures.values():
        series = getattr(figure, "series", None)
        if series is None:
            continue
        hues = colour_indices(["fast", "slow"])
        assert [(s.endpoint_id, s.colour_index, s.class_label) for s in series] == [
            ("fast", hues["fast"], "MoE"),
            ("slow", hues["slow"], "dense"),
        ]
    assert series_hex(hues["fast"]) != series_hex(hues["slow"])


def test_speed_bars_hold_both_speeds_and_each_class_average(figures) -> None:
    speed = figures["speed"]
    assert isinstance(speed, SpeedBars) and speed.metrics == ("decode_tps", "e2e_tps")
    for endpoint, (_, decode) in TIMING.items():
        bar = speed.bars[("decode_tps", endpoint)]
        assert (bar.mean, bar.n) == (pytest.approx(decode), 2 * PROMPTS)
        assert bar.low == pytest.approx(decode) and bar.high == pytest.approx(decode)
        e2e = speed.bars[("e2e_tps", endpoint)]
        assert e2e.mean == pytest.approx(TOKENS / e2e_s(endpoint))
    assert speed.class_means[("decode_tps", "moe")] == pytest.approx(120.0)
    assert speed.class_means[("decode_tps", "dense")] == pytest.approx(50.0)


def test_throughput_scaling_is_output_tokens_over_phase_wall_time(figures) -> None:
    scaling = figures["throughput_scaling"]
    assert isinstance(scaling, ScalingLines)
    assert scaling.loads == ("c=1", "c=2", "c=4") and scaling.load_axis == "concurrency"
    for endpoint in TIMING:
        for level in LEVELS:
            wall = math.ceil(PROMPTS / level) * e2e_s(endpoint)
            expected = PROMPTS * TOKENS / wall
            assert scaling.points[(endpoint, f"c={level}")] == pytest.approx(expected)


def test_distributions_per_endpoint_and_level(figures) -> None:
    for name, value in (("latency", e2e_s), ("ttft", lambda e: TIMING[e][0])):
        figure = figures[name]
        assert isinstance(figure, Distributions) and figure.loads == ("c=1", "c=2", "c=4")
        for endpoint in TIMING:
            found = figure.spreads[(endpoint, "c=4")]
            assert found.n == 2 * PROMPTS
            assert found.p50 == pytest.approx(value(endpoint))
    itl = figures["itl"]
    assert itl.scale == 1000.0 and itl.spreads[("slow", "c=1")].p50 == pytest.approx(0.02)


def test_spread_is_quartiles_whiskers_and_extremes() -> None:
    found = spread([4.0, 1.0, 3.0, 2.0, 5.0, float("nan")])
    assert found is not None
    assert (found.n, found.minimum, found.p25, found.p50, found.p75, found.maximum) == (
        5,
        1.0,
        2.0,
        3.0,
        4.0,
        5.0,
    )
    assert found.p5 == pytest.approx(1.2) and found.mean == 3.0
    assert spread([]) is None


def test_output_length_and_profile(figures) -> None:
    length = figures["output_length"]
    assert isinstance(length, SuiteBars) and not length.bounded
    assert length.cell("math", "slow").mean == TOKENS
    profile = figures["profile"]
    assert isinstance(profile, Profile) and profile.axes == ("coding", "math", "speed")
    assert profile.values["fast"] == pytest.approx((0.9, 0.3, 1.0))
    assert profile.values["slow"] == pytest.approx((0.8, 0.9, 50.0 / 120.0))


def test_load_curves_mark_capacity_knee_and_the_slo(figures) -> None:
    load = figures["throughput_vs_load"]
    assert isinstance(load, LoadFigure)
    assert load.attainment_target == 0.9 and load.slo == "TTFT ≤ 0.2 s"
    curves = {c.series.endpoint_id: c for c in load.curves}
    assert [p.load.value for p in curves["fast"].points] == [1.0, 2.0, 4.0]
    assert curves["fast"].capacity == 4.0 and curves["slow"].capacity is None
    assert all(p.attainment == 1.0 for p in curves["fast"].points)
    assert all(p.attainment == 0.0 for p in curves["slow"].points)
    assert curves["fast"].knee is None  # throughput grew by at least 5% at every step


def test_pareto_and_vram(figures) -> None:
    pareto = figures["pareto"]
    assert isinstance(pareto, ParetoFigure) and pareto.speed_label == "decode tok/s"
    marks = {m.series.endpoint_id: m for m in pareto.marks}
    assert marks["fast"].speed_tps == pytest.approx(120.0)
    assert marks["fast"].quality == pytest.approx(0.6)
    assert marks["slow"].quality == pytest.approx(0.85)
    fast = marks["fast"]
    assert (fast.score.n, fast.speed.n) == (2 * PROMPTS, 2 * PROMPTS)  # both suites at c=1
    assert (fast.score.low, fast.score.high) == pytest.approx(wilson_95(0.6, 2 * PROMPTS))
    assert fast.speed.mean == fast.speed_tps and fast.score.mean == fast.quality
    assert marks["fast"].on_frontier and marks["slow"].on_frontier
    vram = figures["vram"]
    assert isinstance(vram, VramFigure)
    readings = {b.reading.gpu: b for b in vram.bars}
    for gpu, (first, last, peak) in VRAM_MIB.items():
        reading = readings[gpu].reading
        assert (reading.before_mib, reading.after_mib, reading.peak_mib) == (first, last, peak)
    assert readings[0].series is not None and readings[0].series.endpoint_id == "fast"


def test_the_fleet_recommendation_routes_each_task_with_its_evidence(tmp_path: Path) -> None:
    inputs = figure_inputs(open_snapshot(published_snapshot(tmp_path)))
    rec = fleet_recommendation(inputs.board, HEURISTIC)
    assert rec.recommends and not rec.thin and not rec.unrouted
    assert [(a.endpoint_id, a.gpu, a.suites) for a in rec.assignments] == [
        ("fast", 0, ("coding",)),
        ("slow", 1, ("math",)),
    ]
    coding = next(r for r in rec.routes if r.suite == "coding")
    assert (coding.best_id, coding.tied, coding.min_prompts) == ("fast", 2, PROMPTS)
    math_route = next(r for r in rec.routes if r.suite == "math")
    assert (math_route.endpoint_id, math_route.tied) == ("slow", 1)


def test_labels_from_outside_reach_the_figures_as_one_plain_line(tmp_path: Path) -> None:
    inputs = figure_inputs(open_snapshot(published_snapshot(tmp_path, fast_label=HOSTILE_LABEL)))
    quality = published_figures(inputs)[0]
    assert isinstance(quality, SuiteBars)
    label = quality.series[0].label
    assert "\x1b" not in label and label.startswith("Fast $x^{$ <script>")

"""The seed's own results file, imported: its six figures, whose numbers are the seed's
published ones, and the figures its data cannot support left out with the reason.

``benchmark_all6.json`` is the run behind an earlier version of the seed's article (six models;
DESIGN.md "Legacy import"). Its ``summary`` is the table the seed's script published from it,
and the figures reproduce every cell of it. The article's speed table (whole tok/s per model and
per class) lies within 1 tok/s of this file's means, and its VRAM table matches for the four
models that sat on the same cards. The article's quality table is not checked cell by cell: it comes
from the later seven-model run (Qwen3.6 added, the MoE models re-run), whose raw results the
seed does not ship; 21 of its 30 cells differ from this file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.core.figures.plot_data import (
    SEED_FIGURES,
    Omitted,
    ScalingLines,
    SpeedBars,
    SuiteBars,
    VramFigure,
    published_figures,
)
from nvfp4_tui.core.figures.recommendation import fleet_recommendation
from nvfp4_tui.core.series_colours import colour_indices
from nvfp4_tui.output.figures.inputs import figure_inputs
from nvfp4_tui.store.legacy import import_legacy
from nvfp4_tui.store.reader import open_snapshot

SEED_FILE = Path("/work/shared/seed-data/benchmark_all6.json")
pytestmark = pytest.mark.skipif(not SEED_FILE.exists(), reason="the seed's results are not here")

# The article's "Lineup" speeds and its "Speed: New Champion" class averages, in tok/s.
ARTICLE_SPEED = {
    "moe_redhat": 130,
    "moe_huihui": 130,
    "moe_jiunsong": 129,
    "dense_qwen": 56,
    "dense_qwopus": 57,
    "dense_gemma31": 50,
}
ARTICLE_CLASS_SPEED = {"moe": 130, "dense": 54}  # "Gemma4 MoE (avg)", "Dense (avg)"
# The article's VRAM table (MB as nvidia-smi shows MiB) for the models on the same cards here.
ARTICLE_VRAM = {"moe_redhat": 92_862, "moe_huihui": 92_862, "dense_qwen": 92_470}
ARTICLE_VRAM["dense_qwopus"] = 92_470


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    snapshot = import_legacy(SEED_FILE, tmp_path_factory.mktemp("snapshots") / "seed")
    inputs = figure_inputs(open_snapshot(snapshot))
    figures = {f.name: f for f in published_figures(inputs)}
    body = json.loads(SEED_FILE.read_text(encoding="utf-8"))
    return figures, {"body": body, "inputs": inputs}


def test_the_six_seed_figures_are_drawn(seed) -> None:
    figures, _ = seed
    assert [n for n in SEED_FIGURES if not isinstance(figures[n], Omitted)] == list(SEED_FIGURES)


def test_what_the_legacy_data_cannot_support_is_left_out_and_said(seed) -> None:
    figures, _ = seed
    for name in ("ttft", "itl"):
        omitted = figures[name]
        assert isinstance(omitted, Omitted)
        assert "seed script's JSON holds one latency per request" in omitted.reason
    assert isinstance(figures["throughput_vs_load"], Omitted)
    speed = figures["speed"]
    assert isinstance(speed, SpeedBars) and speed.metrics == ("e2e_tps",)
    assert "no decode tok/s" in speed.note
    scaling = figures["throughput_scaling"]
    assert isinstance(scaling, ScalingLines)
    assert "concurrency 1 held 2–3" in scaling.note  # what the script's levels really held


def test_quality_per_suite_and_model_is_the_seeds_published_summary(seed) -> None:
    figures, extra = seed
    quality = figures["quality"]
    assert isinstance(quality, SuiteBars)
    assert quality.suites == ("english_critique", "japanese", "math", "coding", "design")
    checked = 0
    for row in extra["body"]["summary"]:
        if row["concurrency"] != 1 or row["test"] == "tool_call":
            continue  # tool_call: every answer a silent failure, left out and counted suspect
        cell = quality.cell(row["test"], row["model"])
        assert cell is not None and cell.n == 2
        assert round(cell.mean, 3) == row["avg_quality"], (row["model"], row["test"])
        checked += 1
    assert checked == 30
    # Two answers a cell: the interval says how little that decides.
    assert quality.cell("math", "dense_qwopus").low < 0.3


def test_speed_per_model_is_the_seeds_tok_per_sec(seed) -> None:
    figures, extra = seed
    speed = figures["speed"]
    assert isinstance(speed, SpeedBars)
    for model, published in ARTICLE_SPEED.items():
        bar = speed.bars[("e2e_tps", model)]
        assert bar.n == 10  # five suites x two prompts at concurrency 1
        per_test = [
            r["avg_tok_per_sec"]
            for r in extra["body"]["summary"]
            if r["model"] == model and r["concurrency"] == 1 and r["test"] != "tool_call"
        ]
        # The summary's per-test means, two requests each, pooled: equal to its rounding.
        assert bar.mean == pytest.approx(sum(per_test) / len(per_test), abs=0.05)
        assert abs(bar.mean - published) < 1.0
    for model_class, published in ARTICLE_CLASS_SPEED.items():
        assert abs(speed.class_means[("e2e_tps", model_class)] - published) < 1.0


def test_vram_is_the_seeds_table(seed) -> None:
    figures, _ = seed
    vram = figures["vram"]
    assert isinstance(vram, VramFigure)
    by_model = {b.series.endpoint_id: b.reading for b in vram.bars if b.series is not None}
    for model, published in ARTICLE_VRAM.items():
        assert by_model[model].before_mib == published
    idle = [b for b in vram.bars if b.series is None]
    assert [b.reading.gpu for b in idle] == [6]  # served nothing in this run
    assert "GPU 6: no endpoint" in vram.note


def test_the_fleet_recommendation_says_two_prompts_are_too_thin(seed) -> None:
    _, extra = seed
    inputs = extra["inputs"]
    rec = fleet_recommendation(inputs.board, inputs.score_name)
    assert not rec.recommends and rec.best_covered == 2
    assert [r.suite for r in rec.thin] == [
        "english_critique",
        "japanese",
        "math",
        "coding",
        "design",
    ]


def test_a_model_has_the_colour_the_demo_gives_it(seed) -> None:
    """The seed's six models and the demo's seven, in other orders: each model the two share
    (by its endpoint id) is drawn in one hue in both."""
    figures, _ = seed
    demo = [e.id for e in load_profile(DEMO_PROFILE).endpoints]
    demo_hues = colour_indices(demo)
    speed = figures["speed"]
    assert isinstance(speed, SpeedBars)
    shared = [s for s in speed.series if s.endpoint_id in demo_hues]
    assert len(shared) == 5  # all but dense_qwen, which the demo calls dense_qwen35
    places = [s.endpoint_id for s in speed.series]
    assert any(places.index(s.endpoint_id) != demo.index(s.endpoint_id) for s in shared)
    for series in shared:
        assert series.colour_index == demo_hues[series.endpoint_id], series.endpoint_id

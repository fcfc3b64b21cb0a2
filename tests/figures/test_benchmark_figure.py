"""The standard benchmarks' figure, what a run of benchmarks alone cannot show and why, the
simulator's clock on every speed and time axis, and names in the figures: cut at a word, their
class said once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nvfp4_tui.core.events import (
    BenchmarkSuite,
    Event,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RunStarted,
)
from nvfp4_tui.core.figures.intervals import wilson_95
from nvfp4_tui.core.figures.plot_data import (
    BenchmarkBars,
    Omitted,
    Series,
    class_label,
    published_figures,
)
from nvfp4_tui.core.series_colours import colour_indices
from nvfp4_tui.output.figures.inputs import figure_inputs
from nvfp4_tui.store.reader import open_snapshot
from tests.support.factories import T0, endpoint_info, request, write_snapshot

HUMANEVAL = BenchmarkSuite(
    suite="humaneval",
    benchmark="HumanEval",
    metric="pass@1",
    sampling="greedy",
    protocol="chat prompt v1",
    problems=10,
    dataset_rows=164,
)
PASSED = {"a": 7, "b": 9}  # of 10 problems
DECODE = {"a": 120.0, "b": 50.0}  # tok/s, modelled, as a run at ×20 records them
CLOCK = "simulator ×20: times and speeds in modelled seconds"
TIMED = ("speed", "throughput_scaling", "latency", "ttft", "itl", "pareto")


def benchmark_run(
    root: Path, *, seed_suite: bool = False, scales: tuple[float, float] = (20.0, 20.0)
) -> Path:
    """Two endpoints answer the ten HumanEval problems at c=1 (and, with ``seed_suite``, six
    math prompts), each on a simulator clock of ``scales``."""
    endpoints = (
        endpoint_info("a", 0, label="A Gemma4 MoE (official)", time_scale=scales[0]),
        endpoint_info("b", 1, label="B Qwen3.5-27B", model_class="dense", time_scale=scales[1]),
    )
    suites = ("humaneval", "math") if seed_suite else ("humaneval",)
    plans = tuple(PhasePlan(e.id, s, 1, None) for e in endpoints for s in suites)
    events: list[Event] = [RunStarted(T0, "bench", "bench", endpoints, plans, (), (HUMANEVAL,))]
    t = T0 + 1
    for e in endpoints:
        for index, suite in enumerate(suites):
            events.append(PhaseStarted(t, e.id, suite, 1, index))
            count = 10 if suite == "humaneval" else 6
            for i in range(count):
                score = float(i < PASSED[e.id]) if suite == "humaneval" else 0.5
                events.append(
                    request(
                        e.id,
                        t=t + i,
                        suite=suite,
                        prompt_id=f"{suite}-{i}",
                        phase_index=index,
                        request_index=i,
                        ttft_s=0.01,
                        e2e_s=0.1,
                        itl_p50_s=0.001,
                        tokens_out=200,
                        decode_tps=DECODE[e.id],
                        e2e_tps=2000.0,
                        score_verified=score,
                    )
                )
            t += count
            events.append(PhaseFinished(t, e.id, suite, 1, index, count, 0, count * 200, count))
    return write_snapshot(root, "bench", events)


def figures_of(snapshot: Path) -> dict:
    return {f.name: f for f in published_figures(figure_inputs(open_snapshot(snapshot)))}


def test_each_benchmark_is_drawn_with_its_label_wilson_interval_and_problems(tmp_path) -> None:
    figure = figures_of(benchmark_run(tmp_path))["benchmarks"]
    assert isinstance(figure, BenchmarkBars)
    assert figure.title.startswith("Standard benchmark: HumanEval pass@1, greedy, n=10 of 164")
    assert "chat prompt v1" in figure.title
    (panel,) = figure.panels
    assert panel.metric == "pass@1"
    hues = colour_indices(["a", "b"])
    assert [(s.endpoint_id, s.colour_index) for s, _ in panel.bars] == [
        ("a", hues["a"]),
        ("b", hues["b"]),
    ]
    for series, found in panel.bars:
        share = PASSED[series.endpoint_id] / 10
        assert (found.mean, found.n) == (pytest.approx(share), 10)
        assert (found.low, found.high) == pytest.approx(wilson_95(share, 10))


def test_a_run_of_benchmarks_alone_says_why_quality_is_not_drawn(tmp_path) -> None:
    figures = figures_of(benchmark_run(tmp_path))
    for name in ("quality", "profile", "pareto"):
        omitted = figures[name]
        assert isinstance(omitted, Omitted), name
        assert omitted.reason == (
            "the run's only suites are standard benchmarks (HumanEval), which are not pooled "
            "into suite quality; see the benchmarks figure"
        )
    assert not isinstance(figures["speed"], Omitted)


def test_with_a_seed_suite_the_benchmark_stays_out_of_its_quality(tmp_path) -> None:
    figures = figures_of(benchmark_run(tmp_path, seed_suite=True))
    assert figures["quality"].suites == ("math",)
    assert isinstance(figures["benchmarks"], BenchmarkBars)


def test_a_run_without_a_benchmark_leaves_the_figure_out_and_says_why(tmp_path) -> None:
    from .published_run import published_snapshot

    figure = figures_of(published_snapshot(tmp_path))["benchmarks"]
    assert isinstance(figure, Omitted)
    assert figure.reason == "the run ran no standard benchmark (a dataset suite such as HumanEval)"


def test_every_speed_or_time_axis_says_the_simulator_clock(tmp_path) -> None:
    figures = figures_of(benchmark_run(tmp_path, seed_suite=True))
    for name in TIMED:
        assert figures[name].note.startswith(CLOCK), name
    for name in ("quality", "output_length", "benchmarks", "profile"):  # no clock in them
        assert "simulator" not in figures[name].note, name  # profile: speed ÷ the fastest


def test_different_clocks_are_named_per_endpoint(tmp_path) -> None:
    figures = figures_of(benchmark_run(tmp_path, seed_suite=True, scales=(20.0, 1.0)))
    note = "simulator ×20 for A Gemma4 MoE (official): times and speeds in modelled seconds"
    for name in (*TIMED, "profile"):  # one clock faster than the other: said beside the ratio
        assert figures[name].note.startswith(note) and "B Qwen" not in figures[name].note, name


def test_real_time_runs_say_nothing_of_a_clock(tmp_path) -> None:
    figures = figures_of(benchmark_run(tmp_path, seed_suite=True, scales=(1.0, 1.0)))
    assert not [n for n, f in figures.items() if "simulator" in getattr(f, "note", "")]


@pytest.mark.parametrize(
    ("label", "model_class", "width", "shown"),
    [
        ("RedHatAI Gemma4-26B MoE (official)", "moe", 44, "RedHatAI Gemma4-26B MoE (official)"),
        ("Qwen3.5-27B Dense (27B active)", "dense", 44, "Qwen3.5-27B Dense (27B active)"),
        ("Qwen3-30B-a3b-moe", "moe", 44, "Qwen3-30B-a3b-moe"),
        ("Qwen3.5-27B", "dense", 44, "Qwen3.5-27B (dense)"),
        ("Condensed-27B", "dense", 44, "Condensed-27B (dense)"),  # "dense" inside a word
        ("Gemma4-26B", "moe", 44, "Gemma4-26B (MoE)"),
        ("Gemma4-26B", "", 44, "Gemma4-26B (class unknown)"),
        # Cut at a word, never inside one; the class still said where the cut dropped it.
        ("Huihui Gemma4-26B MoE (abliterated)", "moe", 30, "Huihui Gemma4-26B MoE…"),
        ("Jiunsong SuperGemma4-26B (enhanced)", "moe", 30, "Jiunsong SuperGemma4-26B… (MoE)"),
    ],
)
def test_a_name_is_cut_at_a_word_and_names_its_class_once(
    label: str, model_class: str, width: int, shown: str
) -> None:
    assert Series("x", label, model_class, 0, None).named(width) == shown


def test_classes_are_written_as_the_lineup_writes_them() -> None:
    assert (class_label("moe"), class_label("dense")) == ("MoE", "dense")


@pytest.mark.slow  # draws the run's figures
def test_the_writeup_shows_the_figure_in_the_benchmark_section(tmp_path: Path, capsys) -> None:
    from nvfp4_tui.cli import main

    snapshot = benchmark_run(tmp_path / "snapshots")
    figures = tmp_path / "figures"
    args = ["report", str(snapshot), "--format", "markdown", "--figures", str(figures)]
    assert main(args) == 0
    text = capsys.readouterr().out
    quality = text.split("## Quality", 1)[1].split("\n## ", 1)[0]
    assert "The run's only suites are standard benchmarks (HumanEval)" in quality
    assert "|" not in quality  # no empty table
    section = text.split("## Standard benchmarks", 1)[1].split("\n## ", 1)[0]
    assert "HumanEval pass@1" in section
    (link,) = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", section)
    assert link.endswith("/benchmarks.png") and Path(link).is_file()
    assert "(benchmarks): " not in text  # drawn, so not among what the run cannot show

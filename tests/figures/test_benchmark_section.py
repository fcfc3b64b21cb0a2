"""Standard benchmarks in their own section: labelled by benchmark and protocol, scored with
the Wilson interval over distinct problems, and never pooled into the seed's suite averages
(the quality table, the Pareto frontier). The same figures reach the live state and a
snapshot's report."""

from __future__ import annotations

import pytest

from nvfp4_tui.core.events import BenchmarkSuite, PhasePlan, RunStarted, decode, encode
from nvfp4_tui.core.figures.benchmarks import benchmark_sections
from nvfp4_tui.core.figures.board import pareto_points, quality_table
from nvfp4_tui.core.figures.intervals import wilson_95
from nvfp4_tui.core.figures.scores import VERIFIED
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.output.report import benchmark_json, benchmark_table
from tests.support import factories
from tests.support.factories import T0, endpoint_info

HUMANEVAL = BenchmarkSuite(
    suite="humaneval",
    benchmark="HumanEval",
    metric="pass@1",
    sampling="greedy",
    protocol="chat prompt v1",
    problems=20,
    dataset_rows=164,
    rows_skipped=2,
)


def run(math_scores: list[float], humaneval_passes: list[bool]) -> FleetState:
    """Endpoint a: math answers scored as given; humaneval problems passed or not, each asked at
    two load levels (the same verdict at both)."""
    state = FleetState()
    state.apply(
        RunStarted(
            t=T0,
            run_id="r",
            run_name="bench",
            endpoints=(endpoint_info("a", 0),),
            phases=(PhasePlan("a", "math", 1, None), PhasePlan("a", "humaneval", 1, None)),
            benchmarks=(HUMANEVAL,),
        )
    )
    for i, score in enumerate(math_scores):
        state.apply(factories.request("a", suite="math", prompt_id=f"m{i}", score_verified=score))
    for concurrency in (1, 4):
        for i, passed in enumerate(humaneval_passes):
            state.apply(
                factories.request(
                    "a",
                    suite="humaneval",
                    prompt_id=f"HumanEval-{i}",
                    concurrency=concurrency,
                    score_verified=float(passed),
                    ttft_s=0.1,
                    e2e_s=1.1,
                    decode_tps=100.0,
                )
            )
    return state


def test_a_benchmark_has_its_own_labelled_section_and_stays_out_of_the_averages():
    passes = [True] * 15 + [False] * 5
    board = run([0.5, 0.7], passes).board()
    (section,) = benchmark_sections(board)
    assert section.label == "HumanEval pass@1, greedy, n=20 of 164, chat prompt v1"
    assert section.note == "2 unusable rows left out"
    ((endpoint, score),) = section.scores
    assert (endpoint, score.n) == ("a", 20)  # problems, not answers (40)
    assert score.mean == pytest.approx(0.75)
    assert (score.ci95_low, score.ci95_high) == pytest.approx(wilson_95(0.75, 20))
    quality = quality_table(board, VERIFIED)
    assert quality.suites == ("math",)
    assert quality.cell("math", "a").mean == pytest.approx(0.6)
    (point,) = pareto_points(board, VERIFIED)
    assert point.quality == pytest.approx(0.6)  # math alone; with humaneval it would read 0.74


def test_the_report_prints_and_exports_the_section_with_its_label():
    board = run([], [True, False, True, True]).board()
    (section,) = benchmark_sections(board)
    title, headers, rows = benchmark_table(section, {"a": "Model A"})
    assert title == (
        "Standard benchmark: HumanEval pass@1, greedy, n=20 of 164, chat prompt v1 "
        "(every load level; 2 unusable rows left out)"
    )
    assert headers == ["endpoint", "pass@1", "95% interval", "problems scored"]
    assert rows[0][:2] == ["Model A", "0.750"] and rows[0][3] == "4"
    (row,) = benchmark_json(board)
    assert (row["kind"], row["endpoint"], row["score"], row["problems_scored"]) == (
        "benchmark",
        "a",
        0.75,
        4,
    )
    assert row["label"] == section.label and row["rows_skipped"] == 2


def test_the_record_survives_the_pipe_and_an_older_run_has_none():
    started = RunStarted(T0, "r", "n", (endpoint_info("a", 0),), (), benchmarks=(HUMANEVAL,))
    assert decode(encode(started)) == started
    older = encode(RunStarted(T0, "r", "n", (endpoint_info("a", 0),), ()))
    assert decode(older.replace(b',"benchmarks":[]', b"")).benchmarks == ()

"""Read-outs derived from FleetState: sparkline bins, histograms, badges, and the leaderboard's
figures (nvfp4_tui.core.figures.board) as the live state feeds them."""

from __future__ import annotations

import pytest

from nvfp4_tui.core.events import (
    EndpointInfo,
    PhaseFinished,
    PhasePlan,
    RunStarted,
)
from nvfp4_tui.core.figures.board import (
    ROUTE_MIN_PROMPTS,
    pareto_points,
    quality_table,
    route_by_task,
    speed_rows,
)
from nvfp4_tui.core.figures.scores import HEURISTIC
from nvfp4_tui.core.readouts import TpsPoint
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui.readouts import (
    class_badge,
    decode_bins,
    histogram,
    load_curves,
    short_labels,
)
from tests.support.factories import T0, request


def _info(eid: str, model_class: str = "moe", label: str | None = None) -> EndpointInfo:
    return EndpointInfo(eid, label or eid, "http://127.0.0.1:1", "m", None, model_class)


class Run:
    """A hand-made run: each request's score and decode speed chosen by the test."""

    def __init__(self, *infos: EndpointInfo, suites=("math",), concurrency=(1,)) -> None:
        self.state = FleetState()
        plans = tuple(
            PhasePlan(i.id, suite, c, 10) for i in infos for c in concurrency for suite in suites
        )
        self.state.apply(RunStarted(T0, "r", "run", infos, plans))
        self.index = 0

    def request(self, eid: str, suite: str, score: float, decode_tps: float, c: int = 1) -> None:
        self.index += 1
        self.state.apply(
            request(
                eid,
                t=T0 + self.index,
                suite=suite,
                prompt_id=f"p{self.index}",
                concurrency=c,
                request_index=self.index,
                ttft_s=0.1,
                e2e_s=2.0,
                tokens_out=100,
                decode_tps=decode_tps,
                e2e_tps=decode_tps * 0.9,
                score_heuristic=score,
            )
        )


def test_decode_bins_take_each_bins_highest_and_hold_briefly() -> None:
    now = T0 + 10
    points = [TpsPoint(T0 + 0.5, 0.0), TpsPoint(T0 + 0.6, 100.0), TpsPoint(T0 + 2.5, 50.0)]
    bins = decode_bins(points, now, window_s=10, bins=10, hold_s=2.0)
    assert bins[0] == 100.0  # the 0 of a stream waiting for its first token does not pull it down
    assert bins[1] == 100.0  # held: the next point is under hold_s away
    assert bins[2] == 50.0
    assert bins[3:5] == [50.0, 50.0]
    assert bins[5:] == [0.0] * 5  # nothing streamed for longer than hold_s


def test_decode_bins_ignore_points_outside_the_window() -> None:
    points = [TpsPoint(T0 - 100, 99.0), TpsPoint(T0 + 100, 99.0)]
    assert decode_bins(points, T0 + 10, window_s=10, bins=5) == [0.0] * 5


def test_histogram() -> None:
    centres, counts = histogram([0.0, 1.0, 1.0, 4.0], 4)
    assert counts == [1, 2, 0, 1]
    assert centres == [0.5, 1.5, 2.5, 3.5]
    assert histogram([], 4) == ([], [])
    assert histogram([2.0, 2.0], 4) == ([2.0], [2])


def test_class_badge() -> None:
    moe = EndpointInfo("a", "A", "u", "m", 0, "moe", active_params_b=3.0, experts=256)
    dense = EndpointInfo("b", "B", "u", "m", 1, "dense", active_params_b=27.0)
    assert class_badge(moe) == "MoE 3B/256E"
    assert class_badge(dense) == "Dense 27B"
    assert class_badge(EndpointInfo("c", "C", "u", "m", None, "dense")) == "Dense"


def test_short_labels_fall_back_to_full_labels_on_a_clash() -> None:
    distinct = [_info("a", label="Qwen3.6-35B-A3B"), _info("b", label="RedHatAI Gemma4-26B")]
    assert short_labels(distinct) == {"a": "Qwen3.6", "b": "RedHatAI"}
    clash = [_info("a", label="Gemma4-26B"), _info("b", label="Gemma4-31B")]
    assert short_labels(clash) == {"a": "Gemma4-26B", "b": "Gemma4-31B"}


def test_quality_table_marks_the_best_per_suite_at_base_concurrency() -> None:
    run = Run(_info("a"), _info("b"), suites=("math", "coding"), concurrency=(1, 4))
    for score in (0.9, 0.8, 0.85):
        run.request("a", "math", score, 100)
        run.request("b", "math", score - 0.2, 100)
    run.request("b", "coding", 0.7, 100)
    run.request("a", "coding", 0.99, 100, c=4)  # not at the base concurrency
    table = quality_table(run.state.board(), HEURISTIC)
    assert run.state.board().base_load == Load("concurrency", 1)
    assert table.suites == ("math", "coding")
    assert table.best == {"math": frozenset({"a"}), "coding": frozenset({"b"})}
    math_a = table.cell("math", "a")
    assert math_a is not None and math_a.n == 3 and math_a.ci95_low is not None
    assert table.cell("coding", "a") is None


def test_speed_rows_compare_with_each_class_average() -> None:
    run = Run(_info("m1"), _info("m2"), _info("d1", "dense"))
    run.request("m1", "math", 0.8, 150)
    run.request("m2", "math", 0.8, 130)
    run.request("d1", "math", 0.8, 56)
    rows, averages = speed_rows(run.state.board())
    assert averages == {"moe": pytest.approx(140), "dense": pytest.approx(56)}
    m1 = next(r for r in rows if r.endpoint_id == "m1")
    assert m1.vs_class["moe"] == pytest.approx(150 / 140)
    assert m1.vs_class["dense"] == pytest.approx(150 / 56)
    assert m1.e2e_tps == pytest.approx(135)


def test_pareto_frontier() -> None:
    run = Run(_info("fast"), _info("good"), _info("both_worse"), _info("tie"))
    run.request("fast", "math", 0.6, 150)
    run.request("good", "math", 0.9, 50)
    run.request("both_worse", "math", 0.5, 40)
    run.request("tie", "math", 0.6, 150)  # equal to "fast": neither dominates the other
    frontier = {p.endpoint_id for p in pareto_points(run.state.board(), HEURISTIC) if p.on_frontier}
    assert frontier == {"fast", "good", "tie"}


def test_route_picks_the_fastest_within_the_best_interval() -> None:
    run = Run(_info("best"), _info("close_fast"), _info("far_faster"))
    for _ in range(4):
        for score in (0.90, 0.80, 0.85):  # mean 0.85 over 12: Wilson roughly 0.58..0.96
            run.request("best", "math", score, 50)
        for score in (0.80, 0.82, 0.81):  # mean 0.81: inside the best's interval
            run.request("close_fast", "math", score, 130)
        for score in (0.20, 0.22, 0.21):  # far below: never picked however fast
            run.request("far_faster", "math", score, 300)
    (route,) = route_by_task(run.state.board(), HEURISTIC)
    assert route.best_id == "best"
    assert route.best_ci95 is not None and route.best_ci95[0] < 0.81 < route.best_ci95[1] <= 1
    assert route.endpoint_id == "close_fast"
    assert route.tied == 2
    assert route.decode_tps == pytest.approx(130)


def test_route_says_too_few_answers_below_its_minimum() -> None:
    run = Run(_info("best"), _info("fast"))
    for _ in range(ROUTE_MIN_PROMPTS - 1):
        run.request("best", "math", 0.9, 50)
        run.request("fast", "math", 0.1, 130)
    (route,) = route_by_task(run.state.board(), HEURISTIC)
    assert route.endpoint_id is None and route.min_prompts == ROUTE_MIN_PROMPTS - 1
    run.request("best", "math", 0.9, 50)
    run.request("fast", "math", 0.1, 130)
    (route,) = route_by_task(run.state.board(), HEURISTIC)
    assert route.endpoint_id == "best"


def test_load_curves_and_knees_from_the_load_points() -> None:
    # Phase i at concurrency c: c requests of 100 tokens over 1 s, so c x 100 tok/s; flat from
    # c=4 on, the knee is c=4. "b" ran c=1 only: one point, no knee.
    levels = (1, 2, 4, 8)
    run = Run(_info("a"), _info("b"), concurrency=levels)
    for index, c in enumerate(levels):
        for i in range(c):
            run.state.apply(
                request(
                    t=T0 + 10 * index,
                    suite="math",
                    prompt_id="p",
                    concurrency=c,
                    phase_index=index,
                    request_index=i,
                    ttft_s=0.1,
                    e2e_s=1.0,
                    tokens_out=100 * min(c, 4) // c,
                )
            )
        run.state.apply(
            PhaseFinished(T0 + 10 * index + 1, "a", "math", c, index, c, 0, 100 * min(c, 4), 1.0)
        )
    run.request("b", "math", 0.5, 100)
    run.state.apply(PhaseFinished(T0 + 100, "b", "math", 1, 0, 1, 0, 100, 1.0))
    a, b = load_curves(run.state, run.state.board())
    assert [(load.label, tps) for load, tps in a.points] == [
        ("c=1", pytest.approx(100.0)),
        ("c=2", pytest.approx(200.0)),
        ("c=4", pytest.approx(400.0)),
        ("c=8", pytest.approx(400.0)),
    ]
    assert a.knee == Load("concurrency", 4)
    assert b.endpoint_id == "b" and len(b.points) == 1 and b.knee is None

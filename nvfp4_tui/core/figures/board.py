"""The fleet's figures at its base load level, from the leaderboard: quality per suite, speed
against each class's average, the Pareto frontier of quality against speed, and the route per
task. The leaderboard screen, the text report and the JSON read these, never their own sums.

The base level is the lowest load planned or seen (closed loop before open), the level the
seed's quality and speed tables use.

Suites that run a dataset (``Board.benchmarks``: HumanEval, a JSONL file) have their own
section (``figures.benchmarks``); the quality table and the Pareto frontier pool the seed's
suites alone, so a benchmark never moves a seed-comparable average.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from nvfp4_tui.core.events import BenchmarkSuite, EndpointInfo
from nvfp4_tui.core.figures.intervals import wilson_95
from nvfp4_tui.core.figures.leaderboard import LeaderRow, LevelRow
from nvfp4_tui.core.figures.scores import shown_score
from nvfp4_tui.core.figures.timings import pooled
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.stats import RunningStats, StatsSummary

# Below this many distinct prompts scored on a suite, an endpoint is not routed to, nor routed
# away from. Prompts, not answers: the repeats of one prompt (at each load level, each request
# of a phase) share its difficulty, so ten answers to three prompts are three pieces of evidence.
# A Wilson interval over 5 is still about ±0.3 wide; fewer decide nothing.
ROUTE_MIN_PROMPTS = 5
# Past this a figure is left off a chart: a range that far out overflows as it is drawn.
LARGEST_SHOWN = 1e300

SpeedMetric = Literal["decode_tps", "e2e_tps"]


@dataclass(frozen=True)
class Board:
    """A run's leaderboard, with what its figures need to be read."""

    endpoints: tuple[EndpointInfo, ...]
    rows: tuple[LeaderRow, ...]
    levels: tuple[LevelRow, ...]
    planned_loads: tuple[Load, ...] = ()
    benchmarks: tuple[BenchmarkSuite, ...] = ()  # the run's dataset suites

    __hash__ = None  # type: ignore[assignment]  # its rows hold mappings

    @property
    def endpoint_ids(self) -> tuple[str, ...]:
        known = tuple(e.id for e in self.endpoints)
        return known + tuple(
            dict.fromkeys(r.endpoint for r in self.rows if r.endpoint not in known)
        )

    @property
    def suites(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.suite for r in self.rows))

    @property
    def benchmark_suites(self) -> frozenset[str]:
        return frozenset(b.suite for b in self.benchmarks)

    @property
    def seed_suites(self) -> tuple[str, ...]:
        """The suites whose scores pool into averages: every one but the benchmarks."""
        return tuple(s for s in self.suites if s not in self.benchmark_suites)

    def has_scores(self, name: str) -> bool:
        return any(r.score(name).n for r in self.rows)

    def shown_score(self, wanted: str | None = None) -> str:
        """The score the tables show: the default (verified), or heuristic where a run has no
        verified scores; ``wanted`` asks for another."""
        return (
            shown_score(self.has_scores) if wanted is None else shown_score(self.has_scores, wanted)
        )

    @property
    def base_load(self) -> Load | None:
        loads = {*self.planned_loads, *(r.load for r in self.rows)}
        return min(loads, key=lambda load: load.order) if loads else None

    def at_base(self, endpoint_id: str) -> dict[str, LeaderRow]:
        base = self.base_load
        return {r.suite: r for r in self.rows if r.endpoint == endpoint_id and r.load == base}

    def level_loads(self) -> list[Load]:
        return sorted({row.load for row in self.levels}, key=lambda load: load.order)

    def throughput(self) -> dict[tuple[str, Load], LevelRow]:
        return {(row.endpoint, row.load): row for row in self.levels}


def pooled_mean(summaries: Iterable[StatsSummary]) -> float | None:
    """The mean over all samples behind several summaries (each weighted by its n)."""
    total, n = 0.0, 0
    for s in summaries:
        if s.mean is not None and s.n:
            total += s.mean * s.n
            n += s.n
    return total / n if n else None


def speed_of(rows: Iterable[LeaderRow], speed: SpeedMetric) -> float | None:
    """Several cells' speed together: decode tok/s pooled over their requests (tokens after
    the first chunk over the seconds decoding, ``figures.timings``), or e2e tok/s as the mean
    per request (the seed's "tok/s")."""
    if speed == "decode_tps":
        return pooled(r.decode for r in rows)
    return pooled_mean(r.e2e_tps for r in rows)


def pooled_stats(summaries: Iterable[StatsSummary]) -> StatsSummary:
    """Count, mean, std and the t interval over all samples behind several summaries: the
    ``pooled_mean`` with the interval its samples give (a summary of one sample has no std and
    adds no spread)."""
    return RunningStats.merged(
        RunningStats.of_moments(s.n, s.mean, (s.std or 0.0) ** 2 * (s.n - 1))
        for s in summaries
        if s.mean is not None and s.n
    ).summary()


@dataclass(frozen=True)
class QualityTable:
    """Quality per suite (rows) and endpoint (columns) at the base level, best per row marked."""

    load: Load | None
    score_name: str
    suites: tuple[str, ...]
    endpoint_ids: tuple[str, ...]
    cells: dict[tuple[str, str], StatsSummary]  # (suite, endpoint id)
    best: dict[str, frozenset[str]]  # suite -> endpoint ids with the highest mean

    def cell(self, suite: str, endpoint_id: str) -> StatsSummary | None:
        return self.cells.get((suite, endpoint_id))


def quality_table(board: Board, score_name: str) -> QualityTable:
    cells: dict[tuple[str, str], StatsSummary] = {}
    for eid in board.endpoint_ids:
        for suite, row in board.at_base(eid).items():
            if suite not in board.benchmark_suites and (stats := row.score(score_name)).n:
                cells[(suite, eid)] = stats
    best: dict[str, frozenset[str]] = {}
    for suite in board.seed_suites:
        means = {
            eid: s.mean for (sx, eid), s in cells.items() if sx == suite and s.mean is not None
        }
        if means:
            top = max(means.values())
            best[suite] = frozenset(eid for eid, m in means.items() if math.isclose(m, top))
    return QualityTable(
        board.base_load, score_name, board.seed_suites, board.endpoint_ids, cells, best
    )


def class_averages(
    means: dict[str, float | None], classes: dict[str, str]
) -> dict[str, float | None]:
    """Per class, the mean of its endpoints' ``means``, each endpoint counting once (the
    seed's "Gemma4 MoE (avg)"); None for a class none of whose endpoints has one."""
    averages: dict[str, float | None] = {}
    for model_class in dict.fromkeys(classes.values()):
        values = [
            v
            for eid, c in classes.items()
            if c == model_class and (v := means.get(eid)) is not None
        ]
        averages[model_class] = sum(values) / len(values) if values else None
    return averages


@dataclass(frozen=True)
class SpeedRow:
    """One endpoint's speed at the base level, and how it compares with each class."""

    endpoint_id: str
    model_class: str
    decode_tps: float | None  # pooled over every suite's requests (``speed_of``)
    e2e_tps: float | None
    # class -> its speed over that class's average: decode tok/s, or e2e tok/s in a run that
    # timed no first token (speed_metric)
    vs_class: dict[str, float | None]


def _versus(decode_tps: float | None, averages: dict[str, float | None]) -> dict[str, float | None]:
    return {
        c: (decode_tps / avg if decode_tps is not None and avg else None)
        for c, avg in averages.items()
    }


def speed_rows(board: Board) -> tuple[tuple[SpeedRow, ...], dict[str, float | None]]:
    """Per endpoint: decode and e2e tok/s at the base level; and each class's average of the
    ``speed_metric``, the mean of its endpoints' means, each endpoint counting once (as the
    seed's "Gemma4 MoE (avg)")."""
    classes = {e.id: e.model_class for e in board.endpoints}
    decode: dict[str, float | None] = {}
    e2e: dict[str, float | None] = {}
    for eid in board.endpoint_ids:
        at_base = board.at_base(eid).values()
        decode[eid] = speed_of(at_base, "decode_tps")
        e2e[eid] = speed_of(at_base, "e2e_tps")
    compared = decode if speed_metric(board) == "decode_tps" else e2e
    averages = class_averages(compared, classes)
    rows = tuple(
        SpeedRow(
            endpoint_id=eid,
            model_class=classes.get(eid, ""),
            decode_tps=decode[eid],
            e2e_tps=e2e[eid],
            vs_class=_versus(compared[eid], averages),
        )
        for eid in board.endpoint_ids
    )
    return rows, averages


@dataclass(frozen=True)
class ParetoPoint:
    endpoint_id: str
    speed_tps: float  # the per-request mean of the speed asked for (decode tok/s by default)
    quality: float
    on_frontier: bool


def speed_metric(board: Board) -> SpeedMetric:
    """The speed a figure plots: decode tok/s, or e2e tok/s for a run that timed no first
    token (a legacy import: its rate includes prefill)."""
    return "decode_tps" if any(r.decode_tps.n for r in board.rows) else "e2e_tps"


def pareto_points(
    board: Board, score_name: str, speed: SpeedMetric = "decode_tps"
) -> list[ParetoPoint]:
    """Mean quality against mean ``speed`` at the base level; the frontier is marked.

    A point is on the frontier when no other endpoint is at least as fast and at least as good
    while strictly better in one of the two. A mean no chart can place (not finite, or past
    ``LARGEST_SHOWN``) leaves its endpoint off.
    """
    raw: list[tuple[str, float, float]] = []
    for eid in board.endpoint_ids:
        rows = board.at_base(eid).values()
        tps = pooled_mean(getattr(r, speed) for r in rows)
        quality = pooled_mean(
            r.score(score_name) for r in rows if r.suite not in board.benchmark_suites
        )
        if tps is not None and quality is not None and _chartable(tps, quality):
            raw.append((eid, tps, quality))

    def dominated(s: float, q: float) -> bool:
        return any(s2 >= s and q2 >= q and (s2 > s or q2 > q) for _, s2, q2 in raw)

    return [ParetoPoint(eid, s, q, not dominated(s, q)) for eid, s, q in raw]


def _chartable(*values: float) -> bool:
    return all(math.isfinite(v) and abs(v) <= LARGEST_SHOWN for v in values)


@dataclass(frozen=True)
class ParetoAxes:
    """The chart's ranges, each as (low, high) with low < high."""

    speed_tps: tuple[float, float]
    quality: tuple[float, float]


def pareto_axes(points: Iterable[ParetoPoint]) -> ParetoAxes | None:
    """Ranges that frame every point with a margin; None without points.

    A margin of a fixed size vanishes beside a large value (4.9e19 ± 1 is 4.9e19 again), and a
    chart of an empty range divides by zero, so each margin is also a sliver of the values' own
    size.
    """
    points = list(points)
    if not points:
        return None
    return ParetoAxes(
        padded_range([p.speed_tps for p in points], share=0.08, least=1.0),
        padded_range([p.quality for p in points], share=0.15, least=0.01),
    )


def padded_range(values: list[float], *, share: float, least: float) -> tuple[float, float]:
    """The finite ``values``' range widened on each side by ``share`` of its width, and by at
    least ``least`` and a millionth of the largest magnitude; always a range of some width."""
    # Clamped so that the range, its margins and its width all stay finite.
    finite = [min(max(v, -LARGEST_SHOWN), LARGEST_SHOWN) for v in values if math.isfinite(v)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 0.0)
    pad = max(least, (high - low) * share, max(abs(low), abs(high)) * 1e-6)
    return low - pad, high + pad


def prompt_score(rows: Iterable[LeaderRow], score_name: str) -> StatsSummary:
    """One score over several cells (an endpoint's load levels): the mean of every answer, with
    ``n`` the distinct prompts behind it and the Wilson interval over that n."""
    rows = list(rows)
    prompts = frozenset().union(*(row.scored_prompts.get(score_name, ()) for row in rows))
    mean = pooled_mean(row.score(score_name) for row in rows)
    interval = wilson_95(mean, len(prompts)) if mean is not None else None
    return StatsSummary(
        n=len(prompts),
        mean=mean,
        std=None,
        ci95_low=interval[0] if interval else None,
        ci95_high=interval[1] if interval else None,
    )


@dataclass(frozen=True)
class Route:
    """For one suite: the fastest endpoint whose quality is within the best one's 95% interval,
    or, with too few prompts to tell, no pick (``endpoint_id`` None) and the fewest seen.
    Quality pools every load level (an answer's score does not depend on the load it ran
    under), its interval counting prompts; speed is the base level's."""

    suite: str
    endpoint_id: str | None
    quality: float | None
    decode_tps: float | None
    best_id: str | None
    best_quality: float | None
    best_ci95: tuple[float, float] | None
    tied: int  # endpoints within the best's interval, the pick included
    min_prompts: int  # the fewest distinct prompts scored among the endpoints compared


def route_by_task(board: Board, score_name: str) -> list[Route]:
    """Per suite with scores: the pick among the endpoints statistically tied with the best,
    once every endpoint scored on it has at least ``ROUTE_MIN_PROMPTS`` prompts scored."""
    routes = []
    for suite in board.suites:
        scored = {
            eid: s
            for eid in board.endpoint_ids
            if (
                s := prompt_score(
                    (r for r in board.rows if r.endpoint == eid and r.suite == suite), score_name
                )
            ).mean
            is not None
        }
        if not scored:
            continue
        min_prompts = min(s.n for s in scored.values())
        if min_prompts < ROUTE_MIN_PROMPTS:
            routes.append(Route(suite, None, None, None, None, None, None, 0, min_prompts))
            continue
        best_id = max(scored, key=lambda eid: scored[eid].mean or 0.0)
        best = scored[best_id]
        ci = (
            (best.ci95_low, best.ci95_high)
            if best.ci95_low is not None and best.ci95_high is not None
            else None
        )
        floor = ci[0] if ci else best.mean or 0.0
        speed = {
            eid: row.decode.pooled_tps if (row := board.at_base(eid).get(suite)) else None
            for eid in scored
        }
        tied = [eid for eid, s in scored.items() if (s.mean or 0.0) >= floor]
        pick = max(tied, key=lambda eid: (speed[eid] or 0.0, scored[eid].mean or 0.0))
        routes.append(
            Route(
                suite=suite,
                endpoint_id=pick,
                quality=scored[pick].mean,
                decode_tps=speed[pick],
                best_id=best_id,
                best_quality=best.mean,
                best_ci95=ci,
                tied=len(tied),
                min_prompts=min_prompts,
            )
        )
    return routes

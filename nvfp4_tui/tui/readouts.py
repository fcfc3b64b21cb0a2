"""Read-outs the views derive from FleetState's public data: leaderboard tables, routes, series.

Everything here is a pure function of the state (and ``now`` where time matters): no Textual, no
I/O, so it is tested without an app. The leaderboard read-outs follow the seed's tables: quality
per suite at the lowest load level (concurrency, or request rate for an open-loop run), speed
relative to each class's average, aggregate throughput against load with each endpoint's knee;
then what the seed only argued in prose, computed: the Pareto frontier of quality against speed
and, per suite, the fastest endpoint whose quality is statistically tied with the best.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nvfp4_tui.events import EndpointInfo
from nvfp4_tui.slo import CapacityRow, Load, LoadKind, LoadPoint
from nvfp4_tui.state import EndpointState, FleetState, LeaderRow, TpsPoint
from nvfp4_tui.stats import StatsSummary
from nvfp4_tui.tui import units

CLASS_NAMES = {"moe": "MoE", "dense": "Dense"}

# The quality scores the views switch between: the suite's verifying scorer (answers checked:
# tests run, numbers compared, schemas validated), the seed's text heuristic, which is comparable
# with the seed's published tables but not with correctness, and an LLM judge's rubric grade
# where the profile names a judge.
VERIFIED = "score_verified"
HEURISTIC = "score_heuristic"
JUDGE = "score_judge"
SCORE_LABELS = {VERIFIED: "verified", HEURISTIC: "heuristic", JUDGE: "judge"}
SCORE_CYCLE = (VERIFIED, HEURISTIC, JUDGE)


def _has_scores(state: FleetState, score_name: str) -> bool:
    return any(
        (stats := e.quality_overall.get(score_name)) is not None and stats.n
        for e in state.endpoints.values()
    )


def shown_score(state: FleetState, wanted: str) -> str:
    """The score to show when ``wanted`` is asked for: verified falls back to heuristic for a
    run that has heuristic scores and no verified ones (an imported or older snapshot)."""
    if wanted == VERIFIED and not _has_scores(state, VERIFIED) and _has_scores(state, HEURISTIC):
        return HEURISTIC
    return wanted


def next_score(state: FleetState, shown: str) -> str | None:
    """The score ``v`` switches to from ``shown``: the next of ``SCORE_CYCLE`` the run can show
    (the judge's only once it has graded something); None when there is no other."""
    start = SCORE_CYCLE.index(shown) if shown in SCORE_CYCLE else -1
    for name in SCORE_CYCLE[start + 1 :] + SCORE_CYCLE[: start + 1]:
        available = _has_scores(state, name) if name == JUDGE else shown_score(state, name) == name
        if name != shown and available:
            return name
    return None


def class_name(model_class: str) -> str:
    return CLASS_NAMES.get(model_class, model_class)


def class_badge(info: EndpointInfo) -> str:
    """``MoE 3B/256E`` or ``Dense 27B``: the class with active parameters and experts."""
    parts = [class_name(info.model_class)]
    if info.active_params_b is not None:
        parts.append(f"{info.active_params_b:g}B")
    if info.experts is not None:
        parts[-1] = f"{parts[-1]}/{info.experts}E" if len(parts) > 1 else f"{info.experts}E"
    return " ".join(parts)


def short_labels(endpoints: Sequence[EndpointInfo]) -> dict[str, str]:
    """Column headers: each label's first word up to its first hyphen, unless two would clash."""
    short = {e.id: e.label.split()[0].split("-")[0] if e.label.strip() else e.id for e in endpoints}
    if len(set(short.values())) < len(short):
        return {e.id: e.label for e in endpoints}
    return short


def phase_text(endpoint: EndpointState) -> str | None:
    """The phase running now, e.g. ``math · c4`` or ``math · 2 req/s``; None between phases."""
    phase = endpoint.current_phase
    if phase is None:
        return None
    # A closed loop keeps the header's compact "c4"; an open loop says its rate.
    level = phase.load.label if phase.rate_rps is not None else f"c{phase.concurrency}"
    return f"{phase.suite} · {level}"


def decode_bins(
    points: Iterable[TpsPoint],
    now: float,
    *,
    window_s: float = 60.0,
    bins: int = 60,
    hold_s: float = 2.0,
) -> list[float]:
    """Decode tok/s over the last ``window_s`` in ``bins`` equal bins (each bin's highest point).

    The highest, not the mean: a stream waiting for its first token reports 0 tok/s, and those
    zeros say nothing about decode speed.

    A bin without points holds the previous value while the last point is under ``hold_s`` old
    (progress arrives a few times a second, so narrow bins would otherwise flicker to zero), and
    is 0 after that: nothing was streaming.
    """
    if bins < 1:
        return []
    start = now - window_s
    width_s = window_s / bins
    highest: list[float | None] = [None] * bins
    for point in points:
        if start <= point.t <= now:
            index = min(bins - 1, int((point.t - start) / width_s))
            value = highest[index]
            highest[index] = point.decode_tps if value is None else max(value, point.decode_tps)
    values: list[float] = []
    held, held_t = 0.0, -math.inf
    for index in range(bins):
        value = highest[index]
        if value is not None:
            held, held_t = value, start + (index + 1) * width_s
            values.append(held)
        else:
            bin_end = start + (index + 1) * width_s
            values.append(held if bin_end - held_t <= hold_s else 0.0)
    return values


def histogram(values: Sequence[float], bins: int) -> tuple[list[float], list[int]]:
    """Equal-width bins from the lowest to the highest value: (bin centres, counts)."""
    values = [v for v in values if math.isfinite(v)]  # a damaged snapshot's NaN or inf
    if not values or bins < 1:
        return [], []
    low, high = min(values), max(values)
    if high <= low:
        return [low], [len(values)]
    width = (high - low) / bins
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, int((value - low) / width))] += 1
    return [low + width * (i + 0.5) for i in range(bins)], counts


# ---- leaderboard ------------------------------------------------------------------------------


def base_load(state: FleetState) -> Load | None:
    """The lowest load level planned or seen: the level the seed's quality and speed tables use
    (closed loop before open, so a run with both reads at its lowest concurrency)."""
    levels = {p.load for e in state.endpoints.values() for p in e.phase_progress()}
    return min(levels, key=lambda load: load.order) if levels else None


def base_text(state: FleetState) -> str:
    """The base load level as titles show it: ``c=1``, ``2 req/s``, or an em dash."""
    load = base_load(state)
    return units.DASH if load is None else load.label


def _rows_at(
    endpoint: EndpointState, load: Load | None, score_name: str = HEURISTIC
) -> dict[str, LeaderRow]:
    return {r.suite: r for r in endpoint.leaderboard(score_name) if r.load == load}


def _pooled_mean(summaries: Iterable[StatsSummary]) -> float | None:
    """The mean over all samples behind several summaries (each weighted by its n)."""
    total, n = 0.0, 0
    for s in summaries:
        if s.mean is not None and s.n:
            total += s.mean * s.n
            n += s.n
    return total / n if n else None


@dataclass(frozen=True)
class QualityTable:
    """Quality per suite (rows) and endpoint (columns) at one load level, best per row marked."""

    load: Load | None
    suites: tuple[str, ...]
    endpoint_ids: tuple[str, ...]
    cells: dict[tuple[str, str], StatsSummary]  # (suite, endpoint id)
    best: dict[str, frozenset[str]]  # suite -> endpoint ids with the highest mean

    def cell(self, suite: str, endpoint_id: str) -> StatsSummary | None:
        return self.cells.get((suite, endpoint_id))


def quality_table(state: FleetState, score_name: str = HEURISTIC) -> QualityTable:
    load = base_load(state)
    suites: dict[str, None] = {}
    cells: dict[tuple[str, str], StatsSummary] = {}
    for endpoint in state.endpoints.values():
        suites.update(dict.fromkeys(endpoint.suites()))
        for suite, row in _rows_at(endpoint, load, score_name).items():
            if row.quality.n:
                cells[(suite, endpoint.id)] = row.quality
    best: dict[str, frozenset[str]] = {}
    for suite in suites:
        means = {
            eid: s.mean for (sx, eid), s in cells.items() if sx == suite and s.mean is not None
        }
        if means:
            top = max(means.values())
            best[suite] = frozenset(eid for eid, m in means.items() if math.isclose(m, top))
    return QualityTable(load, tuple(suites), tuple(state.endpoints), cells, best)


@dataclass(frozen=True)
class SpeedRow:
    """One endpoint's speed at the base load level, and how it compares with each class."""

    endpoint_id: str
    model_class: str
    decode_tps: float | None
    e2e_tps: float | None
    vs_class: dict[str, float | None]  # class -> decode tok/s over that class's average


def speed_rows(state: FleetState) -> tuple[tuple[SpeedRow, ...], dict[str, float | None]]:
    """Per endpoint: decode and e2e tok/s at the base load level; and each class's average.

    A class average is the mean of its endpoints' means, each endpoint counting once (as the
    seed's "Gemma4 MoE (avg)").
    """
    load = base_load(state)
    decode: dict[str, float | None] = {}
    e2e: dict[str, float | None] = {}
    for endpoint in state.endpoints.values():
        rows = _rows_at(endpoint, load).values()
        decode[endpoint.id] = _pooled_mean(r.decode_tps for r in rows)
        e2e[endpoint.id] = _pooled_mean(r.e2e_tps for r in rows)
    classes = list(dict.fromkeys(e.info.model_class for e in state.endpoints.values()))
    averages: dict[str, float | None] = {}
    for model_class in classes:
        values = [
            v
            for e in state.endpoints.values()
            if e.info.model_class == model_class and (v := decode[e.id]) is not None
        ]
        averages[model_class] = sum(values) / len(values) if values else None
    rows = tuple(
        SpeedRow(
            endpoint_id=e.id,
            model_class=e.info.model_class,
            decode_tps=decode[e.id],
            e2e_tps=e2e[e.id],
            vs_class={
                c: (decode[e.id] / avg if decode[e.id] is not None and avg else None)
                for c, avg in averages.items()
            },
        )
        for e in state.endpoints.values()
    )
    return rows, averages


@dataclass(frozen=True)
class LoadCurve:
    """One endpoint's aggregate throughput against load, and its knee (None: still growing)."""

    endpoint_id: str
    points: tuple[tuple[Load, float], ...]  # (load level, tok/s), lowest load first
    knee: Load | None


def load_curves(state: FleetState) -> list[LoadCurve]:
    """Per endpoint, in the run's order: throughput at each load level it has counted requests
    at, and the knee, both as the capacity table and the sweep's stop rule read them."""
    curves = []
    for endpoint in state.endpoints.values():
        points: tuple[LoadPoint, ...] = endpoint.load.points()
        knee = endpoint.load.knee()
        curves.append(
            LoadCurve(
                endpoint.id,
                tuple((p.load, p.throughput_tps) for p in points if p.throughput_tps is not None),
                knee.load if knee is not None else None,
            )
        )
    return curves


@dataclass(frozen=True)
class ParetoPoint:
    endpoint_id: str
    decode_tps: float
    quality: float
    on_frontier: bool


def pareto_points(state: FleetState, score_name: str = HEURISTIC) -> list[ParetoPoint]:
    """Mean quality against decode tok/s at the base load level; the frontier is marked.

    A point is on the frontier when no other endpoint is at least as fast and at least as good
    while strictly better in one of the two.
    """
    load = base_load(state)
    raw: list[tuple[str, float, float]] = []
    for endpoint in state.endpoints.values():
        rows = _rows_at(endpoint, load, score_name).values()
        speed = _pooled_mean(r.decode_tps for r in rows)
        quality = _pooled_mean(r.quality for r in rows)
        if speed is not None and quality is not None:
            raw.append((endpoint.id, speed, quality))

    def dominated(s: float, q: float) -> bool:
        return any(s2 >= s and q2 >= q and (s2 > s or q2 > q) for _, s2, q2 in raw)

    return [ParetoPoint(eid, s, q, not dominated(s, q)) for eid, s, q in raw]


@dataclass(frozen=True)
class Route:
    """For one suite: the fastest endpoint whose quality is within the best one's 95% CI."""

    suite: str
    endpoint_id: str
    quality: float
    decode_tps: float | None
    best_id: str
    best_quality: float
    best_ci95: tuple[float, float] | None  # None while the best has n < 3
    tied: int  # endpoints within the best's CI, the pick included


def route_by_task(state: FleetState, score_name: str = HEURISTIC) -> list[Route]:
    """Per suite with scores: the pick among the endpoints statistically tied with the best.

    Without a CI (the best has fewer than three scores) only exact ties with the best qualify.
    Speed is the endpoint's decode tok/s on that suite at the base load level.
    """
    table = quality_table(state, score_name)
    routes = []
    for suite in table.suites:
        scored = {
            eid: s
            for eid in table.endpoint_ids
            if (s := table.cell(suite, eid)) and s.mean is not None
        }
        if not scored:
            continue
        best_id = max(scored, key=lambda eid: scored[eid].mean or 0.0)
        best = scored[best_id]
        assert best.mean is not None
        ci = (
            (best.ci95_low, best.ci95_high)
            if best.ci95_low is not None and best.ci95_high is not None
            else None
        )
        floor = ci[0] if ci else best.mean
        speed: dict[str, float | None] = {}
        for eid in scored:
            row = _rows_at(state.endpoints[eid], table.load).get(suite)
            speed[eid] = row.decode_tps.mean if row else None
        tied = [eid for eid, s in scored.items() if (s.mean or 0.0) >= floor]
        pick = max(tied, key=lambda eid: (speed[eid] or 0.0, scored[eid].mean or 0.0))
        routes.append(
            Route(
                suite=suite,
                endpoint_id=pick,
                quality=scored[pick].mean or 0.0,
                decode_tps=speed[pick],
                best_id=best_id,
                best_quality=best.mean,
                best_ci95=ci,
                tied=len(tied),
            )
        )
    return routes


# ---- service levels ---------------------------------------------------------------------------


def capacity_rows(state: FleetState) -> list[CapacityRow]:
    """Capacity at SLO of each endpoint that runs with SLO targets or a load sweep."""
    return [
        e.load.capacity_row(e.id)
        for e in state.endpoints.values()
        if e.load.has_slo or e.load.sweep
    ]


def load_text(kind: LoadKind, value: float | None) -> str:
    """``c=4`` or ``2 req/s``; an em dash when there is none."""
    return units.DASH if value is None else Load(kind, value).label


def slo_text(row: CapacityRow) -> str:
    """The targets of a capacity row: ``TTFT ≤ 500 ms · TPOT ≤ 50 ms · ≥ 90% met``."""
    parts = [
        f"{name} ≤ {units.seconds_as_ms(value)}"
        for name, value in (
            ("TTFT", row.slo_ttft_s),
            ("TPOT", row.slo_tpot_s),
            ("E2E", row.slo_e2e_s),
        )
        if value is not None
    ]
    parts.append(f"≥ {row.slo_attainment * 100:.0f}% met")
    return " · ".join(parts)

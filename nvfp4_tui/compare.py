"""Comparing two runs: per endpoint, suite and load level, the change in quality, speed and TTFT.

Endpoints are matched by id, then (for those left over) by label. Each metric of each cell is
tested with a two-sided Mann-Whitney U test (normal approximation with tie and continuity
corrections) on the per-request values of the requests that did not fail. A change is marked
significant only when its p-value, Holm-adjusted over every test of the comparison, is below
``alpha``: a fleet of seven endpoints x six suites x two levels makes hundreds of tests, and
unadjusted ones would flag noise every time.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import polars as pl

from nvfp4_tui.events import EndpointInfo
from nvfp4_tui.figures.scores import HEURISTIC, SCORE_LABELS, VERIFIED
from nvfp4_tui.report import endpoints_of, plan_rates, with_rates
from nvfp4_tui.slo import Load
from nvfp4_tui.store.reader import Snapshot
from nvfp4_tui.tables import format_table

COMPARE_FORMATS = ("text", "markdown")
DEFAULT_ALPHA = 0.05
MIN_N_FOR_TEST = 3  # below this per side no two-sided test at 5% can reject anyway


@dataclass(frozen=True)
class Metric:
    name: str
    column: str
    summary: str  # "mean" | "median"
    label: str
    spec: str  # format of values and deltas
    # A timing: warm-up and cool-down rows are left out, as the leaderboard leaves them out.
    timed: bool = True


SCORES = ("heuristic", "verified", "judge")


def metrics_for(score: str = SCORE_LABELS[VERIFIED]) -> tuple[Metric, ...]:
    """The compared metrics, quality read from the ``score_<score>`` column."""
    if score not in SCORES:
        raise ValueError(f"score must be one of {list(SCORES)}, got {score!r}")
    label = f"quality ({score}, mean)"
    return (
        Metric("quality", f"score_{score}", "mean", label, ".3f", timed=False),
        Metric("decode_tps", "decode_tps", "mean", "decode tok/s", ".1f"),
        Metric("ttft_p50_s", "ttft_s", "median", "TTFT p50 s", ".3f"),
    )


METRICS = metrics_for()


@dataclass(frozen=True)
class MannWhitney:
    u: float  # U of the first sample
    z: float
    p_value: float  # two-sided


def mann_whitney_u(a: Sequence[float], b: Sequence[float]) -> MannWhitney:
    """Two-sided Mann-Whitney U with the normal approximation, tie and continuity corrections.

    Raises ValueError when either sample is empty.
    """
    n_a, n_b = len(a), len(b)
    if not n_a or not n_b:
        raise ValueError("Mann-Whitney U needs two non-empty samples")
    pooled = sorted([(x, 0) for x in a] + [(x, 1) for x in b])
    n = n_a + n_b
    rank_sum_a = 0.0
    tie_term = 0.0
    i = 0
    while i < n:
        j = i
        while j + 1 < n and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        mid_rank = (i + j) / 2 + 1  # ranks are 1-based; ties share the mean of their ranks
        tied = j - i + 1
        tie_term += tied**3 - tied
        rank_sum_a += mid_rank * sum(1 for k in range(i, j + 1) if pooled[k][1] == 0)
        i = j + 1
    u_a = rank_sum_a - n_a * (n_a + 1) / 2
    mean_u = n_a * n_b / 2
    variance = n_a * n_b / 12 * ((n + 1) - tie_term / (n * (n - 1))) if n > 1 else 0.0
    if variance <= 0:
        return MannWhitney(u_a, 0.0, 1.0)  # every value tied: no evidence either way
    gap = abs(u_a - mean_u)
    z = max(0.0, gap - 0.5) / math.sqrt(variance)
    return MannWhitney(u_a, math.copysign(z, u_a - mean_u), math.erfc(z / math.sqrt(2)))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input's order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True)
class MetricChange:
    metric: Metric
    n_a: int
    n_b: int
    a: float | None  # the metric's summary (mean, or median for TTFT) in run A
    b: float | None
    p_value: float | None  # None: too few values to test
    p_adjusted: float | None = None
    significant: bool = False

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a


@dataclass(frozen=True)
class CellComparison:
    endpoint_a: str
    endpoint_b: str
    label: str
    suite: str
    load: Load
    changes: tuple[MetricChange, ...]


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    alpha: float
    tests: int
    cells: tuple[CellComparison, ...]
    only_a: tuple[str, ...]  # endpoints (labels) without a match in the other run
    only_b: tuple[str, ...]

    @property
    def significant(self) -> tuple[tuple[CellComparison, MetricChange], ...]:
        return tuple((c, m) for c in self.cells for m in c.changes if m.significant)


def match_endpoints(
    a: Sequence[EndpointInfo], b: Sequence[EndpointInfo]
) -> tuple[list[tuple[EndpointInfo, EndpointInfo]], list[EndpointInfo], list[EndpointInfo]]:
    """Pairs matched by id, then by label; and the endpoints of each side left unmatched."""
    b_by_id = {e.id: e for e in b}
    pairs = [(e, b_by_id[e.id]) for e in a if e.id in b_by_id]
    taken_a = {x.id for x, _ in pairs}
    taken_b = {y.id for _, y in pairs}
    b_by_label = {e.label: e for e in b if e.id not in taken_b}
    for e in a:
        if e.id in taken_a:
            continue
        other = b_by_label.pop(e.label, None)
        if other is not None:
            pairs.append((e, other))
            taken_a.add(e.id)
            taken_b.add(other.id)
    return (
        pairs,
        [e for e in a if e.id not in taken_a],
        [e for e in b if e.id not in taken_b],
    )


def _endpoints(snapshot: Snapshot) -> tuple[EndpointInfo, ...]:
    known = endpoints_of(snapshot.run_events())
    if known:
        return known
    ids = snapshot.requests().get_column("endpoint_id").unique(maintain_order=True).to_list()
    return tuple(EndpointInfo(i, i, "", "", None, "") for i in ids)


CellKey = tuple[str, str, Load]  # endpoint id, suite, load level


def _samples(snapshot: Snapshot, metrics: Sequence[Metric]) -> dict[CellKey, dict[str, list]]:
    requests = with_rates(snapshot.requests(), plan_rates(snapshot.run_events()))
    done = requests.filter(pl.col("status") != "error")
    cells: dict[CellKey, dict[str, list[float]]] = defaultdict(dict)
    levels = ("endpoint_id", "suite", "concurrency", "rate_rps")
    for key, group in done.group_by(*levels, maintain_order=True):
        endpoint_id, suite, concurrency, rate_rps = key
        cell = cells[(str(endpoint_id), str(suite), Load.of(int(concurrency), rate_rps))]
        in_window = ~group.get_column("trimmed").fill_null(False)
        for metric in metrics:
            column = group.get_column(metric.column)
            values = [
                v for v in (column.filter(in_window) if metric.timed else column) if v is not None
            ]
            # Two groups can share a load level (one rate run with different caps): pooled.
            cell.setdefault(metric.column, []).extend(float(v) for v in values if math.isfinite(v))
    return cells


def _summary(values: list[float], how: str) -> float | None:
    if not values:
        return None
    if how == "mean":
        return math.fsum(values) / len(values)
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _change(metric: Metric, a: list[float], b: list[float]) -> MetricChange:
    testable = len(a) >= MIN_N_FOR_TEST and len(b) >= MIN_N_FOR_TEST
    return MetricChange(
        metric=metric,
        n_a=len(a),
        n_b=len(b),
        a=_summary(a, metric.summary),
        b=_summary(b, metric.summary),
        p_value=mann_whitney_u(a, b).p_value if testable else None,
    )


def default_score(*snapshots: Snapshot) -> str:
    """The score compared when none is asked for: the default everywhere (verified), unless a
    run has no verified scores (an imported or older one), when both compare on the heuristic."""

    def has(snapshot: Snapshot, column: str) -> bool:
        requests = snapshot.requests()
        return column in requests.columns and requests.get_column(column).is_not_null().any()

    def verified(snapshot: Snapshot) -> bool:
        return has(snapshot, VERIFIED) or not has(snapshot, HEURISTIC)

    return SCORE_LABELS[VERIFIED if all(verified(s) for s in snapshots) else HEURISTIC]


def compare_snapshots(
    a: Snapshot, b: Snapshot, *, alpha: float = DEFAULT_ALPHA, score: str | None = None
) -> Comparison:
    """Every cell present in both runs, each metric tested; Holm-adjusted over all tests."""
    metrics = metrics_for(score or default_score(a, b))
    pairs, only_a, only_b = match_endpoints(_endpoints(a), _endpoints(b))
    samples_a, samples_b = _samples(a, metrics), _samples(b, metrics)
    cells: list[CellComparison] = []
    for info_a, info_b in pairs:
        # Suites in the order A ran them, load level by level.
        keys = sorted((k for k in samples_a if k[0] == info_a.id), key=lambda k: k[2].order)
        for _, suite, load in keys:
            other = samples_b.get((info_b.id, suite, load))
            if other is None:
                continue
            mine = samples_a[(info_a.id, suite, load)]
            changes = tuple(_change(m, mine[m.column], other[m.column]) for m in metrics)
            cells.append(CellComparison(info_a.id, info_b.id, info_a.label, suite, load, changes))
    tested = [
        (ci, mi)
        for ci, c in enumerate(cells)
        for mi, m in enumerate(c.changes)
        if m.p_value is not None
    ]
    adjusted = holm_adjust([cells[ci].changes[mi].p_value or 0.0 for ci, mi in tested])
    updates: dict[int, dict[int, float]] = defaultdict(dict)
    for (ci, mi), p in zip(tested, adjusted, strict=True):
        updates[ci][mi] = p
    for ci, by_metric in updates.items():
        changes = tuple(
            replace(m, p_adjusted=by_metric[mi], significant=by_metric[mi] < alpha)
            if mi in by_metric
            else m
            for mi, m in enumerate(cells[ci].changes)
        )
        cells[ci] = replace(cells[ci], changes=changes)
    return Comparison(
        run_a=a.run_id,
        run_b=b.run_id,
        alpha=alpha,
        tests=len(tested),
        cells=tuple(cells),
        only_a=tuple(e.label for e in only_a),
        only_b=tuple(e.label for e in only_b),
    )


def _cell_text(change: MetricChange) -> str:
    spec = change.metric.spec
    if change.a is None and change.b is None:
        return "—"
    a = "—" if change.a is None else format(change.a, spec)
    b = "—" if change.b is None else format(change.b, spec)
    delta = change.delta
    text = f"{a} → {b}"
    if delta is not None:
        text += f" ({delta:+{spec}})"
    return text + (" *" if change.significant else "")


def render_comparison(comparison: Comparison, fmt: str = "text") -> str:
    if fmt not in COMPARE_FORMATS:
        raise ValueError(f"compare format must be one of {list(COMPARE_FORMATS)}, got {fmt!r}")
    metrics = [m.metric for m in comparison.cells[0].changes] if comparison.cells else METRICS
    headers = ["endpoint", "suite", "load", "n A/B", *(m.label for m in metrics)]
    rows = [
        [
            cell.label,
            cell.suite,
            cell.load.label,
            f"{cell.changes[0].n_a}/{cell.changes[0].n_b}",
            *(_cell_text(change) for change in cell.changes),
        ]
        for cell in comparison.cells
    ]
    title = f"{comparison.run_a} (A) → {comparison.run_b} (B)"
    markdown = fmt == "markdown"
    parts = [format_table(headers, rows, title=title, markdown=markdown)]
    found = len(comparison.significant)
    notes = [
        f"* significant: two-sided Mann-Whitney U, Holm-adjusted over {comparison.tests} tests, "
        f"p < {comparison.alpha:g}; cells with fewer than {MIN_N_FOR_TEST} requests on a side "
        "are not tested.",
        f"{found} significant change{'s' if found != 1 else ''}.",
    ]
    if comparison.only_a:
        notes.append("only in A: " + ", ".join(comparison.only_a))
    if comparison.only_b:
        notes.append("only in B: " + ", ".join(comparison.only_b))
    parts.append("\n".join(notes))
    return "\n\n".join(parts)

"""Comparing two runs: every figure both runs measured, as it changed from A to B.

- per endpoint, suite and load level: quality, speed (decode tok/s, or e2e tok/s when a run has
  no decode rate: a legacy import has no TTFT), TTFT p50, errors and suspects;
- per endpoint and load level: aggregate throughput, from the leaderboard's levels;
- per endpoint: VRAM used before and after the run on its GPU in each run, as the report's VRAM
  table reads it (a model moved to another GPU is followed there).

A metric that one run never measured is left out and named, rather than shown as a column of
dashes. Endpoints are matched by id, then (for those left over) by the model they serve, then by
label; a label that changed is said. Times and speeds (TTFT, tok/s, throughput) are compared only
between endpoints on one clock: a simulator run with ``--time-scale`` is on a faster one. Each
metric of each cell is tested with a two-sided Mann-Whitney U test (normal approximation with tie and continuity
corrections) on the per-request values of the requests that did not fail. A change is marked
significant only when its p-value, Holm-adjusted over every test of the comparison, is below
``alpha``: a fleet of seven endpoints x six suites x two levels makes hundreds of tests, and
unadjusted ones would flag noise every time. Each tested change, significant or not, carries its
effect size, Cliff's delta: P(B > A) - P(B < A) over every pair of one request from each run
(-1 to +1, 0: no shift). It is the Mann-Whitney U rescaled, so the test and the size agree, and it
needs no unit: quality and speed read on one scale.

A legacy import's level is labelled with what its script had in flight (``seed c=1: 2 in
flight``): the rows keep the script's concurrency so that they match its summary table.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from nvfp4_tui.bench.provenance import config_differences
from nvfp4_tui.core.events import EndpointInfo, RunStarted
from nvfp4_tui.core.figures.board import Board
from nvfp4_tui.core.figures.comparison import (
    EFFECT_SIZE,
    MIN_N_FOR_TEST,
    NOT_STEADY_MARK,
    CellComparison,
    Comparison,
    Failures,
    LevelChange,
    Metric,
    MetricChange,
    Pairing,
    VramChange,
    metrics_for,
    relative_change,
)
from nvfp4_tui.core.figures.scores import HEURISTIC, SCORE_LABELS, VERIFIED
from nvfp4_tui.core.gpu_track import GpuKey, GpuKeys
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.core.slo import Load
from nvfp4_tui.output.compare_context import context_json, context_pairs, context_tables
from nvfp4_tui.output.compare_server_view import (
    server_view_json,
    server_view_pairs,
    server_view_table,
)
from nvfp4_tui.output.formats import COMPARE
from nvfp4_tui.output.report import (
    endpoints_of,
    plan_rates,
    snapshot_board,
    vram_per_gpu,
    with_rates,
)
from nvfp4_tui.output.tables import format_table, markdown_line, number_cell
from nvfp4_tui.store.legacy import recorded_in_flight
from nvfp4_tui.store.reader import Snapshot

COMPARE_FORMATS = COMPARE.written_by(f"{__name__}:render_comparison")
DEFAULT_ALPHA = 0.05


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


def cliffs_delta(a: Sequence[float], b: Sequence[float]) -> float | None:
    """P(B > A) - P(B < A) over every pair (one value from each sample); None if one is empty."""
    if not a or not b:
        return None
    # U of A counts the pairs A wins, ties as halves: 1 - 2U/(n_a n_b) is B's margin.
    return 1 - 2 * mann_whitney_u(a, b).u / (len(a) * len(b))


def match_endpoints(
    a: Sequence[EndpointInfo],
    b: Sequence[EndpointInfo],
    models_a: Mapping[str, str] | None = None,
    models_b: Mapping[str, str] | None = None,
) -> tuple[list[Pairing], list[EndpointInfo], list[EndpointInfo]]:
    """Pairs matched by id, then by the model served (``models_*``: endpoint id -> the model,
    where one run serves it from a single endpoint and the other too), then by label; and the
    endpoints of each side left unmatched. A model name that several endpoints share (vLLM's
    served name ``current``) pairs nothing."""
    pairs: list[Pairing] = []
    left_a, left_b = list(a), list(b)

    def pair_by(how: str, key_a: Mapping[str, str], key_b: Mapping[str, str]) -> None:
        unique_b = _unique({e.id: key_b[e.id] for e in left_b if e.id in key_b})
        unique_a = _unique({e.id: key_a[e.id] for e in left_a if e.id in key_a})
        by_key = {key: e for e in left_b if (key := unique_b.get(e.id)) is not None}
        for e in list(left_a):
            other = by_key.pop(unique_a[e.id], None) if e.id in unique_a else None
            if other is None:
                continue
            pairs.append(
                Pairing(e.id, other.id, e.label, other.label, how, e.time_scale, other.time_scale)
            )
            left_a.remove(e)
            left_b.remove(other)

    pair_by("id", {e.id: e.id for e in a}, {e.id: e.id for e in b})
    pair_by("model", models_a or {}, models_b or {})
    pair_by("label", {e.id: e.label for e in a}, {e.id: e.label for e in b})
    order = {e.id: i for i, e in enumerate(a)}
    return sorted(pairs, key=lambda p: order[p.endpoint_a]), left_a, left_b


def _unique(keys: Mapping[str, str]) -> dict[str, str]:
    """The entries of ``keys`` whose value no other entry shares."""
    counts: dict[str, int] = defaultdict(int)
    for key in keys.values():
        counts[key] += 1
    return {endpoint: key for endpoint, key in keys.items() if counts[key] == 1}


def _models(snapshot: Snapshot, endpoints: Sequence[EndpointInfo]) -> dict[str, str]:
    """Each endpoint's model: the root its server reported at start (the model's path), else
    the model name the profile asks for."""
    roots = {
        c.endpoint_id: c.model_root
        for e in snapshot.run_events()
        if isinstance(e, RunStarted)
        for c in e.configuration
        if c.model_root
    }
    return {e.id: roots.get(e.id) or e.model for e in endpoints if roots.get(e.id) or e.model}


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
        # Below the test's n the delta can only read -1, 0 or +1: no size to show.
        cliffs_delta=cliffs_delta(a, b) if testable else None,
    )


def _has(snapshot: Snapshot, column: str) -> bool:
    """Whether any request of the run that did not fail holds a finite ``column``."""
    requests = snapshot.requests()
    if column not in requests.columns:
        return False
    values = requests.filter(pl.col("status") != "error").get_column(column)
    return bool(values.is_finite().any()) if values.dtype.is_float() else values.is_not_null().any()


def default_score(*snapshots: Snapshot) -> str:
    """The score compared when none is asked for: the default everywhere (verified), unless a
    run has no verified scores (an imported or older one), when both compare on the heuristic."""

    def verified(snapshot: Snapshot) -> bool:
        return _has(snapshot, VERIFIED) or not _has(snapshot, HEURISTIC)

    return SCORE_LABELS[VERIFIED if all(verified(s) for s in snapshots) else HEURISTIC]


def default_speed(*snapshots: Snapshot) -> str:
    """Decode tok/s when every run measured it; else e2e tok/s, the rate a legacy import (no
    TTFT, so no decode time) shares with any run."""
    return "decode_tps" if all(_has(s, "decode_tps") for s in snapshots) else "e2e_tps"


def _in_flight_text(level: int, counts: tuple[int, ...] | None) -> str:
    # A run of ours holds exactly its concurrency in flight (closed loop).
    if not counts:
        return str(level)
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"


def load_label(
    load: Load, in_flight_a: dict[int, tuple[int, ...]], in_flight_b: dict[int, tuple[int, ...]]
) -> str:
    """``c=4``, or for a level a legacy import ran: ``seed c=4: 8 in flight`` (``8 / 4`` when
    the runs differ, A first)."""
    level = int(load.value)
    if load.kind != "concurrency" or (level not in in_flight_a and level not in in_flight_b):
        return load.label
    a = _in_flight_text(level, in_flight_a.get(level))
    b = _in_flight_text(level, in_flight_b.get(level))
    return f"seed c={level}: {a if a == b else f'{a} / {b}'} in flight"


def _failures(board: Board) -> dict[CellKey, Failures]:
    return {
        (r.endpoint, r.suite, r.load): Failures(r.requests, r.errors, r.suspect) for r in board.rows
    }


def _levels(
    pairs: Sequence[Pairing],
    board_a: Board,
    board_b: Board,
    label_of: dict[Load, str],
) -> tuple[LevelChange, ...]:
    """Throughput per level of the pairs on one clock (a faster simulator's is not comparable)."""
    b_levels = {(r.endpoint, r.load): r for r in board_b.levels}
    partner = {p.endpoint_a: p for p in pairs if p.same_clock}
    changes = []
    for mine in board_a.levels:
        pair = partner.get(mine.endpoint)
        other = None if pair is None else b_levels.get((pair.endpoint_b, mine.load))
        if pair is None or other is None:
            continue
        changes.append(
            LevelChange(
                endpoint_a=pair.endpoint_a,
                endpoint_b=pair.endpoint_b,
                label=pair.label,
                load=mine.load,
                load_label=label_of.get(mine.load, mine.load.label),
                throughput_a_tps=mine.throughput_tps,
                throughput_b_tps=other.throughput_tps,
                steady_a=mine.steady,
                steady_b=other.steady,
            )
        )
    return tuple(changes)


def _vram(
    a: Snapshot,
    b: Snapshot,
    pairs: Sequence[Pairing],
    endpoints_a: Sequence[EndpointInfo],
    endpoints_b: Sequence[EndpointInfo],
) -> tuple[VramChange, ...]:
    """Per pair of endpoints with readings in both runs, A's GPU beside the GPU of B that serves
    its pair (a model moved to another GPU is followed); then the GPUs no endpoint of either run
    uses, each beside itself. In the order of A's GPUs."""
    keys_a, keys_b = GpuKeys.of(endpoints_a), GpuKeys.of(endpoints_b)
    rows_a, rows_b = (
        {(r["node"], r["gpu"]): r for r in vram_per_gpu(s.gpu(), e).iter_rows(named=True)}
        for s, e in ((a, endpoints_a), (b, endpoints_b))
    )
    info_a = {e.id: e for e in endpoints_a}
    info_b = {e.id: e for e in endpoints_b}
    found: list[tuple[GpuKey, GpuKey, str]] = []
    for p in pairs:
        card_a, card_b = (
            keys_a.endpoint(info_a[p.endpoint_a]),
            keys_b.endpoint(info_b[p.endpoint_b]),
        )
        if card_a is not None and card_b is not None:
            found.append((card_a, card_b, p.label))
    used_a = {k for e in endpoints_a if (k := keys_a.endpoint(e)) is not None}
    used_b = {k for e in endpoints_b if (k := keys_b.endpoint(e)) is not None}
    found += [(card, card, "") for card in rows_a if card not in used_a | used_b]
    return tuple(
        VramChange(
            gpu_a=card_a[1],
            gpu_b=card_b[1],
            label=label,
            before_a_mib=rows_a[card_a]["first_mib"],
            after_a_mib=rows_a[card_a]["last_mib"],
            before_b_mib=rows_b[card_b]["first_mib"],
            after_b_mib=rows_b[card_b]["last_mib"],
        )
        for card_a, card_b, label in sorted(found, key=lambda f: f[0])
        if card_a in rows_a and card_b in rows_b
    )


def compare_snapshots(
    a: Snapshot, b: Snapshot, *, alpha: float = DEFAULT_ALPHA, score: str | None = None
) -> Comparison:
    """Every cell present in both runs, each metric both measured tested; Holm-adjusted over
    all tests; throughput per level and VRAM per GPU beside them. Times and speeds only for
    pairs on one clock (``Pairing.same_clock``); none at all when no pair is."""
    endpoints_a, endpoints_b = _endpoints(a), _endpoints(b)
    pairs, only_a, only_b = match_endpoints(
        endpoints_a, endpoints_b, _models(a, endpoints_a), _models(b, endpoints_b)
    )
    every = metrics_for(score or default_score(a, b), default_speed(a, b))
    one_clock = not pairs or any(p.same_clock for p in pairs)
    metrics = tuple(
        m for m in every if _has(a, m.column) and _has(b, m.column) and (one_clock or not m.timed)
    )
    missing = tuple(
        f"{m.label}: " + (_not_measured(m, a, b) or _other_clocks(pairs))
        for m in every
        if m not in metrics
    ) + (() if one_clock else (f"aggregate throughput: {_other_clocks(pairs)}",))
    board_a, board_b = snapshot_board(a), snapshot_board(b)
    context = context_pairs(a, b, pairs)
    in_flight_a, in_flight_b = recorded_in_flight(a.manifest), recorded_in_flight(b.manifest)
    loads = {r.load for r in board_a.rows} | {lv.load for lv in board_a.levels}
    label_of = {load: load_label(load, in_flight_a, in_flight_b) for load in loads}
    samples_a, samples_b = _samples(a, metrics), _samples(b, metrics)
    failures_a, failures_b = _failures(board_a), _failures(board_b)
    cells: list[CellComparison] = []
    for pair in pairs:
        # Suites in the order A ran them, load level by level; a cell whose every request
        # failed is compared too: its errors are a figure both runs have.
        keys = sorted((k for k in failures_a if k[0] == pair.endpoint_a), key=lambda k: k[2].order)
        for _, suite, load in keys:
            other = failures_b.get((pair.endpoint_b, suite, load))
            if other is None:
                continue
            mine = samples_a.get((pair.endpoint_a, suite, load), {})
            theirs = samples_b.get((pair.endpoint_b, suite, load), {})

            def values(m: Metric, side: dict[str, list[float]], pair: Pairing = pair) -> list:
                return side.get(m.column, []) if pair.same_clock or not m.timed else []

            changes = tuple(_change(m, values(m, mine), values(m, theirs)) for m in metrics)
            cells.append(
                CellComparison(
                    pair.endpoint_a,
                    pair.endpoint_b,
                    pair.label,
                    suite,
                    load,
                    changes,
                    failures_a[(pair.endpoint_a, suite, load)],
                    other,
                    label_of[load],
                )
            )
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
        metrics=metrics,
        missing=missing,
        levels=_levels(pairs, board_a, board_b, label_of),
        vram=_vram(a, b, pairs, endpoints_a, endpoints_b),
        configuration_changes=tuple(config_differences(a.manifest, b.manifest)),
        server_view=server_view_pairs(a, b, pairs),
        pairings=tuple(pairs),
        context=context[0],
        context_capacity=context[1],
    )


def _not_measured(metric: Metric, a: Snapshot, b: Snapshot) -> str:
    lacking = [side for side, run in (("A", a), ("B", b)) if not _has(run, metric.column)]
    return "not measured in " + " or ".join(lacking) if lacking else ""


def _other_clocks(pairs: Sequence[Pairing]) -> str:
    scales_a = sorted({p.time_scale_a for p in pairs})
    scales_b = sorted({p.time_scale_b for p in pairs})
    clocks = ", ".join(f"×{s:g}" for s in scales_a) + " in A, "
    clocks += ", ".join(f"×{s:g}" for s in scales_b) + " in B"
    return f"the runs' simulator clocks differ ({clocks}), so their times are not comparable"


def _cell_text(change: MetricChange) -> str:
    spec = change.metric.spec
    if change.a is None and change.b is None:
        return "—"
    text = f"{number_cell(change.a, spec)} → {number_cell(change.b, spec)}"
    delta = change.delta
    if delta is not None:
        text += f" ({delta:+{spec}})"
    if change.cliffs_delta is not None:
        text += f" δ{change.cliffs_delta:+.2f}"
    return text + (" *" if change.significant else "")


def _counts_text(a: int, b: int) -> str:
    return f"{a} → {b}"


def _level_text(tps: float | None, steady: bool | None) -> str:
    return number_cell(tps, ".1f") + (NOT_STEADY_MARK if steady is False else "")


def _mib_text(a: float, b: float) -> str:
    change = b - a
    return f"{a:,.0f} → {b:,.0f} ({'0' if round(change) == 0 else f'{change:+,.0f}'})"


def _cell_table(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    suspects = any(c.failures_a.suspect or c.failures_b.suspect for c in comparison.cells)
    headers = [
        "endpoint",
        "suite",
        "load",
        "n A/B",
        *(m.label for m in comparison.metrics),
        "errors",
        *(["suspect"] if suspects else []),
    ]
    rows = [
        [
            cell.label,
            cell.suite,
            cell.level,
            f"{cell.n_a}/{cell.n_b}",
            *(_cell_text(change) for change in cell.changes),
            _counts_text(cell.failures_a.errors, cell.failures_b.errors),
            *([_counts_text(cell.failures_a.suspect, cell.failures_b.suspect)] if suspects else []),
        ]
        for cell in comparison.cells
    ]
    return headers, rows


def render_comparison(comparison: Comparison, fmt: str = "text") -> str:
    if fmt not in COMPARE_FORMATS:
        raise ValueError(f"compare format must be one of {list(COMPARE_FORMATS)}, got {fmt!r}")
    if fmt == "json":
        return json.dumps(comparison_json(comparison), indent=2, ensure_ascii=False)
    markdown = fmt == "markdown"
    runs = f"{comparison.run_a} (A) → {comparison.run_b} (B)"
    headers, rows = _cell_table(comparison)
    parts = []
    # Changes and notes name endpoints and settings from the snapshots: Markdown's one rule.
    line = markdown_line if markdown else outside_line
    if comparison.configuration_changes:  # said first: it may explain every figure below
        bullet = "- " if markdown else "  "
        changes = "".join(f"\n{bullet}{line(c)}" for c in comparison.configuration_changes)
        parts.append("Configuration changed:" + changes)
    parts.append(format_table(headers, rows, title=runs, markdown=markdown))
    if comparison.levels:
        parts.append(
            format_table(
                ["endpoint", "load", "A", "B", "change"],
                [
                    [
                        level.label,
                        level.load_label,
                        _level_text(level.throughput_a_tps, level.steady_a),
                        _level_text(level.throughput_b_tps, level.steady_b),
                        number_cell(
                            None if level.relative is None else level.relative * 100, "+.1f"
                        )
                        + ("%" if level.relative is not None else ""),
                    ]
                    for level in comparison.levels
                ],
                title="Aggregate throughput per load level (tok/s: output tokens / wall time)",
                markdown=markdown,
            )
        )
    if comparison.vram:
        parts.append(
            format_table(
                ["GPU A → B", "endpoint", "before A → B", "after A → B"],
                [
                    [
                        v.gpus,
                        v.label or "—",
                        _mib_text(v.before_a_mib, v.before_b_mib),
                        _mib_text(v.after_a_mib, v.after_b_mib),
                    ]
                    for v in comparison.vram
                ],
                title=(
                    "VRAM used on each endpoint's GPU "
                    "(MiB; before: the run's first sample, after: its last)"
                ),
                markdown=markdown,
            )
        )
    if (server_view := server_view_table(comparison.server_view, markdown=markdown)) is not None:
        parts.append(server_view)
    parts += context_tables(comparison.context, comparison.context_capacity, markdown=markdown)
    parts.append("\n".join(line(note) for note in _notes(comparison)))
    return "\n\n".join(parts)


def _notes(comparison: Comparison) -> list[str]:
    found = len(comparison.significant)
    notes = [
        *comparison.pairing_notes,
        f"* significant: two-sided Mann-Whitney U, Holm-adjusted over {comparison.tests} tests, "
        f"p < {comparison.alpha:g}; cells with fewer than {MIN_N_FOR_TEST} requests on a side "
        "are not tested.",
        f"δ: {EFFECT_SIZE}, P(B > A) - P(B < A) over pairs of requests, -1 to +1 "
        "(on every tested change, significant or not).",
        f"{found} significant change{'s' if found != 1 else ''}.",
    ]
    speed = comparison.speed
    if speed is not None and speed.name == "e2e_tps":
        notes.append(
            "speed: e2e tok/s (output tokens / whole request, prefill included); "
            "a run without TTFT (a legacy import) has no decode tok/s."
        )
    if any(level.steady_a is False or level.steady_b is False for level in comparison.levels):
        notes.append(f"{NOT_STEADY_MARK} the level did not hold its concurrency most of its time.")
    if any(level.load_label != level.load.label for level in comparison.levels):
        notes.append(
            "seed c=N: a legacy import; its script launched every prompt × N of a phase at once."
        )
    notes.extend(f"left out, {reason}" for reason in comparison.missing)
    if comparison.only_a:
        notes.append("only in A: " + ", ".join(comparison.only_a))
    if comparison.only_b:
        notes.append("only in B: " + ", ".join(comparison.only_b))
    return notes


def _load_json(load: Load, label: str) -> dict[str, Any]:
    # A concurrency counts requests: 4, where a rate is requests/s: 2.5.
    value = int(load.value) if load.kind == "concurrency" else load.value
    return {"kind": load.kind, "value": value, "label": label}


def comparison_json(comparison: Comparison) -> dict[str, Any]:
    """The comparison for scripts; its keys are stable (README, "compare --format json")."""
    c = comparison
    return {
        "run_a": c.run_a,
        "run_b": c.run_b,
        "alpha": c.alpha,
        "tests": c.tests,
        "effect_size": "cliffs_delta",
        "speed": None if c.speed is None else c.speed.name,
        "metrics": [m.name for m in c.metrics],
        "missing": list(c.missing),
        "configuration_changes": list(c.configuration_changes),
        "only_a": list(c.only_a),
        "only_b": list(c.only_b),
        "pairs": [
            {
                "endpoint_a": p.endpoint_a,
                "endpoint_b": p.endpoint_b,
                "label_a": p.label_a,
                "label_b": p.label_b,
                "matched_by": p.matched_by,
                "time_scale_a": p.time_scale_a,
                "time_scale_b": p.time_scale_b,
            }
            for p in c.pairings
        ],
        "cells": [
            {
                "endpoint_a": cell.endpoint_a,
                "endpoint_b": cell.endpoint_b,
                "label": cell.label,
                "suite": cell.suite,
                "load": _load_json(cell.load, cell.level),
                "requests_a": cell.failures_a.requests,
                "requests_b": cell.failures_b.requests,
                "errors_a": cell.failures_a.errors,
                "errors_b": cell.failures_b.errors,
                "suspect_a": cell.failures_a.suspect,
                "suspect_b": cell.failures_b.suspect,
                "metrics": {
                    m.metric.name: {
                        "column": m.metric.column,
                        "summary": m.metric.summary,
                        "a": m.a,
                        "b": m.b,
                        "n_a": m.n_a,
                        "n_b": m.n_b,
                        "delta": m.delta,
                        "relative_change": relative_change(m.a, m.b),
                        "cliffs_delta": m.cliffs_delta,
                        "p_value": m.p_value,
                        "p_adjusted": m.p_adjusted,
                        "significant": m.significant,
                    }
                    for m in cell.changes
                },
            }
            for cell in c.cells
        ],
        "levels": [
            {
                "endpoint_a": level.endpoint_a,
                "endpoint_b": level.endpoint_b,
                "label": level.label,
                "load": _load_json(level.load, level.load_label),
                "throughput_tps_a": level.throughput_a_tps,
                "throughput_tps_b": level.throughput_b_tps,
                "relative_change": level.relative,
                "steady_a": level.steady_a,
                "steady_b": level.steady_b,
            }
            for level in c.levels
        ],
        "vram": [
            {
                "gpu_a": v.gpu_a,
                "gpu_b": v.gpu_b,
                "label": v.label or None,
                "before_mib_a": v.before_a_mib,
                "after_mib_a": v.after_a_mib,
                "before_mib_b": v.before_b_mib,
                "after_mib_b": v.after_b_mib,
            }
            for v in c.vram
        ],
        "server_view": server_view_json(c.server_view),
        **context_json(c.context, c.context_capacity),
    }

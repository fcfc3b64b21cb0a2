"""The report of a snapshot: the seed's tables (text, markdown or JSON), from the one
leaderboard (``nvfp4_tui.core.figures``) that the live screens read too.

Every table names the quality score it shows (verified by default, heuristic for a run without
verified scores) and whether a figure is a mean or a median.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import polars as pl

from nvfp4_tui.bench.provenance import CONFIGURATION_HEADERS, configuration_rows
from nvfp4_tui.core.events import SUSPECT_ERROR_KIND, EndpointInfo, Event, PhaseFinished, RunStarted
from nvfp4_tui.core.figures.benchmarks import BenchmarkSection, benchmark_sections
from nvfp4_tui.core.figures.board import (
    ROUTE_MIN_PROMPTS,
    Board,
    Route,
    quality_table,
    route_by_task,
    speed_metric,
    speed_rows,
)
from nvfp4_tui.core.figures.leaderboard import (
    STEADY_SHARE,
    CellTotals,
    LeaderboardFold,
    LevelRow,
    Moments,
    PhaseFacts,
)
from nvfp4_tui.core.figures.metric_stats import METRICS, STATISTICS, MetricStatsFold
from nvfp4_tui.core.figures.scores import SCORE_NAMES, score_label
from nvfp4_tui.core.figures.server_view import ServerViewRow
from nvfp4_tui.core.gpu_track import GpuKeys
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.core.slo import (
    CapacityRow,
    Load,
    capacity_points,
    capacity_rows,
    load_axis,
    run_plans,
)
from nvfp4_tui.core.timing_doubt import MODELLED_TIME, timing_doubt
from nvfp4_tui.output.context_table import context_rows, ladder_chart
from nvfp4_tui.output.formats import REPORT
from nvfp4_tui.output.request_sections import SectionInput, section_json, section_tables
from nvfp4_tui.output.server_view import server_view_rows, server_view_table
from nvfp4_tui.output.slices_table import run_slice_s, slices_chart, time_slice_rows
from nvfp4_tui.output.tables import Table, format_table, number_cell, table_cells
from nvfp4_tui.output.text_chart import line_chart
from nvfp4_tui.store.reader import Snapshot, open_snapshot

REPORT_FORMATS = REPORT.written_by(f"{__name__}:render_snapshot")
# After a throughput figure whose level never held its concurrency (figures.leaderboard).
NOT_STEADY_MARK = "*"


@dataclass(frozen=True)
class PlanRates:
    """The planned rate of each open-loop phase of every run in a snapshot: a snapshot written
    to twice holds two runs, whose phase indexes start over."""

    starts: tuple[float, ...]  # each run's RunStarted time, in order
    rates: dict[tuple[int, str, int], float]  # (run, endpoint id, phase index) -> requests/s

    def run_at(self, t: float) -> int:
        return max(0, bisect.bisect_right(self.starts, t) - 1)

    def rate(self, t: float, endpoint_id: str, phase_index: int) -> float | None:
        return self.rates.get((self.run_at(t), endpoint_id, phase_index))


def plan_rates(events: Sequence[Event]) -> PlanRates:
    starts: list[float] = []
    rates: dict[tuple[int, str, int], float] = {}
    for e in events:
        if isinstance(e, RunStarted):
            run = len(starts)
            starts.append(e.t)
            for (endpoint_id, index), plan in run_plans(e).items():
                if plan.rate_rps is not None:
                    rates[(run, endpoint_id, index)] = plan.rate_rps
    return PlanRates(tuple(starts), rates)


def _phase_key(run: int, phase_index: int) -> str:
    # A snapshot written to twice holds two runs whose phase indexes start over.
    return f"{run}:{phase_index}"


def with_rates(requests: pl.DataFrame, rates: PlanRates) -> pl.DataFrame:
    """The requests with their phase's planned ``rate_rps`` (null: closed loop) and ``run`` (the
    run of the snapshot they belong to, 0 for the first)."""
    if len(rates.starts) > 1:
        starts = pl.Series(rates.starts, dtype=pl.Float64)
        # search_sorted gives UInt32: minus one would wrap for a row before the first run.
        found = starts.search_sorted(requests.get_column("t"), side="right").cast(pl.Int64)
        run = (found - 1).clip(0)
    else:
        run = pl.repeat(0, requests.height, dtype=pl.Int64, eager=True)
    keyed = requests.with_columns(run=run.cast(pl.Int64))
    if not rates.rates:
        return keyed.with_columns(rate_rps=pl.lit(None, dtype=pl.Float64))
    plan = pl.DataFrame(
        {
            "run": [r for r, _, _ in rates.rates],
            "endpoint_id": [endpoint for _, endpoint, _ in rates.rates],
            "phase_index": [index for _, _, index in rates.rates],
            "rate_rps": list(rates.rates.values()),
        },
        schema={
            "run": pl.Int64,
            "endpoint_id": requests.schema["endpoint_id"],
            "phase_index": requests.schema["phase_index"],
            "rate_rps": pl.Float64,
        },
    )
    return keyed.join(plan, on=["run", "endpoint_id", "phase_index"], how="left")


_LEVEL = ("endpoint_id", "suite", "concurrency", "rate_rps")
# Columns an older snapshot may lack; they read as nulls.
_OPTIONAL = {"score_verified": pl.Float64, "score_judge": pl.Float64, "trimmed": pl.Boolean}


def _moments(column: str, rows: pl.Expr) -> list[pl.Expr]:
    """Count, mean and sum of squared deviations of ``column``'s finite values in ``rows``."""
    values = (
        pl.col(column).cast(pl.Float64).filter(rows & pl.col(column).cast(pl.Float64).is_finite())
    )
    return [
        values.count().alias(f"{column}:n"),
        values.mean().alias(f"{column}:mean"),
        (values.var(ddof=0) * values.count()).alias(f"{column}:m2"),
    ]


def _moments_of(row: dict, column: str) -> Moments:
    n = row[f"{column}:n"]
    return Moments(n, row[f"{column}:mean"] or 0.0, row[f"{column}:m2"] or 0.0)


def cell_totals(frame: pl.DataFrame) -> list[CellTotals]:
    """The request rows summed per leaderboard cell, as ``LeaderboardFold.add_request`` would
    count them one by one (``frame`` carries ``rate_rps``: ``with_rates``)."""
    for column, dtype in _OPTIONAL.items():
        if column not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=dtype).alias(column))
    status = pl.col("status")
    failed = status == "error"
    suspect = failed & (pl.col("error_kind") == SUSPECT_ERROR_KIND).fill_null(False)
    kept = ~failed
    timed = kept & ~pl.col("trimmed").fill_null(False)  # warm-up and cool-down: not timed
    aggregates = [
        (kept & (status != "incomplete")).sum().alias("ok"),
        (status == "incomplete").sum().alias("incomplete"),
        (failed & ~suspect).sum().alias("errors"),
        suspect.sum().alias("suspect"),
        pl.col("ttft_s").filter(timed & pl.col("ttft_s").is_finite()).alias("ttft_s"),
    ]
    # A decode rate's own span (timings.decode_span): the seconds from first chunk to end.
    rate = pl.col("decode_tps").cast(pl.Float64)
    e2e, ttft = pl.col("e2e_s").cast(pl.Float64), pl.col("ttft_s").cast(pl.Float64)
    decoding = timed & rate.is_finite() & e2e.is_finite() & ttft.is_finite() & (e2e > ttft)
    span = (e2e - ttft).filter(decoding)
    aggregates += [
        rate.filter(decoding).alias("decode_tps_values"),
        (rate.filter(decoding) * span).sum().alias("decode_tokens"),
        span.sum().alias("decode_s"),
    ]
    for name in SCORE_NAMES:
        aggregates += _moments(name, kept)
        scored = kept & pl.col(name).is_finite()
        aggregates.append(pl.col("prompt_id").filter(scored).unique().alias(f"{name}:prompts"))
    for column in ("decode_tps", "e2e_tps"):
        aggregates += _moments(column, timed)
    aggregates += _moments("tokens_out", timed & pl.col("tokens_out").is_not_null())
    grouped = frame.group_by(*_LEVEL).agg(aggregates)
    return [
        CellTotals(
            endpoint_id=row["endpoint_id"],
            suite=row["suite"],
            concurrency=row["concurrency"],
            rate_rps=row["rate_rps"],
            ok=row["ok"],
            incomplete=row["incomplete"],
            errors=row["errors"],
            suspect=row["suspect"],
            quality={
                name: (_moments_of(row, name), frozenset(row[f"{name}:prompts"]))
                for name in SCORE_NAMES
            },
            decode_tps=_moments_of(row, "decode_tps"),
            e2e_tps=_moments_of(row, "e2e_tps"),
            tokens_out=_moments_of(row, "tokens_out"),
            ttft_s=row["ttft_s"],
            decode_tps_values=row["decode_tps_values"],
            decode_tokens=row["decode_tokens"] or 0.0,
            decode_s=row["decode_s"] or 0.0,
        )
        for row in grouped.iter_rows(named=True)
    ]


def fold_snapshot(requests: pl.DataFrame, events: Sequence[Event]) -> LeaderboardFold:
    """The leaderboard fold of a snapshot's request rows and its finished phases."""
    rates = plan_rates(events)
    fold = LeaderboardFold()
    if not requests.is_empty():
        for totals in cell_totals(with_rates(requests, rates)):
            fold.add_cell(totals)
    for e in events:
        if isinstance(e, PhaseFinished):
            run = rates.run_at(e.t)
            fold.add_phase(
                PhaseFacts(
                    e.endpoint_id,
                    e.suite,
                    e.concurrency,
                    rates.rates.get((run, e.endpoint_id, e.phase_index)),
                    _phase_key(run, e.phase_index),
                    e.output_tokens,
                    e.wall_s,
                    e.full_load_s,
                    e.loop_lag_p99_s,
                )
            )
    return fold


def board_of(requests: pl.DataFrame, events: Sequence[Event]) -> Board:
    """The leaderboard of a snapshot: rows by endpoint (in the run's order), load level (closed
    loop by concurrency, then open loop by rate), then suite in plan order."""
    fold = fold_snapshot(requests, events)
    endpoints = endpoints_of(events)
    order = [e.id for e in endpoints]
    planned = [p for e in events if isinstance(e, RunStarted) for p in e.phases]
    # A snapshot written to twice: the later run's record of a suite is the one kept.
    benchmarks = {b.suite: b for e in events if isinstance(e, RunStarted) for b in e.benchmarks}
    return Board(
        endpoints=endpoints,
        rows=fold.rows(order, _plan_suites(events, requests)),
        levels=fold.levels(order),
        planned_loads=tuple(dict.fromkeys(Load.of_plan(p) for p in planned)),
        benchmarks=tuple(benchmarks.values()),
    )


def _plan_suites(events: Sequence[Event], requests: pl.DataFrame) -> list[str]:
    """Suites in the order the run planned them, then any seen only in the requests."""
    planned = [p.suite for e in events if isinstance(e, RunStarted) for p in e.phases]
    seen = (
        requests.get_column("suite").unique(maintain_order=True).to_list()
        if requests.height
        else []
    )
    return list(dict.fromkeys([*planned, *seen]))


def metric_stats_of(requests: pl.DataFrame, events: Sequence[Event]) -> MetricStatsFold:
    """Every statistic of every metric per endpoint and level, from a snapshot's rows: each
    level's columns into the accumulators the live state fills a row at a time."""
    fold = MetricStatsFold()
    rows = with_rates(requests, plan_rates(events)).filter(
        (pl.col("status") != "error") & ~pl.col("trimmed").fill_null(False)
    )
    columns = [m.column for m in METRICS]
    for (endpoint_id, concurrency, rate_rps), level in rows.group_by(
        ["endpoint_id", "concurrency", "rate_rps"], maintain_order=True
    ):
        load = Load.of(int(concurrency), rate_rps)
        for column in columns:
            fold.add_values(str(endpoint_id), load, column, level.get_column(column).to_list())
    return fold


def metric_stats_json(fold: MetricStatsFold) -> list[dict]:
    """``kind: "metric_stats"`` rows: one per endpoint, level and metric, with its unit."""
    rows = []
    for endpoint_id, load in fold.levels():
        for summary in fold.summaries(endpoint_id, load):
            if summary.n == 0:
                continue
            rows.append(
                {
                    "kind": "metric_stats",
                    "endpoint": endpoint_id,
                    "load": load.label,
                    "concurrency": int(load.value) if load.kind == "concurrency" else 0,
                    "rate_rps": load.value if load.kind == "rate" else None,
                    "metric": summary.metric.column,
                    "label": summary.metric.label,
                    "unit": summary.metric.unit,
                    **{name: getattr(summary, name) for name in STATISTICS},
                }
            )
    return rows


def endpoints_of(events: Sequence[Event]) -> tuple[EndpointInfo, ...]:
    for e in events:
        if isinstance(e, RunStarted):
            return e.endpoints
    return ()


def _share_pct(part_s: float | None, whole_s: float) -> float | None:
    return None if part_s is None or whole_s <= 0 else part_s / whole_s * 100


def _at(load: Load | None) -> str:
    """A table title's load level: ``concurrency 1`` (the seed's words) or ``2 req/s``."""
    if load is None:
        return "no load level"
    return f"concurrency {load.value:g}" if load.kind == "concurrency" else load.label


def _interval(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"{low:.2f}–{high:.2f}"


def summary_tables(board: Board, score_name: str) -> list[Table]:
    """The seed's tables: quality at the lowest load (c=1), speed vs class, aggregate throughput
    per load level, requests; then the route per task."""
    # A run of benchmarks alone has no seed suite: its quality table would be empty.
    quality = (
        [quality_summary(board, score_name)] if board.seed_suites or not board.benchmarks else []
    )
    tables = [
        *quality,
        *benchmark_tables(board),
        speed_summary(board),
        throughput_summary(board),
        requests_summary(board),
    ]
    routes = route_summary(board, score_name)
    return [*tables, routes] if routes is not None else tables


def _labels(board: Board) -> dict[str, str]:
    return {e.id: e.label for e in board.endpoints}


def quality_summary(board: Board, score_name: str) -> Table:
    labels, ids = _labels(board), board.endpoint_ids
    quality = quality_table(board, score_name)
    return (
        f"Quality ({score_label(score_name)} score, mean per suite, {_at(quality.load)})",
        ["suite", *(labels.get(i, i) for i in ids)],
        [
            [
                suite,
                *(number_cell(getattr(quality.cell(suite, i), "mean", None), ".2f") for i in ids),
            ]
            for suite in quality.suites
        ],
    )


def speed_summary(board: Board) -> Table:
    labels = _labels(board)
    speeds, averages = speed_rows(board)
    speed_body = []
    for row in speeds:
        mean = averages.get(row.model_class)
        rel = row.vs_class.get(row.model_class)
        speed_body.append(
            [
                labels.get(row.endpoint_id, row.endpoint_id),
                row.model_class or "—",
                number_cell(row.decode_tps, ".1f"),
                number_cell(row.e2e_tps, ".1f"),
                f"{(rel - 1) * 100:+.0f}%" if rel is not None and mean else "—",
            ]
        )
    scale = max((e.time_scale for e in board.endpoints), default=1.0)
    scaled = f"; simulator ×{scale:g}: {MODELLED_TIME}" if scale != 1.0 else ""
    return (
        f"Speed (decode pooled over requests, e2e mean per request, {_at(board.base_load)}{scaled})",
        [
            "endpoint",
            "class",
            "decode tok/s pooled",
            "e2e tok/s mean",
            "vs class avg" if speed_metric(board) == "decode_tps" else "e2e vs class avg",
        ],
        speed_body,
    )


def throughput_summary(board: Board) -> Table:
    labels, ids = _labels(board), board.endpoint_ids
    levels = board.level_loads()
    by_level = board.throughput()
    return (
        "Aggregate throughput (tok/s, output tokens / phase wall time; "
        f"{NOT_STEADY_MARK} held its concurrency < {STEADY_SHARE:.0%} of the time)",
        ["endpoint", *(load.label for load in levels)],
        [
            [labels.get(i, i), *(_level_cell(by_level.get((i, load))) for load in levels)]
            for i in ids
        ],
    )


def requests_summary(board: Board) -> Table:
    labels = _labels(board)
    return (
        "Requests",
        ["endpoint", "ok", "incomplete", "errors", "suspect"],
        [
            [
                labels.get(i, i),
                *(
                    str(sum(getattr(r, field) for r in board.rows if r.endpoint == i))
                    for field in ("ok", "incomplete", "errors", "suspect")
                ),
            ]
            for i in board.endpoint_ids
        ],
    )


def route_summary(board: Board, score_name: str) -> Table | None:
    """The route per task with its evidence; None for a run with no scored suite."""
    routes = route_by_task(board, score_name)
    if not routes:
        return None
    return (
        f"Route by task ({score_label(score_name)} score over every load level: the fastest "
        f"endpoint at {_at(board.base_load)} within the best one's 95% interval)",
        ["suite", "route to", "quality", "decode tok/s", "best", "best 95% interval"],
        [_route_cells(route, _labels(board)) for route in routes],
    )


def benchmark_table(section: BenchmarkSection, labels: dict[str, str]) -> Table:
    """One standard benchmark, kept out of the quality table above and its averages."""
    note = f"; {section.note}" if section.note else ""
    metric = section.benchmark.metric
    return (
        f"Standard benchmark: {section.label} (every load level{note})",
        ["endpoint", metric, "95% interval", "problems scored"],
        [
            [
                labels.get(eid, eid),
                number_cell(s.mean, ".3f"),
                _interval(s.ci95_low, s.ci95_high),
                str(s.n),
            ]
            for eid, s in section.scores
        ],
    )


def benchmark_tables(board: Board) -> list[Table]:
    """Each standard benchmark of the run in a table of its own."""
    return [benchmark_table(section, _labels(board)) for section in benchmark_sections(board)]


def benchmark_json(board: Board) -> list[dict]:
    """``kind: benchmark`` rows of ``--format json``: one per benchmark and endpoint."""
    return [
        {
            "kind": "benchmark",
            "label": section.label,
            **asdict(section.benchmark),
            "endpoint": eid,
            "score": score.mean,
            "ci95_low": score.ci95_low,
            "ci95_high": score.ci95_high,
            "problems_scored": score.n,
        }
        for section in benchmark_sections(board)
        for eid, score in section.scores
    ]


def _route_cells(route: Route, labels: dict[str, str]) -> list[str]:
    pick = route.endpoint_id
    if pick is None:
        too_few = f"too few answers: {route.min_prompts} prompts, need {ROUTE_MIN_PROMPTS}"
        return [route.suite, too_few, "—", "—", "—", "—"]
    return [
        route.suite,
        labels.get(pick, pick),
        number_cell(route.quality, ".2f"),
        number_cell(route.decode_tps, ".1f"),
        labels.get(route.best_id or "", route.best_id or "—"),
        _interval(*(route.best_ci95 or (None, None))),
    ]


def _level_cell(level: LevelRow | None) -> str:
    if level is None:
        return "—"
    mark = NOT_STEADY_MARK if level.steady is False else ""
    return number_cell(level.throughput_tps, ".1f") + mark


def leaderboard_table(board: Board, score_name: str) -> Table:
    """Every cell of the leaderboard, one line each."""
    labels = {e.id: e.label for e in board.endpoints}
    body = [
        [
            labels.get(r.endpoint, r.endpoint),
            r.suite,
            r.load.label,
            str(r.n),
            number_cell(r.score(score_name).mean, ".3f"),
            _interval(r.score(score_name).ci95_low, r.score(score_name).ci95_high),
            number_cell(r.decode.pooled_tps, ".1f"),
            number_cell(r.decode.p50_tps, ".1f"),
            number_cell(r.e2e_tps.mean, ".1f"),
            number_cell(r.ttft_p50_s, ".3f"),
            number_cell(r.throughput_tps, ".1f"),
            number_cell(None if r.full_load_share is None else r.full_load_share * 100, ".0f"),
            number_cell(None if r.timing_doubt_s is None else r.timing_doubt_s * 1000, ".0f"),
            str(r.errors),
            str(r.suspect),
        ]
        for r in board.rows
    ]
    score = score_label(score_name)
    headers = [
        "endpoint",
        "suite",
        "load",
        "n",
        f"{score} mean",
        "95% interval",
        "decode tok/s pooled",
        "decode tok/s p50",
        "e2e tok/s mean",
        "TTFT p50 s",
        "agg tok/s",
        "full load %",
        "timing doubt ms",
        "errors",
        "suspect",
    ]
    return ("Leaderboard", headers, body)


def vram_per_gpu(gpu: pl.DataFrame, endpoints: Sequence[EndpointInfo] = ()) -> pl.DataFrame:
    """Per card (``node``, ``gpu``, ascending), VRAM used in MiB: ``first_mib`` (before the run),
    ``last_mib`` (after it) and ``peak_mib``; no rows without a reading. ``node`` names the card's
    node when ``endpoints`` are on several (``GpuKeys``, as the live state files samples), else
    it is ""."""
    # A damaged row's NaN or infinite value is not a reading.
    samples = gpu.select("host", "gpu", "t", "vram_used_mib").filter(
        pl.col("vram_used_mib").is_finite()
    )
    keys = GpuKeys.of(endpoints)
    cards = samples.select("host", "gpu").unique()
    nodes = [keys.sampled(index, host)[0] for host, index in cards.iter_rows()]
    cards = cards.with_columns(node=pl.Series(nodes, dtype=pl.String))
    return (
        samples.join(cards, on=["host", "gpu"], how="left", nulls_equal=True)
        .sort("t")
        .group_by("node", "gpu")
        .agg(
            first_mib=pl.col("vram_used_mib").first(),
            last_mib=pl.col("vram_used_mib").last(),
            peak_mib=pl.col("vram_used_mib").max(),
        )
        .sort("node", "gpu")
    )


def vram_table(gpu: pl.DataFrame, endpoints: Sequence[EndpointInfo]) -> Table | None:
    """VRAM per GPU as nvidia-smi reports it (MiB): before the run (its first sample), after
    (its last), the change and the peak, as the seed's table showed it."""
    per_gpu = vram_per_gpu(gpu, endpoints)
    if per_gpu.is_empty():
        return None
    keys = GpuKeys.of(endpoints)
    by_card = {keys.endpoint(e): e for e in endpoints if e.gpu is not None}
    body = []
    for r in per_gpu.iter_rows(named=True):
        info = by_card.get((r["node"], r["gpu"]))
        change = r["last_mib"] - r["first_mib"]
        body.append(
            [
                f"{r['node']} {r['gpu']}" if r["node"] else str(r["gpu"]),
                info.label if info else "—",
                info.model_class if info else "—",
                f"{r['first_mib']:,.0f}",
                f"{r['last_mib']:,.0f}",
                "0" if round(change) == 0 else f"{change:+,.0f}",
                f"{r['peak_mib']:,.0f}",
            ]
        )
    headers = ["GPU", "endpoint", "class", "before", "after", "change", "peak"]
    return ("VRAM used (MiB)", headers, body)


def provenance_table(manifest: dict[str, Any]) -> Table | None:
    """What each endpoint ran (server, model, KV cache, GPU, driver) as recorded at run start;
    None for a run that recorded none (an older snapshot, an import)."""
    rows = configuration_rows(manifest)
    return ("Configuration", CONFIGURATION_HEADERS, rows) if rows else None


def throughput_chart(board: Board) -> str | None:
    """Aggregate throughput against load, one line per endpoint, as plain text. Load levels are
    evenly spaced: a sweep doubles them, which a linear axis would crowd into its left edge."""
    by_level = board.throughput()
    if not by_level:
        return None
    levels = board.level_loads()
    labels = {e.id: outside_line(e.label) for e in board.endpoints}
    lines = []
    for endpoint_id in board.endpoint_ids:
        points = [
            (x, tps)
            for x, load in enumerate(levels, 1)
            if (row := by_level.get((endpoint_id, load))) and (tps := row.throughput_tps)
        ]
        if not points:
            continue
        xs, ys = zip(*points, strict=True)
        lines.append((labels.get(endpoint_id) or outside_line(endpoint_id), xs, ys))
    return line_chart(
        lines,
        title=f"Aggregate throughput vs {load_axis(levels)}",
        xlabel=load_axis(levels),
        ylabel="tok/s",
        xticks=(list(range(1, len(levels) + 1)), [load.label for load in levels]),
    )


def doubt_table(events: Sequence[Event], endpoints: Sequence[EndpointInfo]) -> Table | None:
    """The phases whose timings the runner's own event-loop lag may have distorted, and by how
    much; None when there are none (or the run predates the measurement)."""
    rates = plan_rates(events)
    labels = {e.id: e.label for e in endpoints}
    body = [
        [
            labels.get(e.endpoint_id, e.endpoint_id),
            e.suite,
            Load.of(e.concurrency, rates.rate(e.t, e.endpoint_id, e.phase_index)).label,
            f"{doubt * 1000:.0f}",
            number_cell(None if e.loop_lag_max_s is None else e.loop_lag_max_s * 1000, ".0f"),
            number_cell(e.cpu_wait_s, ".1f"),
            number_cell(_share_pct(e.cpu_wait_s, e.wall_s), ".0f"),
        ]
        for e in events
        if isinstance(e, PhaseFinished) and (doubt := timing_doubt(e)) is not None
    ]
    if not body:
        return None
    scaled = sorted({e.time_scale for e in endpoints if e.time_scale != 1.0})
    behind = (
        f"; at simulator ×{', ×'.join(f'{k:g}' for k in scaled)} the lag is in modelled ms: "
        "the client could not keep up with the simulator's clock, so run it slower"
        if scaled
        else ""
    )
    return (
        "Timing doubt: the client's event loop ran late, so these phases' TTFT and ITL may read "
        f"up to its lag p99 long{behind}; CPU wait: how long the kernel kept the loop waiting "
        "for a CPU meanwhile (other processes on the cores: a lag it explains is the box's)",
        ["endpoint", "suite", "load", "loop lag p99 ms", "max ms", "CPU wait s", "% of phase"],
        body,
    )


def snapshot_server_view(snapshot: Snapshot) -> list[ServerViewRow]:
    """The server's view per endpoint and level (none when no endpoint served metrics)."""
    events = snapshot.report_events()
    requests = with_rates(snapshot.requests(), plan_rates(events))
    return server_view_rows(events, requests, snapshot.server())


def snapshot_board(snapshot: Snapshot) -> Board:
    return board_of(snapshot.requests(), snapshot.report_events())


def report_tables(
    snapshot: Snapshot,
    *,
    detail: bool = True,
    score_name: str | None = None,
    slice_s: float | None = None,
) -> list[Table]:
    """The seed's tables, then (with ``detail``) the VRAM table and the full leaderboard; every
    cell safe to print (``tables.table_cells``), as the JSON and Markdown exports write them."""
    events = snapshot.report_events()
    board = board_of(snapshot.requests(), events)
    score = board.shown_score(score_name)
    tables = summary_tables(board, score)
    doubts = doubt_table(events, board.endpoints)
    if doubts is not None:
        tables.append(doubts)
    tables += section_tables(sections_of(snapshot, events, board.endpoints, slice_s))
    server_view = snapshot_server_view(snapshot)
    if server_view:
        tables.append(server_view_table(server_view, board.endpoints))
    capacity = capacity_rows(events)
    if capacity:
        tables.append(capacity_table(capacity, board.endpoints))
    if detail:
        configured = provenance_table(snapshot.manifest)
        if configured is not None:
            tables.append(configured)
        vram = vram_table(snapshot.gpu(), board.endpoints)
        if vram is not None:
            tables.append(vram)
        tables.append(leaderboard_table(board, score))
    return [_printable(table) for table in tables]


def _printable(table: Table) -> Table:
    title, headers, rows = table
    cells = table_cells([headers, *rows])
    return outside_line(title), cells[0], cells[1:]


def leaderboard_json(board: Board, score_name: str | None = None) -> list[dict]:
    score = board.shown_score(score_name)
    return [row.json(score) for row in board.rows]


def read_in_part_note(snapshot: Snapshot) -> str:
    """The line that heads a report of a snapshot read only in part: its figures leave out rows."""
    return (
        f"Read in part: {len(snapshot.warnings)} file(s) or row(s) of this snapshot could not be "
        "read, and every figure below leaves their rows out (`nvfp4-tui report` names them)."
    )


def sections_of(
    snapshot: Snapshot,
    events: Sequence[Event],
    endpoints: Sequence[EndpointInfo],
    slice_s: float | None,
) -> SectionInput:
    """The sections' input; time slices as asked, else as the run's profile asked."""
    chosen = slice_s if slice_s is not None else run_slice_s(snapshot.manifest)
    return SectionInput(snapshot.requests(), events, endpoints, chosen, snapshot.server())


def render_snapshot(
    snapshot: Snapshot,
    fmt: str = "text",
    *,
    detail: bool = True,
    score_name: str | None = None,
    slice_s: float | None = None,
) -> str:
    """The report of an open snapshot: ``text`` (tables and a chart), ``markdown`` or ``json``."""
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"report format must be one of {list(REPORT_FORMATS)}, got {fmt!r}")
    if fmt == "json":
        board = snapshot_board(snapshot)
        rows = [*leaderboard_json(board, score_name), *benchmark_json(board)]
        rows += load_json_rows(snapshot.report_events())
        events = snapshot.report_events()
        rows += section_json(sections_of(snapshot, events, board.endpoints, slice_s))
        rows += [row.json() for row in snapshot_server_view(snapshot)]
        rows += metric_stats_json(metric_stats_of(snapshot.requests(), snapshot.report_events()))
        return json.dumps(rows, indent=1)
    markdown = fmt == "markdown"
    parts = [] if not snapshot.warnings else [read_in_part_note(snapshot)]
    parts += [
        format_table(headers, body, title=title, markdown=markdown)
        for title, headers, body in report_tables(
            snapshot, detail=detail, score_name=score_name, slice_s=slice_s
        )
    ]
    if detail and not markdown:
        board = snapshot_board(snapshot)
        given = sections_of(snapshot, snapshot.report_events(), board.endpoints, slice_s)
        charts = [
            throughput_chart(board),
            slices_chart(time_slice_rows(given), board.endpoints),
            ladder_chart(
                context_rows(given.requests, given.events, given.server, given.endpoints),
                board.endpoints,
            ),
        ]
        parts += [chart for chart in charts if chart is not None]
    return "\n\n".join(parts)


def _load(kind: str, value: float | None) -> str:
    return "—" if value is None else Load("rate" if kind == "rate" else "concurrency", value).label


def _slo_text(row: CapacityRow) -> str:
    targets = [f"{name}≤{value:g}s" for name, value in row.slo_targets]
    return f"{' '.join(targets) or 'no targets'}, {row.slo_attainment:.0%} of requests"


def capacity_table(rows: Sequence[CapacityRow], endpoints: Sequence[EndpointInfo]) -> Table:
    """Capacity at SLO: the highest load each endpoint sustained within it, and its knee."""
    labels = {e.id: e.label for e in endpoints}
    body = [
        [
            labels.get(r.endpoint, r.endpoint),
            _load(r.load_kind, r.capacity),
            number_cell(r.capacity_goodput_rps, ".2f"),
            number_cell(r.capacity_throughput_tps, ".1f"),
            number_cell(
                None if r.capacity_attainment is None else r.capacity_attainment * 100, ".0f"
            ),
            _load(r.load_kind, r.knee),
            _load(r.load_kind, r.max_load),
            r.sweep_stop or "—",
            _slo_text(r),
        ]
        for r in rows
    ]
    headers = [
        "endpoint",
        "capacity",
        "goodput req/s",
        "agg tok/s",
        "met %",
        "knee",
        "highest run",
        "sweep stop",
        "SLO",
    ]
    return ("Capacity at SLO", headers, body)


def load_json_rows(events: Sequence[Event]) -> list[dict]:
    """Rows beside the leaderboard's in ``--format json``, told apart by their ``kind``:
    ``capacity`` (one per endpoint that ran with an SLO or a sweep) and ``load_step`` (its
    points of throughput and goodput against load, the knee marked)."""
    rows: list[dict] = []
    for capacity, points in capacity_points(events):
        rows.append({"kind": "capacity", **asdict(capacity)})
        for point in points:
            rows.append(
                {
                    "kind": "load_step",
                    "endpoint": capacity.endpoint,
                    "load_kind": point.load.kind,
                    "load": point.load.value,
                    "requests": point.requests,
                    "met": point.met,
                    "errors": point.errors,
                    "late": point.late,
                    "window_s": point.window_s,
                    "attainment": point.attainment,
                    "goodput_rps": point.goodput_rps,
                    "throughput_tps": point.throughput_tps,
                    "sustained": point.sustained,
                    "knee": point.load.value == capacity.knee,
                }
            )
    return rows


def render(snapshot_path: Path, fmt: str = "text", *, detail: bool = True) -> str:
    return render_snapshot(open_snapshot(snapshot_path), fmt, detail=detail)


def print_summary(snapshot_path: Path) -> None:
    """The seed's tables alone: what `run --headless` prints when the run ends."""
    print(render(snapshot_path, detail=False))

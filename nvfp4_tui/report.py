"""The leaderboard of a snapshot as rows and as the seed's tables (text, markdown or JSON).

Rows a legacy script recorded with 0 output tokens and no error (its silent HTTP failures) are
imported as ``status="error"``, ``error_kind="suspect"``: they are counted in ``suspect``, apart
from real errors, and never averaged as zero scores.
"""

from __future__ import annotations

import bisect
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import plotext as plt
import polars as pl

from nvfp4_tui.events import EndpointInfo, Event, PhaseFinished, RunStarted
from nvfp4_tui.slo import (
    CapacityRow,
    Load,
    capacity_points,
    capacity_rows,
    load_axis,
    run_plans,
)
from nvfp4_tui.store.legacy import SUSPECT_ERROR_KIND
from nvfp4_tui.store.reader import Snapshot, open_snapshot
from nvfp4_tui.tables import format_table

REPORT_FORMATS = ("text", "json", "markdown")
CHART_WIDTH = 72
CHART_HEIGHT = 18
# One marker per endpoint: the chart must read without colour in a CI log.
CHART_MARKERS = "o+x*#@%&$=~^"

Table = tuple[str, list[str], list[list[str]]]  # title, headers, rows


@dataclass(frozen=True)
class LeaderboardRow:
    """One endpoint x suite x load level cell of the leaderboard (stable keys for `--format json`)."""

    endpoint: str
    suite: str
    concurrency: int
    n: int
    quality_mean: float | None
    e2e_tps_mean: float | None
    decode_tps_mean: float | None
    ttft_p50_s: float | None
    throughput_tps: float | None
    errors: int
    suspect: int = 0  # rows a legacy script recorded as 0 tokens without an error
    rate_rps: float | None = None  # open loop: requests/s, ``concurrency`` then only caps (0: none)

    @property
    def load(self) -> Load:
        return Load.of(self.concurrency, self.rate_rps)


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


def _phase_load(e: PhaseFinished, rates: PlanRates) -> Load:
    return Load.of(e.concurrency, rates.rate(e.t, e.endpoint_id, e.phase_index))


def _phase_throughput(events: Sequence[Event]) -> dict[tuple[str, str, Load], float]:
    """Output tokens over wall time of the finished phases, by endpoint, suite and load level."""
    rates = plan_rates(events)
    tokens: dict[tuple[str, str, Load], float] = defaultdict(float)
    wall: dict[tuple[str, str, Load], float] = defaultdict(float)
    for e in events:
        if isinstance(e, PhaseFinished):
            key = (e.endpoint_id, e.suite, _phase_load(e, rates))
            tokens[key] += e.output_tokens
            wall[key] += e.wall_s
    return {k: tokens[k] / wall[k] for k in tokens if wall[k] > 0}


def with_rates(requests: pl.DataFrame, rates: PlanRates) -> pl.DataFrame:
    """The requests with their phase's planned ``rate_rps`` (null: closed loop)."""
    if not rates.rates:
        return requests.with_columns(rate_rps=pl.lit(None, dtype=pl.Float64))
    if len(rates.starts) > 1:
        starts = pl.Series(rates.starts, dtype=pl.Float64)
        run = (starts.search_sorted(requests.get_column("t"), side="right") - 1).clip(0)
    else:
        run = pl.repeat(0, requests.height, dtype=pl.Int64, eager=True)
    plan = pl.DataFrame(
        {
            "_run": [r for r, _, _ in rates.rates],
            "endpoint_id": [endpoint for _, endpoint, _ in rates.rates],
            "phase_index": [index for _, _, index in rates.rates],
            "rate_rps": list(rates.rates.values()),
        },
        schema={
            "_run": pl.Int64,
            "endpoint_id": requests.schema["endpoint_id"],
            "phase_index": requests.schema["phase_index"],
            "rate_rps": pl.Float64,
        },
    )
    keyed = requests.with_columns(_run=run.cast(pl.Int64))
    return keyed.join(plan, on=["_run", "endpoint_id", "phase_index"], how="left").drop("_run")


def leaderboard_rows(requests: pl.DataFrame, events: Sequence[Event]) -> list[LeaderboardRow]:
    """Per endpoint, suite and load level: quality, speed, TTFT, throughput and error counts.

    Rows come by endpoint (in the run's order), then load level (closed loop by concurrency,
    then open loop by rate), then suite in plan order.
    """
    if requests.is_empty():
        return []
    suspect = (pl.col("status") == "error") & (pl.col("error_kind") == SUSPECT_ERROR_KIND)
    ok = pl.col("status") != "error"
    timed = ok & ~pl.col("trimmed").fill_null(False)  # warm-up and cool-down rows are not timed
    levels = with_rates(requests, plan_rates(events))
    grouped = levels.group_by("endpoint_id", "suite", "concurrency", "rate_rps").agg(
        n=ok.sum(),
        quality_mean=pl.col("score_heuristic").filter(ok).mean(),
        e2e_tps_mean=pl.col("e2e_tps").filter(timed).mean(),
        decode_tps_mean=pl.col("decode_tps").filter(timed).mean(),
        ttft_p50_s=pl.col("ttft_s").filter(timed).median(),
        errors=((pl.col("status") == "error") & ~suspect.fill_null(False)).sum(),
        suspect=suspect.fill_null(False).sum(),
    )
    throughput = _phase_throughput(events)
    endpoint_order = {e.id: i for i, e in enumerate(endpoints_of(events))}
    suite_order = {suite: i for i, suite in enumerate(_plan_suites(events, requests))}
    rows = [
        LeaderboardRow(
            endpoint=r["endpoint_id"],
            suite=r["suite"],
            concurrency=r["concurrency"],
            rate_rps=r["rate_rps"],
            n=r["n"],
            quality_mean=r["quality_mean"],
            e2e_tps_mean=r["e2e_tps_mean"],
            decode_tps_mean=r["decode_tps_mean"],
            ttft_p50_s=r["ttft_p50_s"],
            throughput_tps=throughput.get(
                (r["endpoint_id"], r["suite"], Load.of(r["concurrency"], r["rate_rps"]))
            ),
            errors=r["errors"],
            suspect=r["suspect"],
        )
        for r in grouped.iter_rows(named=True)
    ]
    return sorted(
        rows,
        key=lambda r: (
            endpoint_order.get(r.endpoint, len(endpoint_order)),
            r.endpoint,
            r.load.order,
            r.concurrency,
            suite_order[r.suite],
        ),
    )


def _plan_suites(events: Sequence[Event], requests: pl.DataFrame) -> list[str]:
    """Suites in the order the run planned them, then any seen only in the requests."""
    planned = [p.suite for e in events if isinstance(e, RunStarted) for p in e.phases]
    return list(dict.fromkeys([*planned, *requests.get_column("suite").to_list()]))


def endpoints_of(events: Sequence[Event]) -> tuple[EndpointInfo, ...]:
    for e in events:
        if isinstance(e, RunStarted):
            return e.endpoints
    return ()


def _fmt(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def _level_order(levels: Iterable[Load]) -> list[Load]:
    return sorted(set(levels), key=lambda load: load.order)


def _at(load: Load) -> str:
    """A table title's load level: ``concurrency 1`` (the seed's words) or ``2 req/s``."""
    return f"concurrency {load.value:g}" if load.kind == "concurrency" else load.label


def summary_tables(
    rows: Sequence[LeaderboardRow], endpoints: Sequence[EndpointInfo], events: Sequence[Event]
) -> list[Table]:
    """The seed's tables: quality at the lowest load (c=1), speed vs class, aggregate throughput
    per load level, errors."""
    labels = {e.id: e.label for e in endpoints}
    ids = [e.id for e in endpoints] or sorted({r.endpoint for r in rows})
    base = min((r.load for r in rows), key=lambda load: load.order, default=Load("concurrency", 1))
    at_base = {(r.endpoint, r.suite): r for r in rows if r.load == base}
    suites = list(dict.fromkeys(r.suite for r in rows))
    tables: list[Table] = []

    quality = [
        [suite, *(_fmt(getattr(at_base.get((i, suite)), "quality_mean", None), ".2f") for i in ids)]
        for suite in suites
    ]
    tables.append((f"Quality ({_at(base)})", ["suite", *(labels.get(i, i) for i in ids)], quality))

    speed_rows = []
    decode = {
        i: _mean([r.decode_tps_mean for r in rows if r.endpoint == i and r.load == base])
        for i in ids
    }
    e2e = {
        i: _mean([r.e2e_tps_mean for r in rows if r.endpoint == i and r.load == base]) for i in ids
    }
    classes = {e.id: e.model_class for e in endpoints}
    class_mean = {
        c: _mean([decode[i] for i in ids if classes.get(i) == c]) for c in set(classes.values())
    }
    for i in ids:
        mean = class_mean.get(classes.get(i, ""))
        rel = f"{(decode[i] / mean - 1) * 100:+.0f}%" if decode[i] and mean else "—"
        speed_rows.append(
            [
                labels.get(i, i),
                classes.get(i, "—"),
                _fmt(decode[i], ".1f"),
                _fmt(e2e[i], ".1f"),
                rel,
            ]
        )
    tables.append(
        (
            f"Speed ({_at(base)})",
            ["endpoint", "class", "decode tok/s", "e2e tok/s", "vs class avg"],
            speed_rows,
        )
    )

    levels = _level_order(r.load for r in rows)
    phase_tps = _throughput_by_level(events)
    tables.append(
        (
            "Aggregate throughput (tok/s, output tokens / phase wall time)",
            ["endpoint", *(load.label for load in levels)],
            [
                [labels.get(i, i), *(_fmt(phase_tps.get((i, load)), ".1f") for load in levels)]
                for i in ids
            ],
        )
    )

    error_rows = []
    for i in ids:
        mine = [r for r in rows if r.endpoint == i]
        error_rows.append(
            [
                labels.get(i, i),
                str(sum(r.n for r in mine)),
                str(sum(r.errors for r in mine)),
                str(sum(r.suspect for r in mine)),
            ]
        )
    tables.append(("Requests", ["endpoint", "ok", "errors", "suspect"], error_rows))
    return tables


def leaderboard_table(rows: Sequence[LeaderboardRow], endpoints: Sequence[EndpointInfo]) -> Table:
    """Every cell of the leaderboard, one line each."""
    labels = {e.id: e.label for e in endpoints}
    body = [
        [
            labels.get(r.endpoint, r.endpoint),
            r.suite,
            r.load.label,
            str(r.n),
            _fmt(r.quality_mean, ".3f"),
            _fmt(r.decode_tps_mean, ".1f"),
            _fmt(r.e2e_tps_mean, ".1f"),
            _fmt(r.ttft_p50_s, ".3f"),
            _fmt(r.throughput_tps, ".1f"),
            str(r.errors),
            str(r.suspect),
        ]
        for r in rows
    ]
    headers = [
        "endpoint",
        "suite",
        "load",
        "n",
        "quality",
        "decode tok/s",
        "e2e tok/s",
        "TTFT p50 s",
        "agg tok/s",
        "errors",
        "suspect",
    ]
    return ("Leaderboard", headers, body)


def vram_table(gpu: pl.DataFrame, endpoints: Sequence[EndpointInfo]) -> Table | None:
    """VRAM per GPU as nvidia-smi reports it (MiB): before the run (its first sample), after
    (its last), the change and the peak, as the seed's table showed it."""
    # A damaged row's NaN or infinite value is not a reading.
    samples = gpu.select("gpu", "t", "vram_used_mib").filter(pl.col("vram_used_mib").is_finite())
    if samples.is_empty():
        return None
    per_gpu = (
        samples.sort("t")
        .group_by("gpu")
        .agg(
            first_mib=pl.col("vram_used_mib").first(),
            last_mib=pl.col("vram_used_mib").last(),
            peak_mib=pl.col("vram_used_mib").max(),
        )
        .sort("gpu")
    )
    by_gpu = {e.gpu: e for e in endpoints if e.gpu is not None}
    body = []
    for r in per_gpu.iter_rows(named=True):
        info = by_gpu.get(r["gpu"])
        change = r["last_mib"] - r["first_mib"]
        body.append(
            [
                str(r["gpu"]),
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


def throughput_chart(events: Sequence[Event], endpoints: Sequence[EndpointInfo]) -> str | None:
    """Aggregate throughput against load, one line per endpoint, as plain text. Load levels are
    evenly spaced: a sweep doubles them, which a linear axis would crowd into its left edge."""
    phase_tps = _throughput_by_level(events)
    if not phase_tps:
        return None
    levels = _level_order(load for _, load in phase_tps)
    ids = [e.id for e in endpoints] or sorted({i for i, _ in phase_tps})
    labels = {e.id: e.label for e in endpoints}
    plt.clear_figure()
    plt.theme("clear")
    plt.plotsize(CHART_WIDTH, CHART_HEIGHT)
    for n, endpoint_id in enumerate(ids):
        points = [
            (x, phase_tps[(endpoint_id, load)])
            for x, load in enumerate(levels, 1)
            if (endpoint_id, load) in phase_tps
        ]
        if not points:
            continue
        xs, ys = zip(*points, strict=True)
        marker = CHART_MARKERS[n % len(CHART_MARKERS)]
        plt.plot(list(xs), list(ys), label=labels.get(endpoint_id, endpoint_id), marker=marker)
    plt.xticks(list(range(1, len(levels) + 1)), [load.label for load in levels])
    plt.title(f"Aggregate throughput vs {load_axis(levels)}")
    plt.xlabel(load_axis(levels))
    plt.ylabel("tok/s")
    text = plt.uncolorize(plt.build())
    plt.clear_figure()
    return "\n".join(line.rstrip() for line in text.splitlines())


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _throughput_by_level(events: Sequence[Event]) -> dict[tuple[str, Load], float]:
    """Output tokens over wall time of the finished phases, by endpoint and load level."""
    rates = plan_rates(events)
    tokens: dict[tuple[str, Load], float] = defaultdict(float)
    wall: dict[tuple[str, Load], float] = defaultdict(float)
    for e in events:
        if isinstance(e, PhaseFinished):
            key = (e.endpoint_id, _phase_load(e, rates))
            tokens[key] += e.output_tokens
            wall[key] += e.wall_s
    return {k: tokens[k] / wall[k] for k in tokens if wall[k] > 0}


def snapshot_rows(snapshot: Snapshot) -> list[LeaderboardRow]:
    return leaderboard_rows(snapshot.requests(), snapshot.report_events())


def report_tables(snapshot: Snapshot, *, detail: bool = True) -> list[Table]:
    """The seed's tables, then (with ``detail``) the VRAM table and the full leaderboard."""
    events = snapshot.report_events()
    rows = leaderboard_rows(snapshot.requests(), events)
    endpoints = endpoints_of(events)
    tables = summary_tables(rows, endpoints, events)
    capacity = capacity_rows(events)
    if capacity:
        tables.append(capacity_table(capacity, endpoints))
    if detail:
        vram = vram_table(snapshot.gpu(), endpoints)
        if vram is not None:
            tables.append(vram)
        tables.append(leaderboard_table(rows, endpoints))
    return tables


def render_snapshot(snapshot: Snapshot, fmt: str = "text", *, detail: bool = True) -> str:
    """The report of an open snapshot: ``text`` (tables and a chart), ``markdown`` or ``json``."""
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"report format must be one of {list(REPORT_FORMATS)}, got {fmt!r}")
    if fmt == "json":
        rows = [asdict(r) for r in snapshot_rows(snapshot)]
        return json.dumps([*rows, *load_json_rows(snapshot.report_events())], indent=1)
    markdown = fmt == "markdown"
    parts = [
        format_table(headers, body, title=title, markdown=markdown)
        for title, headers, body in report_tables(snapshot, detail=detail)
    ]
    if detail and not markdown:
        events = snapshot.report_events()
        chart = throughput_chart(events, endpoints_of(events))
        if chart is not None:
            parts.append(chart)
    return "\n\n".join(parts)


def _load(kind: str, value: float | None) -> str:
    return "—" if value is None else Load("rate" if kind == "rate" else "concurrency", value).label


def _slo_text(row: CapacityRow) -> str:
    targets = [
        f"{name}≤{value:g}s"
        for name, value in (
            ("TTFT", row.slo_ttft_s),
            ("TPOT", row.slo_tpot_s),
            ("E2E", row.slo_e2e_s),
        )
        if value is not None
    ]
    return f"{' '.join(targets) or 'no targets'}, {row.slo_attainment:.0%} of requests"


def capacity_table(rows: Sequence[CapacityRow], endpoints: Sequence[EndpointInfo]) -> Table:
    """Capacity at SLO: the highest load each endpoint sustained within it, and its knee."""
    labels = {e.id: e.label for e in endpoints}
    body = [
        [
            labels.get(r.endpoint, r.endpoint),
            _load(r.load_kind, r.capacity),
            _fmt(r.capacity_goodput_rps, ".2f"),
            _fmt(r.capacity_throughput_tps, ".1f"),
            _fmt(None if r.capacity_attainment is None else r.capacity_attainment * 100, ".0f"),
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

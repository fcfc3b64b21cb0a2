"""The leaderboard of a snapshot as rows and as the seed's tables (text, markdown or JSON)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import polars as pl

from nvfp4_tui.events import EndpointInfo, Event, PhaseFinished, RunStarted
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.tables import format_table


@dataclass(frozen=True)
class LeaderboardRow:
    """One endpoint x suite x concurrency cell of the leaderboard (stable keys for `--format json`)."""

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


def _phase_throughput(events: Sequence[Event]) -> dict[tuple[str, str, int], float]:
    tokens: dict[tuple[str, str, int], float] = defaultdict(float)
    wall: dict[tuple[str, str, int], float] = defaultdict(float)
    for e in events:
        if isinstance(e, PhaseFinished):
            key = (e.endpoint_id, e.suite, e.concurrency)
            tokens[key] += e.output_tokens
            wall[key] += e.wall_s
    return {k: tokens[k] / wall[k] for k in tokens if wall[k] > 0}


def leaderboard_rows(requests: pl.DataFrame, events: Sequence[Event]) -> list[LeaderboardRow]:
    """Per endpoint, suite and concurrency: quality, speed, TTFT, throughput and error counts."""
    if requests.is_empty():
        return []
    suspect = (pl.col("status") == "error") & (pl.col("error_kind") == "suspect")
    ok = pl.col("status") != "error"
    grouped = (
        requests.group_by("endpoint_id", "suite", "concurrency", maintain_order=True)
        .agg(
            n=ok.sum(),
            quality_mean=pl.col("score_heuristic").filter(ok).mean(),
            e2e_tps_mean=pl.col("e2e_tps").filter(ok).mean(),
            decode_tps_mean=pl.col("decode_tps").filter(ok).mean(),
            ttft_p50_s=pl.col("ttft_s").filter(ok).median(),
            errors=((pl.col("status") == "error") & ~suspect).sum(),
            suspect=suspect.sum(),
        )
        .sort("endpoint_id", "concurrency", "suite", maintain_order=True)
    )
    throughput = _phase_throughput(events)
    order = {e.id: i for i, e in enumerate(endpoints_of(events))}
    rows = [
        LeaderboardRow(
            endpoint=r["endpoint_id"],
            suite=r["suite"],
            concurrency=r["concurrency"],
            n=r["n"],
            quality_mean=r["quality_mean"],
            e2e_tps_mean=r["e2e_tps_mean"],
            decode_tps_mean=r["decode_tps_mean"],
            ttft_p50_s=r["ttft_p50_s"],
            throughput_tps=throughput.get((r["endpoint_id"], r["suite"], r["concurrency"])),
            errors=r["errors"],
            suspect=r["suspect"],
        )
        for r in grouped.iter_rows(named=True)
    ]
    return sorted(rows, key=lambda r: (order.get(r.endpoint, len(order)), r.concurrency, r.suite))


def endpoints_of(events: Sequence[Event]) -> tuple[EndpointInfo, ...]:
    for e in events:
        if isinstance(e, RunStarted):
            return e.endpoints
    return ()


def _fmt(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def summary_tables(
    rows: Sequence[LeaderboardRow], endpoints: Sequence[EndpointInfo], events: Sequence[Event]
) -> list[tuple[str, list[str], list[list[str]]]]:
    """The seed's tables: quality at c=1, speed vs class, aggregate throughput, errors."""
    labels = {e.id: e.label for e in endpoints}
    ids = [e.id for e in endpoints] or sorted({r.endpoint for r in rows})
    base = min((r.concurrency for r in rows), default=1)
    at_base = {(r.endpoint, r.suite): r for r in rows if r.concurrency == base}
    suites = list(dict.fromkeys(r.suite for r in rows))
    tables = []

    quality = [
        [suite, *(_fmt(getattr(at_base.get((i, suite)), "quality_mean", None), ".2f") for i in ids)]
        for suite in suites
    ]
    tables.append(
        (f"Quality (concurrency {base})", ["suite", *(labels.get(i, i) for i in ids)], quality)
    )

    speed_rows = []
    decode = {
        i: _mean([r.decode_tps_mean for r in rows if r.endpoint == i and r.concurrency == base])
        for i in ids
    }
    e2e = {
        i: _mean([r.e2e_tps_mean for r in rows if r.endpoint == i and r.concurrency == base])
        for i in ids
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
            f"Speed (concurrency {base})",
            ["endpoint", "class", "decode tok/s", "e2e tok/s", "vs class avg"],
            speed_rows,
        )
    )

    levels = sorted({r.concurrency for r in rows})
    phase_tps = _throughput_by_level(events)
    tables.append(
        (
            "Aggregate throughput (tok/s, output tokens / phase wall time)",
            ["endpoint", *(f"c={c}" for c in levels)],
            [
                [labels.get(i, i), *(_fmt(phase_tps.get((i, c)), ".1f") for c in levels)]
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


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _throughput_by_level(events: Sequence[Event]) -> dict[tuple[str, int], float]:
    tokens: dict[tuple[str, int], float] = defaultdict(float)
    wall: dict[tuple[str, int], float] = defaultdict(float)
    for e in events:
        if isinstance(e, PhaseFinished):
            tokens[(e.endpoint_id, e.concurrency)] += e.output_tokens
            wall[(e.endpoint_id, e.concurrency)] += e.wall_s
    return {k: tokens[k] / wall[k] for k in tokens if wall[k] > 0}


def render(snapshot_path: Path, fmt: str = "text") -> str:
    snapshot = open_snapshot(snapshot_path)
    events = snapshot.events()
    rows = leaderboard_rows(snapshot.requests(), events)
    if fmt == "json":
        return json.dumps([asdict(r) for r in rows], indent=1)
    tables = summary_tables(rows, endpoints_of(events), events)
    return "\n\n".join(
        format_table(headers, body, title=title, markdown=fmt == "markdown")
        for title, headers, body in tables
    )


def print_summary(snapshot_path: Path) -> None:
    print(render(snapshot_path))

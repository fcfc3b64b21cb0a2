"""The report's context-ladder tables, from a snapshot's requests and the server's polls
(``core.figures.context``): speed and recall by rung and level, recall by depth (a heatmap of
length × depth in text), and how many requests of each rung an endpoint runs at once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

import polars as pl

from nvfp4_tui.core.events import EndpointInfo, Event, RequestFinished
from nvfp4_tui.core.figures.context import (
    CONTEXT_SUITE_PREFIX,
    LadderGauges,
    LadderRow,
    LadderSent,
    RungCapacity,
    ladder_rows,
)
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.output.tables import Table, ms_cell, number_cell
from nvfp4_tui.output.text_chart import line_chart
from nvfp4_tui.store.schema import frame_to_events

LADDER_TITLE = (
    "Context ladder: TTFT (mean, p50), prefill tok/s (prompt tokens / TTFT, mean) and decode "
    "tok/s (mean) by prompt length; recall = share of the hidden facts found (verified, mean); "
    "the server's running and waiting peaks while the rung ran"
)
DEPTHS_TITLE = "Context ladder recall by depth: share of answers that found the fact hidden there"
CAPACITY_TITLE = (
    "Context capacity: requests of a rung the server ran at once before it queued or "
    "preempted (from vLLM's num_requests_running/waiting and num_preemptions)"
)
_SHADES = " ░▒▓█"  # recall 0 (blank) to 1 (full)
# The columns that are not LadderSent's fields by name.
_RENAMED = {
    "failed": pl.col("status") == "error",
    "recall": pl.col("score_verified"),
    "recall_detail": pl.col("score_verified_detail"),
}


def context_rows(
    requests: pl.DataFrame,
    events: Sequence[Event],
    server: pl.DataFrame | None,
    endpoints: Sequence[EndpointInfo],
) -> list[LadderRow]:
    """Empty when the run climbed no context ladder."""
    if requests.is_empty() or "suite" not in requests.columns:
        return []
    ladder = requests.filter(pl.col("suite").str.starts_with(CONTEXT_SUITE_PREFIX))
    if ladder.is_empty():
        return []
    suites = set(ladder["suite"].unique().to_list())
    gauges = LadderGauges(suites)
    timeline: list[Event] = [e for e in events if not isinstance(e, RequestFinished)]
    if server is not None:
        timeline += frame_to_events("server", server)
    for event in sorted(timeline, key=lambda e: e.t):
        gauges.apply(event)
    columns = ladder.select(
        **{f.name: _RENAMED.get(f.name, pl.col(f.name)) for f in fields(LadderSent)}
    )
    sent = (LadderSent(**row) for row in columns.iter_rows(named=True))
    return ladder_rows(sent, gauges, tuple(e.id for e in endpoints))


def _length(row: LadderRow) -> str:
    return number_cell(row.tokens_in_asked, ",")


def ladder_table(rows: Sequence[LadderRow], endpoints: Sequence[EndpointInfo]) -> Table:
    labels = {e.id: e.label for e in endpoints}
    headers = [
        "endpoint",
        "rung",
        "load",
        "tokens asked",
        "tokens in (server)",
        "requests",
        "errors",
        "TTFT ms mean",
        "TTFT ms p50",
        "prefill tok/s",
        "decode tok/s",
        "recall",
        "running peak",
        "waiting peak",
    ]
    body = [
        [
            labels.get(r.endpoint_id, r.endpoint_id),
            r.suite.removeprefix(CONTEXT_SUITE_PREFIX),
            f"c={r.concurrency}",
            _length(r),
            number_cell(r.tokens_in_mean, ",.0f"),
            str(r.requests),
            str(r.errors),
            ms_cell(r.ttft_mean_s),
            ms_cell(r.ttft_p50_s),
            number_cell(r.prefill_tps_mean, ",.0f"),
            number_cell(r.decode_tps_mean, ".1f"),
            number_cell(r.recall_mean, ".2f"),
            number_cell(r.running_peak, ".0f"),
            number_cell(r.waiting_peak, ".0f"),
        ]
        for r in rows
    ]
    return LADDER_TITLE, headers, body


def depths_table(rows: Sequence[LadderRow], endpoints: Sequence[EndpointInfo]) -> Table:
    """One row per endpoint and rung (its levels pooled), one column per depth: the share and
    a shade, so a model that loses the middle of long contexts shows as a pale band."""
    labels = {e.id: e.label for e in endpoints}
    pooled: dict[tuple[str, str], dict[float, list[float]]] = {}
    lengths: dict[tuple[str, str], str] = {}
    for row in rows:
        key = (row.endpoint_id, row.suite)
        lengths.setdefault(key, _length(row))
        for depth, share in row.recall_by_depth:
            pooled.setdefault(key, {}).setdefault(depth, []).extend([share] * row.requests)
    depths = sorted({depth for by_depth in pooled.values() for depth in by_depth})
    headers = ["endpoint", "rung", "tokens asked", *(f"depth {d:.0%}" for d in depths)]
    body = []
    for key, by_depth in pooled.items():
        cells = []
        for depth in depths:
            shares = by_depth.get(depth)
            cells.append(
                f"{_shade(mean := sum(shares) / len(shares))} {mean:.2f}" if shares else "—"
            )
        body.append(
            [
                labels.get(key[0], key[0]),
                key[1].removeprefix(CONTEXT_SUITE_PREFIX),
                lengths[key],
                *cells,
            ]
        )
    return DEPTHS_TITLE, headers, body


def _shade(share: float) -> str:
    return _SHADES[min(int(share * (len(_SHADES) - 1) + 0.5), len(_SHADES) - 1)] * 2


def capacity_table(rows: Sequence[RungCapacity], endpoints: Sequence[EndpointInfo]) -> Table:
    labels = {e.id: e.label for e in endpoints}
    headers = ["endpoint", "rung", "capacity", "first full level", "KV cache (server)"]
    body = [
        [
            labels.get(r.endpoint_id, r.endpoint_id),
            r.suite.removeprefix(CONTEXT_SUITE_PREFIX),
            r.label,
            "—" if r.full_at is None else f"c={r.full_at}",
            r.cache,
        ]
        for r in rows
    ]
    return CAPACITY_TITLE, headers, body


def ladder_chart(rows: Sequence[LadderRow], endpoints: Sequence[EndpointInfo]) -> str | None:
    """Each endpoint's TTFT mean rung by rung at its first level: what a longer context costs
    before the first token."""
    if not rows:
        return None
    labels = {e.id: outside_line(e.label) for e in endpoints}
    rungs = list(dict.fromkeys(r.suite for r in rows))  # rows come shortest rung first
    first_level: dict[str, int] = {}
    series: dict[str, dict[int, float]] = {}
    for row in rows:
        level = first_level.setdefault(row.endpoint_id, row.concurrency)
        if row.concurrency == level and row.ttft_mean_s is not None:
            series.setdefault(row.endpoint_id, {})[rungs.index(row.suite)] = row.ttft_mean_s
    if not series:
        return None
    return line_chart(
        [
            (labels.get(endpoint_id) or outside_line(endpoint_id), list(by), list(by.values()))
            for endpoint_id, by in series.items()
        ],
        title="TTFT mean by context length (each endpoint's first level)",
        xlabel="rung",
        ylabel="TTFT s",
        xticks=(list(range(len(rungs))), [r.removeprefix(CONTEXT_SUITE_PREFIX) for r in rungs]),
    )

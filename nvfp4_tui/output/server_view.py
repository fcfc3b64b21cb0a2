"""The server's view of a snapshot (``core.figures.server_view``) read from its tables, and the
report's table of it: the client's TTFT and ITL means beside vLLM's, per endpoint and level."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from nvfp4_tui.core.events import EndpointInfo, Event, RequestFinished
from nvfp4_tui.core.figures.server_view import ClientTotals, ServerViewFold, ServerViewRow
from nvfp4_tui.core.slo import Load
from nvfp4_tui.output.tables import Table, ms_cell, number_cell
from nvfp4_tui.store.schema import frame_to_events

SERVER_VIEW_TITLE = (
    "Server view: the client's means beside vLLM's /metrics over each level's window "
    "(queue, prefill and decode: per request; gap: client − server TTFT)"
)
SERVER_VIEW_HEADERS = [
    "endpoint",
    "load",
    "TTFT ms client",
    "TTFT ms server",
    "gap ms",
    "ITL ms client",
    "ITL ms server",
    "queue ms",
    "prefill ms",
    "decode ms",
    "KV % peak",
    "KV % mean",
    "running peak",
    "waiting peak",
    "preemptions",
    "prefix hit %",
    "note",
]


def server_view_rows(
    events: Sequence[Event], requests: pl.DataFrame, server: pl.DataFrame
) -> list[ServerViewRow]:
    """Every level's row, or none when no endpoint served metrics. ``requests`` carries each
    row's planned ``rate_rps`` (``report.with_rates``); the client's figures are summed from it,
    so the events' own requests are left out of the fold."""
    fold = ServerViewFold()
    timeline: list[Event] = [e for e in events if not isinstance(e, RequestFinished)]
    timeline += frame_to_events("server", server)
    for event in sorted(timeline, key=lambda e: e.t):  # stable: a phase's start before a poll
        fold.apply(event)
    decoded = (
        (pl.col("status") != "error")
        & pl.col("ttft_s").is_not_null()
        & pl.col("e2e_s").is_not_null()
        & (pl.col("chunks") > 1)
    )
    totals = requests.group_by("endpoint_id", "concurrency", "rate_rps").agg(
        ttft_sum_s=pl.col("ttft_s").sum(),
        ttft_count=pl.col("ttft_s").count(),
        decode_sum_s=(pl.col("e2e_s") - pl.col("ttft_s")).filter(decoded).sum(),
        gaps=(pl.col("chunks") - 1).filter(decoded).sum(),
    )
    for row in totals.iter_rows(named=True):
        key = (row["endpoint_id"], Load.of(row["concurrency"], row["rate_rps"]))
        fold.add_client(
            key,
            row["concurrency"],
            ClientTotals(
                row["ttft_sum_s"] or 0.0,
                row["ttft_count"],
                row["decode_sum_s"] or 0.0,
                row["gaps"] or 0,
            ),
        )
    return fold.rows()


def _num(value: float | None, spec: str = ".0f") -> str:
    return number_cell(value, spec)


def server_view_table(rows: Sequence[ServerViewRow], endpoints: Sequence[EndpointInfo]) -> Table:
    labels = {e.id: e.label for e in endpoints}
    body = [
        [
            labels.get(r.endpoint_id, r.endpoint_id),
            r.load.label,
            ms_cell(r.client_ttft_mean_s),
            ms_cell(r.server_ttft_mean_s),
            ms_cell(r.ttft_gap_s),
            ms_cell(r.client_itl_mean_s),
            ms_cell(r.server_itl_mean_s),
            ms_cell(r.server_queue_mean_s),
            ms_cell(r.server_prefill_mean_s),
            ms_cell(r.server_decode_mean_s),
            _num(r.kv_cache_peak_pct, ".1f"),
            _num(r.kv_cache_mean_pct, ".1f"),
            _num(r.running_peak),
            _num(r.waiting_peak),
            _num(r.preemptions),
            _num(None if r.prefix_cache_hit_rate is None else r.prefix_cache_hit_rate * 100),
            r.note or "—",
        ]
        for r in rows
    ]
    return SERVER_VIEW_TITLE, list(SERVER_VIEW_HEADERS), body

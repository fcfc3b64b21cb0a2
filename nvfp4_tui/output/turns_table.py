"""The report's multi-turn table, from a snapshot's requests: per endpoint and turn of its
sessions, TTFT against the input that grows with the history (``core.figures.turns``)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from nvfp4_tui.core.events import EndpointInfo
from nvfp4_tui.core.figures.turns import TurnRow, turn_rows
from nvfp4_tui.output.tables import Table, ms_cell, number_cell

TURNS_TITLE = (
    "Multi-turn sessions by turn: TTFT (mean, p50) against the input tokens (mean, the history "
    "included); a prefix cache keeps TTFT from growing with the history"
)


def session_turn_rows(requests: pl.DataFrame, endpoints: Sequence[EndpointInfo]) -> list[TurnRow]:
    """None when the run had no sessions."""
    if "turn" not in requests.columns:
        return []
    sent = requests.filter(pl.col("turn").is_not_null()).select(
        "endpoint_id",
        "concurrency",
        "turn",
        pl.col("status") == "error",
        "ttft_s",
        "tokens_in",
    )
    return turn_rows(sent.iter_rows(), tuple(e.id for e in endpoints))


def turns_table(rows: Sequence[TurnRow], endpoints: Sequence[EndpointInfo]) -> Table:
    labels = {e.id: e.label for e in endpoints}
    headers = [
        "endpoint",
        "load",
        "turn",
        "requests",
        "errors",
        "TTFT ms mean",
        "TTFT ms p50",
        "input tokens mean",
    ]
    body = [
        [
            labels.get(r.endpoint_id, r.endpoint_id),
            f"c={r.concurrency}",
            str(r.turn),
            str(r.requests),
            str(r.errors),
            ms_cell(r.ttft_mean_s),
            ms_cell(r.ttft_p50_s),
            number_cell(r.tokens_in_mean, ".1f"),
        ]
        for r in rows
    ]
    return TURNS_TITLE, headers, body

"""The report's synthetic lengths table, from a snapshot's requests: per endpoint and suite, the
input and output tokens asked against those the server counted (``core.figures.lengths``)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from nvfp4_tui.core.events import EndpointInfo, Event, ProbeFinished
from nvfp4_tui.core.figures.lengths import LengthRow, LengthTally
from nvfp4_tui.output.tables import Table, number_cell

LENGTHS_TITLE = (
    "Synthetic lengths: tokens asked against the server's usage, means per request "
    "(input gap: the chat template, mostly)"
)
_COLUMNS = (
    "endpoint_id",
    "suite",
    "tokens_in_asked",
    "tokens_out_asked",
    "tokens_in",
    "tokens_out",
    "tokens_estimated",
)


def length_rows(
    requests: pl.DataFrame, events: Sequence[Event], endpoints: Sequence[EndpointInfo]
) -> list[LengthRow]:
    """Every answered synthetic request counted; none when the run sent no synthetic prompt."""
    if "tokens_in_asked" not in requests.columns:
        return []
    tally = LengthTally()
    for event in events:
        if isinstance(event, ProbeFinished):
            tally.probe(event)
    answered = requests.filter(
        (pl.col("status") != "error") & pl.col("tokens_in_asked").is_not_null()
    ).select(_COLUMNS)
    for (
        endpoint_id,
        suite,
        in_asked,
        out_asked,
        tokens_in,
        tokens_out,
        estimated,
    ) in answered.iter_rows():
        tally.add(endpoint_id, suite, (in_asked, out_asked), (tokens_in, tokens_out), estimated)
    return tally.rows(tuple(e.id for e in endpoints))


def lengths_table(rows: Sequence[LengthRow], endpoints: Sequence[EndpointInfo]) -> Table:
    labels = {e.id: e.label for e in endpoints}
    headers = [
        "endpoint",
        "suite",
        "requests",
        "in asked",
        "in received",
        "in gap",
        "out asked",
        "out received",
        "out gap",
        "out exact",
        "out short",
        "ignore_eos",
    ]
    body = [
        [
            labels.get(r.endpoint_id, r.endpoint_id),
            r.suite,
            str(r.requests) if r.counted == r.requests else f"{r.requests} ({r.counted} counted)",
            number_cell(r.in_asked_mean, ".1f"),
            number_cell(r.in_received_mean, ".1f"),
            number_cell(r.in_gap_mean, "+.1f"),
            number_cell(r.out_asked_mean, ".1f"),
            number_cell(r.out_received_mean, ".1f"),
            number_cell(r.out_gap_mean, "+.1f"),
            str(r.out_exact),
            str(r.out_short),
            "refused" if r.refused is not None else "",
        ]
        for r in rows
    ]
    return LENGTHS_TITLE, headers, body

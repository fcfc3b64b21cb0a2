"""The report's errors table, from a snapshot's requests: per endpoint and error kind, how many
and the first message the server sent (``core.figures.errors``)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from nvfp4_tui.core.events import EndpointInfo
from nvfp4_tui.core.figures.errors import ErrorRow, ErrorTally
from nvfp4_tui.output.tables import Table

ERRORS_TITLE = "Errors: per endpoint and kind, with the first message the server sent"


def error_rows(requests: pl.DataFrame, endpoints: Sequence[EndpointInfo]) -> list[ErrorRow]:
    """Every failed request counted, in the order they were sent."""
    failed = (
        requests.filter(pl.col("status") == "error")
        .sort("t", maintain_order=True)
        .select("endpoint_id", "error_kind", "error_message")
    )
    tally = ErrorTally()
    for endpoint_id, kind, message in failed.iter_rows():
        tally.add(endpoint_id, kind, message)
    return tally.rows(tuple(e.id for e in endpoints))


def error_table(rows: Sequence[ErrorRow], endpoints: Sequence[EndpointInfo]) -> Table:
    labels = {e.id: e.label for e in endpoints}
    body = [
        [labels.get(r.endpoint_id, r.endpoint_id), r.error_kind, str(r.count), r.first_message]
        for r in rows
    ]
    return ERRORS_TITLE, ["endpoint", "kind", "count", "first message"], body

"""The report's schedule-fidelity table, from a snapshot's requests and phases: per endpoint and
open-loop phase, how late its sends left (``core.figures.schedule``)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from nvfp4_tui.core.events import EndpointInfo, Event, PhaseFinished
from nvfp4_tui.core.figures.schedule import ScheduleRow, schedule_rows
from nvfp4_tui.core.slo import LATE_AFTER_S
from nvfp4_tui.output.tables import Table, ms_cell

SCHEDULE_TITLE = (
    "Schedule fidelity: how late each open-loop send (a trace's, or drawn arrivals') left "
    f"against its planned time; late: over {LATE_AFTER_S * 1000:g} ms"
)


def open_loop_rows(
    requests: pl.DataFrame, events: Sequence[Event], endpoints: Sequence[EndpointInfo]
) -> list[ScheduleRow]:
    """None when the run had no open-loop phase."""
    if "late_s" not in requests.columns:
        return []
    sends = requests.filter(pl.col("late_s").is_not_null()).select(
        "endpoint_id", "suite", "phase_index", "late_s"
    )
    unsent = {
        (e.endpoint_id, e.phase_index): e.unsent_requests
        for e in events
        if isinstance(e, PhaseFinished)
    }
    return schedule_rows(sends.iter_rows(), unsent, tuple(e.id for e in endpoints))


def schedule_table(rows: Sequence[ScheduleRow], endpoints: Sequence[EndpointInfo]) -> Table:
    labels = {e.id: e.label for e in endpoints}
    headers = ["endpoint", "suite", "phase", "sent", "late", "p50 ms", "p99 ms", "max ms", "unsent"]
    body = [
        [
            labels.get(r.endpoint_id, r.endpoint_id),
            r.suite,
            str(r.phase_index),
            str(r.sent),
            str(r.late),
            ms_cell(r.late_p50_s),
            ms_cell(r.late_p99_s),
            ms_cell(r.late_max_s),
            str(r.unsent),
        ]
        for r in rows
    ]
    return SCHEDULE_TITLE, headers, body

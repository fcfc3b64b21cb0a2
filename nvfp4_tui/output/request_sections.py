"""The report's tables that one figure of ``core.figures`` makes from the requests and the run's
events: the rows (each with its ``json()`` for ``report --format json``) and the table that
formats them, in the order the report shows them. Adding such a table is its module (rows and
table) and one line in ``SECTIONS``: the text and Markdown report and the JSON read this list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import polars as pl

from nvfp4_tui.core.events import EndpointInfo, Event
from nvfp4_tui.core.figures.context import LadderRow, RungCapacity, run_configs, rung_capacities
from nvfp4_tui.output.context_table import (
    capacity_table,
    context_rows,
    depths_table,
    ladder_table,
)
from nvfp4_tui.output.error_table import error_rows, error_table
from nvfp4_tui.output.lengths_table import length_rows, lengths_table
from nvfp4_tui.output.schedule_table import open_loop_rows, schedule_table
from nvfp4_tui.output.slices_table import slices_table, time_slice_rows
from nvfp4_tui.output.tables import Table
from nvfp4_tui.output.turns_table import session_turn_rows, turns_table


class JsonRow(Protocol):
    def json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class SectionInput:
    requests: pl.DataFrame
    events: Sequence[Event]
    endpoints: Sequence[EndpointInfo]
    slice_s: float | None = None  # time slices asked for (report --slice, [run] slice_s)
    server: pl.DataFrame | None = None  # the server's /metrics polls


TableOf = Callable[[Any, Sequence[EndpointInfo]], Table]


@dataclass(frozen=True)
class RequestSection:
    rows: Callable[[SectionInput], Sequence[JsonRow]]  # none: the table is left out
    table: TableOf
    also: tuple[TableOf, ...] = ()  # more tables of the same rows (their JSON is the rows')


def _context_rows(given: SectionInput) -> list[LadderRow]:
    return context_rows(given.requests, given.events, given.server, given.endpoints)


def _rung_capacities(given: SectionInput) -> list[RungCapacity]:
    """Those the server's polls tell (none polled: the server view says it served no metrics)."""
    rows = rung_capacities(_context_rows(given), run_configs(given.events))
    return [row for row in rows if row.fits is not None]


SECTIONS: tuple[RequestSection, ...] = (
    RequestSection(lambda s: error_rows(s.requests, s.endpoints), error_table),
    RequestSection(lambda s: length_rows(s.requests, s.events, s.endpoints), lengths_table),
    RequestSection(lambda s: open_loop_rows(s.requests, s.events, s.endpoints), schedule_table),
    RequestSection(lambda s: session_turn_rows(s.requests, s.endpoints), turns_table),
    RequestSection(time_slice_rows, slices_table),
    RequestSection(_context_rows, ladder_table, also=(depths_table,)),
    RequestSection(_rung_capacities, capacity_table),
)


def section_tables(given: SectionInput, leave_out: tuple[TableOf, ...] = ()) -> list[Table]:
    """Every section's tables that have rows, but those made by ``leave_out``."""
    tables = []
    for section in SECTIONS:
        if section.table in leave_out:
            continue
        if rows := section.rows(given):
            made = (table(rows, given.endpoints) for table in (section.table, *section.also))
            tables += [table for table in made if table[2]]  # none with a header alone
    return tables


def section_json(given: SectionInput) -> list[dict[str, Any]]:
    return [row.json() for section in SECTIONS for row in section.rows(given)]

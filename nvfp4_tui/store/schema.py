"""Snapshot table schemas, derived from the event dataclasses, and conversions both ways.

Three tables hold one event type per row, with one column per dataclass field: ``requests``
(RequestFinished), ``gpu`` (GpuSample), ``server`` (ServerSample). The ``events`` table holds the
remaining persisted events (RunStarted, PhaseStarted, PhaseFinished, ProbeFinished,
EndpointStatus, RunFinished) as their JSON codec text, so a replay rebuilds them exactly. TokenProgress and ClientHealth are never
persisted. Every table starts with ``ts``, a UTC ``Datetime`` for other tools, and keeps the
event's ``t`` (Unix seconds, Float64) beside it so events round-trip bit for bit.
"""

from __future__ import annotations

import types
import typing
from dataclasses import MISSING, fields
from typing import Any, Literal

import polars as pl

from nvfp4_tui.core import events
from nvfp4_tui.core.events import (
    ClientHealth,
    EndpointStatus,
    Event,
    GpuSample,
    PhaseFinished,
    PhaseStarted,
    ProbeFinished,
    RequestFinished,
    RunFinished,
    RunStarted,
    ServerSample,
    TokenProgress,
)

TS_DTYPE = pl.Datetime("us", "UTC")

ROW_TABLES: dict[str, type] = {
    "requests": RequestFinished,
    "gpu": GpuSample,
    "server": ServerSample,
}
EVENTS_TABLE = "events"
# Order of the tables on disk, and the tie-break when events of several tables share a ``t``.
TABLES: tuple[str, ...] = (EVENTS_TABLE, "requests", "gpu", "server")
JSON_EVENT_TYPES: tuple[type, ...] = (
    RunStarted,
    PhaseStarted,
    PhaseFinished,
    ProbeFinished,
    EndpointStatus,
    RunFinished,
)

_SCALAR_DTYPES: dict[type, pl.DataType] = {
    str: pl.String(),
    int: pl.Int64(),
    float: pl.Float64(),
    bool: pl.Boolean(),
}


def dtype_for(annotation: Any) -> pl.DataType:
    """The polars dtype of one event field's annotation; ``X | None`` is a nullable ``X``."""
    if annotation in _SCALAR_DTYPES:
        return _SCALAR_DTYPES[annotation]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal and all(isinstance(a, str) for a in args):
        return pl.String()
    if origin in (typing.Union, types.UnionType):
        present = [a for a in args if a is not type(None)]
        if len(present) == 1:
            return dtype_for(present[0])
    raise TypeError(f"no snapshot column type for annotation {annotation!r}")


def _row_schema(cls: type) -> pl.Schema:
    hints = typing.get_type_hints(cls)
    columns: dict[str, pl.DataType] = {"ts": TS_DTYPE}
    for f in fields(cls):
        columns[f.name] = dtype_for(hints[f.name])
    return pl.Schema(columns)


SCHEMAS: dict[str, pl.Schema] = {name: _row_schema(cls) for name, cls in ROW_TABLES.items()}
SCHEMAS[EVENTS_TABLE] = pl.Schema(
    {"ts": TS_DTYPE, "t": pl.Float64(), "type": pl.String(), "json": pl.String()}
)

_TABLE_OF_TYPE: dict[type, str] = {cls: name for name, cls in ROW_TABLES.items()}
_TABLE_OF_TYPE.update({cls: EVENTS_TABLE for cls in JSON_EVENT_TYPES})


def table_for(event: Event) -> str | None:
    """The table that persists ``event``, or None for events that are never persisted."""
    if isinstance(event, (TokenProgress, ClientHealth)):
        return None
    try:
        return _TABLE_OF_TYPE[type(event)]
    except KeyError:
        raise TypeError(f"no snapshot table for {type(event).__name__}") from None


def _with_ts(frame: pl.DataFrame) -> pl.DataFrame:
    # A non-finite ``t`` has no instant: its ``ts`` is null while ``t`` keeps the value.
    ts = (pl.col("t") * 1e6).round().cast(pl.Int64, strict=False).cast(TS_DTYPE)
    return frame.with_columns(ts=ts)


def events_to_frame(table: str, batch: list[Event]) -> pl.DataFrame:
    """One table's frame (schema ``SCHEMAS[table]``) from events that all belong to it."""
    schema = SCHEMAS[table]
    if table == EVENTS_TABLE:
        columns: dict[str, list[Any]] = {
            "t": [e.t for e in batch],
            "type": [type(e).__name__ for e in batch],
            "json": [events.encode(e)[:-1].decode() for e in batch],
        }
    else:
        names = [f.name for f in fields(ROW_TABLES[table])]
        columns = {name: [getattr(e, name) for e in batch] for name in names}
    body_schema = {name: dtype for name, dtype in schema.items() if name != "ts"}
    frame = pl.DataFrame(columns, schema=body_schema)
    return _with_ts(frame).select(schema.names())


def _column_defaults(table: str) -> dict[str, Any]:
    if table not in ROW_TABLES:
        return {}
    return {f.name: f.default for f in fields(ROW_TABLES[table]) if f.default is not MISSING}


# Columns an older snapshot may lack, and the value each takes there (its field's default).
COLUMN_DEFAULTS: dict[str, dict[str, Any]] = {name: _column_defaults(name) for name in TABLES}
OPTIONAL_COLUMNS: dict[str, frozenset[str]] = {
    name: frozenset(defaults) for name, defaults in COLUMN_DEFAULTS.items()
}


def upgrade_frame(table: str, frame: pl.DataFrame) -> pl.DataFrame:
    """A frame written before optional columns were added, with those columns at their defaults.

    Fields added to an event later (with a default: None, or e.g. ``attempt = 0``) must not make
    older snapshots unreadable; anything else missing is still a schema problem.

    Columns a snapshot has beyond the schema are left for the readers' ``select`` to drop. The
    ``server`` table's ``ttft_p50_s`` and the like, from before the bucket ranges, are dropped
    that way: each was a point interpolated inside a bucket whose edges it does not record, so
    it cannot become a range, and keeping it would show a guess as a measurement again.
    """
    defaults = COLUMN_DEFAULTS[table]
    missing = [
        pl.lit(defaults[name], dtype).alias(name)
        for name, dtype in SCHEMAS[table].items()
        if name not in frame.schema and name in defaults
    ]
    return frame.with_columns(missing) if missing else frame


def schema_problem(table: str, frame: pl.DataFrame) -> str | None:
    """Why ``frame`` cannot be read as ``table`` (a missing or mistyped column), else None."""
    found = frame.schema
    for name, dtype in SCHEMAS[table].items():
        if name not in found:
            return f"missing column {name!r}"
        if found[name] != dtype:
            return f"column {name!r} is {found[name]}, expected {dtype}"
    return None


def row_to_event(table: str, row: dict[str, Any]) -> Event:
    """Rebuild the event stored as ``row`` (a dict of column values) of ``table``."""
    if table == EVENTS_TABLE:
        return events.decode(row["json"])
    cls = ROW_TABLES[table]
    return cls(**{f.name: row[f.name] for f in fields(cls)})


def frame_to_events(table: str, frame: pl.DataFrame) -> list[Event]:
    """Every row of ``frame`` (a ``table`` frame) as its event, in row order."""
    if table == EVENTS_TABLE:
        return [events.decode(text) for text in frame.get_column("json")]
    cls = ROW_TABLES[table]
    # Only the event's own columns: ``ts`` may hold instants Python's datetime cannot.
    names = [f.name for f in fields(cls)]
    return [cls(*values) for values in frame.select(names).iter_rows()]


def empty_frame(table: str) -> pl.DataFrame:
    return pl.DataFrame(schema=SCHEMAS[table])

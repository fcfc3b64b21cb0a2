"""Snapshot reading: a whole snapshot (``open_snapshot``) or the parts that appeared since (tail).

Both layouts are read: a table's compacted ``<table>.parquet`` and its ``<table>/part-*.parquet``.
When both exist (a crash or a read in the middle of compaction), the compacted file wins and the
parts are ignored: the writer writes it from every part, atomically, before deleting any part. A
compacted file that cannot be read falls back to the parts. A journal whose part was never
written (its writer died between two flushes) is read in that part's place; a follower reads
journals only once the writer is gone. A file that cannot be read (truncated, empty, wrong
columns, not a regular file) is skipped with a one-line warning naming it; dot-named temporary
files are never read.

A snapshot whose manifest still says ``running`` may be a run in progress or one whose writer
died (SIGKILL, a crash, a power cut). ``writer_gone`` tells them apart: the writer's pid, recorded
in the manifest, is no longer alive on this host; or, where that cannot be checked (another host,
an older snapshot), nothing in it changed for ``WRITER_SILENT_S``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from pathlib import Path
from typing import IO, Any

import polars as pl

from nvfp4_tui.core.events import Event, RunStarted, decode
from nvfp4_tui.core.slo import LoadTracker
from nvfp4_tui.store.decoded_size import decoded_problem
from nvfp4_tui.store.manifest import (
    SnapshotError,
    check_run_id,
    error_text,
    new_run_id,
    read_manifest,
)
from nvfp4_tui.store.outside_files import UnsafeFile, open_regular, read_bounded
from nvfp4_tui.store.schema import (
    EVENTS_TABLE,
    ROW_TABLES,
    SCHEMAS,
    TABLES,
    empty_frame,
    frame_to_events,
    schema_problem,
    table_for,
    upgrade_frame,
)
from nvfp4_tui.store.writer import (
    compacted_name,
    fitting_frame,
    journal_part_name,
    list_parts,
    parts_and_journals,
)

__all__ = [
    "Snapshot",
    "SnapshotError",
    "SnapshotTail",
    "check_run_id",
    "new_run_id",
    "open_snapshot",
    "sorted_rows",
]

_PROBLEM_MAX_CHARS = 160
# A writer flushes at least every second while anything happens; this much silence means it died.
WRITER_SILENT_S = 300.0
# A retry follows a part that compaction removed; after it the compacted file is in place.
_TABLE_READ_ATTEMPTS = 3
# What decoding an event's JSON raises when it is not one (RecursionError: nested too deeply).
_NOT_AN_EVENT = (ValueError, TypeError, KeyError, RecursionError)
# A journal holds one part's events (``writer.PART_MAX_BYTES``), or one larger event.
JOURNAL_MAX_BYTES = 1024 * 1024 * 1024


class _Vanished(Exception):
    """A part listed a moment ago is gone: compaction removed it."""


def _read_file(path: Path, table: str) -> pl.DataFrame | str:
    """The file's rows in the table's schema, or why it cannot be read; _Vanished if it is gone.

    Only a regular file is read: a FIFO or a device in its place would never end.
    """
    try:
        with open_regular(path) as file:
            size = os.fstat(file.fileno()).st_size
            if size == 0:
                return "empty file (0 bytes)"
            too_big = decoded_problem(file, size)
            if too_big is not None:
                return too_big
            frame = pl.read_parquet(file)
    except FileNotFoundError:
        raise _Vanished(str(path)) from None
    except UnsafeFile as exc:
        return str(exc)
    # A corrupt page can make polars panic; PanicException is not an Exception subclass.
    except (Exception, pl.exceptions.PanicException) as exc:
        text = error_text(exc)
        if len(text) > _PROBLEM_MAX_CHARS:
            text = text[: _PROBLEM_MAX_CHARS - 1] + "…"
        return f"not readable as Parquet ({text})"
    frame = upgrade_frame(table, frame)
    problem = schema_problem(table, frame)
    if problem is not None:
        return f"wrong schema for table {table!r}: {problem}"
    return frame.select(SCHEMAS[table].names())


def _skipped(path: Path, problem: str) -> str:
    return f"skipped {path}: {problem}"


def _read_table_once(directory: Path, table: str, warnings: list[str]) -> pl.DataFrame:
    # Parts are listed before the compacted file is looked for: the writer deletes parts only
    # after the compacted file exists, so when it is absent here the listing was complete.
    parts, journals = parts_and_journals(directory / table)
    compacted = directory / compacted_name(table)
    if compacted.exists():
        result = _read_file(compacted, table)
        if isinstance(result, pl.DataFrame):
            return result
        warnings.append(_skipped(compacted, f"{result}; reading its parts instead"))
    frames = [_read_parts(parts, table, warnings)]
    frames.extend(_read_journal(journal, table, warnings) for journal in journals)
    return pl.concat(frames)


def _read_parts(parts: list[Path], table: str, warnings: list[str]) -> pl.DataFrame:
    together = _read_all_at_once(parts, table)
    if together is not None:
        return together
    frames: list[pl.DataFrame] = []
    for part in parts:
        result = _read_file(part, table)
        if isinstance(result, pl.DataFrame):
            frames.append(result)
        else:
            warnings.append(_skipped(part, result))
    return pl.concat(frames) if frames else empty_frame(table)


def _read_journal(path: Path, table: str, warnings: list[str]) -> pl.DataFrame:
    """The rows of a journal whose part was never written (its writer died first).

    A last line without its newline is an event the writer was still appending when it died:
    never recorded, so dropped without a word. Any other line that is not one of the table's
    events is skipped with a warning naming the file and line. _Vanished if the journal is gone
    (its part was written meanwhile).
    """
    try:
        data = read_bounded(path, JOURNAL_MAX_BYTES)
    except FileNotFoundError:
        raise _Vanished(str(path)) from None
    except OSError as exc:
        warnings.append(_skipped(path, error_text(exc)))
        return empty_frame(table)
    lines = data.split(b"\n")[:-1]
    events: list[Event] = []
    for number, line in enumerate(lines, start=1):
        try:
            event = decode(line)
            belongs = table_for(event) == table
        except _NOT_AN_EVENT as exc:
            problem = f"not an event ({error_text(exc)[:_PROBLEM_MAX_CHARS]})"
            warnings.append(f"skipped {path} line {number}: {problem}")
            continue
        if not belongs:
            warnings.append(f"skipped {path} line {number}: a {type(event).__name__}, not a row")
            continue
        events.append(event)
    _, frame, rejected = fitting_frame(table, events)
    if rejected is not None:
        warnings.append(_skipped(path, str(rejected)))
    return frame


def _read_all_at_once(parts: list[Path], table: str) -> pl.DataFrame | None:
    """All parts in one read, several times faster than one by one; None if any part is bad.

    Polars refuses files whose columns differ, so a None sends the caller to read each part
    alone, to find and name the bad ones.
    """
    if not parts:
        return None
    with contextlib.ExitStack() as opened:
        try:
            files: list[IO[bytes]] = [opened.enter_context(open_regular(p)) for p in parts]
            sizes = [os.fstat(file.fileno()).st_size for file in files]
            if 0 in sizes or any(map(decoded_problem, files, sizes)):
                return None
            frame = pl.read_parquet(files)
        except FileNotFoundError:
            raise _Vanished(str(parts[0].parent)) from None
        except (Exception, pl.exceptions.PanicException):
            return None
    frame = upgrade_frame(table, frame)
    if schema_problem(table, frame) is not None:
        return None
    return frame.select(SCHEMAS[table].names())


def _read_table(directory: Path, table: str) -> tuple[pl.DataFrame, list[str]]:
    """The table and the warnings about files skipped, read again if compaction moved it."""
    vanished = ""
    for _ in range(_TABLE_READ_ATTEMPTS):
        warnings: list[str] = []
        try:
            return _read_table_once(directory, table, warnings), warnings
        except _Vanished as exc:
            vanished = str(exc)
    raise SnapshotError(f"{vanished}: removed while reading; the snapshot is changing")


def _pid_alive(pid: int) -> bool | None:
    """Whether process ``pid`` runs on this host (a zombie does not); None if it cannot be told."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OSError:
        return None
    try:
        # Field 3 of /proc/PID/stat, after the parenthesised name, is the state; Z is a zombie.
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _newest_change(directory: Path) -> float:
    """The newest modification time of the manifest and every table file or part."""
    newest = 0.0
    paths = [directory, *directory.iterdir()]
    for table in TABLES:
        if (directory / table).is_dir():
            paths.extend((directory / table).iterdir())
    for path in paths:
        try:
            newest = max(newest, path.stat().st_mtime)
        except OSError:
            continue
    return newest


def writer_gone(directory: Path, manifest: dict[str, Any]) -> bool:
    """A ``running`` snapshot whose writer is dead: it will never be finished."""
    if manifest.get("status") != "running":
        return False
    writer = manifest.get("writer")
    if isinstance(writer, dict) and writer.get("host") == socket.gethostname():
        pid = writer.get("pid")
        if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
            alive = _pid_alive(pid)
            if alive is not None:
                return not alive
    try:
        return time.time() - _newest_change(directory) > WRITER_SILENT_S
    except OSError:
        return False


def _decoded(directory: Path, table: str, frame: pl.DataFrame, warnings: list[str]) -> list[Event]:
    """The frame's events; an ``events`` row whose JSON is not an event is skipped, named."""
    try:
        return frame_to_events(table, frame)
    except _NOT_AN_EVENT:
        if table != EVENTS_TABLE:
            raise
    events: list[Event] = []
    for index, text in enumerate(frame.get_column("json")):
        try:
            events.append(decode(text))
        except _NOT_AN_EVENT as exc:
            problem = error_text(exc)[:_PROBLEM_MAX_CHARS]
            warnings.append(f"skipped {directory / table} row {index}: not an event ({problem})")
    return events


def _sorted_by_t(batches: list[list[Event]]) -> list[Event]:
    """Events of all tables by ``t``; ties keep table order, then row order (sort is stable)."""
    merged = [event for batch in batches for event in batch]
    merged.sort(key=lambda event: event.t)
    return merged


class Snapshot:
    """One snapshot as it was when opened; reopen it to see what a live writer added since.

    Opening reads the tables as frames and decodes only the ``events`` table (a few rows per
    phase); request and sample rows become events only when ``events`` or ``report_events``
    asks for them, so a report or a replay of ten million GPU samples builds none of them.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.manifest: dict[str, Any] = read_manifest(self.path)
        self.warnings: list[str] = []
        self._frames: dict[str, pl.DataFrame] = {}
        for table in TABLES:
            frame, warnings = _read_table(self.path, table)
            self._frames[table] = frame
            self.warnings.extend(warnings)
        self._run_events = _decoded(
            self.path, EVENTS_TABLE, self._frames[EVENTS_TABLE], self.warnings
        )
        self._report_events: list[Event] | None = None
        self._writer_gone = writer_gone(self.path, self.manifest)

    @property
    def run_id(self) -> str:
        return str(self.manifest["run_id"])

    @property
    def status(self) -> str:
        """``running`` (still being written, or its writer died), ``complete`` or ``aborted``."""
        return str(self.manifest["status"])

    @property
    def writer_gone(self) -> bool:
        """The manifest says ``running`` but its writer died: the run ended aborted."""
        return self._writer_gone

    @property
    def status_label(self) -> str:
        """The status as people should read it: ``aborted (writer gone)`` for a dead writer's."""
        return "aborted (writer gone)" if self._writer_gone else self.status

    @property
    def event_count(self) -> int:
        """How many events ``events()`` returns, without building them."""
        rows = sum(self._frames[table].height for table in ROW_TABLES)
        return len(self._run_events) + rows

    def table(self, name: str) -> pl.DataFrame:
        """One table (``requests``, ``gpu``, ``server`` or ``events``) in its documented schema."""
        if name not in self._frames:
            raise KeyError(f"no snapshot table {name!r}; expected one of {list(TABLES)}")
        return self._frames[name]

    def requests(self) -> pl.DataFrame:
        return self._frames["requests"]

    def gpu(self) -> pl.DataFrame:
        return self._frames["gpu"]

    def server(self) -> pl.DataFrame:
        return self._frames["server"]

    def run_events(self) -> list[Event]:
        """The ``events`` table's events (run, phases, endpoint status) in row order; its rows
        that are not events are skipped and named in ``warnings``."""
        return list(self._run_events)

    def events(self) -> list[Event]:
        """Every persisted event sorted by ``t``; at equal ``t``: events, requests, gpu, server.

        A RequestFinished's ``t`` is when its request was sent, so it sorts by send time. This
        builds every row of the snapshot as an event: readers of a long run's telemetry read the
        ``gpu`` and ``server`` frames instead.
        """
        return _in_order([self._table_events(table) for table in TABLES])

    def report_events(self) -> list[Event]:
        """The events a report reads, sorted as ``events()`` sorts them: the ``events`` table's,
        and the requests of the endpoints whose capacity at SLO it computes (planned with SLO
        targets or a sweep, as ``slo.capacity_points`` has it). The report reads every other
        request from the requests frame and the telemetry from the ``gpu`` frame, so a run of a
        million requests and ten million samples needs none of them as events. The list is
        kept: asking again costs a copy."""
        if self._report_events is None:
            tracked = _capacity_endpoints(self._run_events)
            requests = self._frames["requests"].filter(pl.col("endpoint_id").is_in(tracked))
            decoded = [self._table_events(EVENTS_TABLE), self._table_events("requests", requests)]
            self._report_events = _in_order(decoded)
        return list(self._report_events)

    def _table_events(
        self, table: str, frame: pl.DataFrame | None = None
    ) -> tuple[pl.Series, list[Event]]:
        """The ``t`` column and the events of one table (or of ``frame``, some of its rows)."""
        if table == EVENTS_TABLE:
            t = pl.Series("t", [event.t for event in self._run_events], dtype=pl.Float64)
            return t, self._run_events
        frame = self._frames[table] if frame is None else frame
        return frame.get_column("t"), frame_to_events(table, frame)


def _capacity_endpoints(events: list[Event]) -> list[str]:
    """The endpoints some RunStarted plans with SLO targets or a sweep."""
    tracked: dict[str, None] = {}
    for event in events:
        if isinstance(event, RunStarted):
            for info in event.endpoints:
                tracker = LoadTracker(p for p in event.phases if p.endpoint_id == info.id)
                if tracker.has_slo or tracker.sweep:
                    tracked[info.id] = None
    return list(tracked)


def sorted_rows(keys: list[pl.DataFrame]) -> pl.DataFrame:
    """Where each row of several tables goes in one order: columns ``table`` (the position of
    its frame in ``keys``), ``row`` and ``key``, sorted by ``key`` then ``t``; equal rows keep
    table order, then row order.

    Each frame of ``keys`` has a Float64 ``key`` and ``t`` per row of its table. Polars sorts
    ten million rows in about a second, where Python's sort of as many events takes much longer.
    """
    parts = [
        frame.select(
            pl.col("key").cast(pl.Float64),
            pl.col("t").cast(pl.Float64),
            pl.lit(index, dtype=pl.UInt8).alias("table"),
            pl.int_range(pl.len(), dtype=pl.UInt32).alias("row"),
        )
        for index, frame in enumerate(keys)
    ]
    return pl.concat(parts).sort("key", "t", maintain_order=True).select("table", "row", "key")


def _in_order(decoded: list[tuple[pl.Series, list[Event]]]) -> list[Event]:
    """The events of several tables sorted by ``t``, ties in table order, then row order."""
    order = sorted_rows([pl.DataFrame({"key": t, "t": t}) for t, _ in decoded])
    lists = [events for _, events in decoded]
    tables = order.get_column("table").to_list()
    rows = order.get_column("row").to_list()
    return [lists[table][row] for table, row in zip(tables, rows, strict=True)]


def open_snapshot(path: Path) -> Snapshot:
    """Read the snapshot in ``path``; SnapshotError (one line naming the file) if it is not one."""
    return Snapshot(path)


class SnapshotTail:
    """Follows a snapshot another process is writing: each ``poll`` returns only new events."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.manifest: dict[str, Any] | None = None
        self.warnings: list[str] = []
        self._parts_seen: dict[str, set[str]] = {table: set() for table in TABLES}
        self._rows_seen = dict.fromkeys(TABLES, 0)
        self._compacted_done: set[str] = set()
        self._compacted_bad: set[str] = set()
        self._finished = False

    @property
    def finished(self) -> bool:
        """The writer closed the run and the last poll returned everything it wrote."""
        return self._finished

    def poll(self) -> list[Event]:
        """Events written since the last poll, sorted by ``t``; SnapshotError on a bad manifest."""
        # The writer marks the manifest complete only after its last write, so a closed status
        # read before the tables means this poll sees every row.
        manifest = read_manifest(self.path)
        batches = [self._poll_table(table) for table in TABLES]
        if manifest["status"] == "running" and writer_gone(self.path, manifest):
            # Its last rows are only in journals, and no flush will ever write them as parts.
            batches.extend(self._poll_journals(table) for table in TABLES)
        self.manifest = manifest
        self._finished = manifest["status"] != "running"
        return _sorted_by_t(batches)

    def _poll_journals(self, table: str) -> list[Event]:
        _, journals = parts_and_journals(self.path / table)
        fresh: list[Event] = []
        for journal in journals:
            part = journal_part_name(journal)
            if part in self._parts_seen[table]:
                continue
            try:
                frame = _read_journal(journal, table, self.warnings)
            except _Vanished:
                continue  # its part was written after all: the next poll reads it
            self._parts_seen[table].add(part)
            self._rows_seen[table] += frame.height
            fresh.extend(_decoded(self.path, table, frame, self.warnings))
        return fresh

    def _poll_table(self, table: str) -> list[Event]:
        if table in self._compacted_done:
            return []
        parts = list_parts(self.path / table)
        compacted = self.path / compacted_name(table)
        if table not in self._compacted_bad and compacted.exists():
            try:
                result = _read_file(compacted, table)
            except _Vanished:
                result = "removed while reading"
            if isinstance(result, pl.DataFrame):
                # Compaction concatenates the parts in order, so the rows already returned from
                # parts are exactly its first rows.
                self._compacted_done.add(table)
                fresh = result.slice(self._rows_seen[table])
                self._rows_seen[table] = result.height
                return _decoded(self.path, table, fresh, self.warnings)
            self._compacted_bad.add(table)
            self.warnings.append(_skipped(compacted, f"{result}; reading its parts instead"))
        unseen = [part for part in parts if part.name not in self._parts_seen[table]]
        try:
            together = _read_all_at_once(unseen, table)
        except _Vanished:
            together = None
        if together is not None:
            self._parts_seen[table].update(part.name for part in unseen)
            self._rows_seen[table] += together.height
            return _decoded(self.path, table, together, self.warnings)
        fresh_events: list[Event] = []
        for part in unseen:
            try:
                result = _read_file(part, table)
            except _Vanished:
                break
            self._parts_seen[table].add(part.name)
            if isinstance(result, pl.DataFrame):
                self._rows_seen[table] += result.height
                fresh_events.extend(_decoded(self.path, table, result, self.warnings))
            else:
                self.warnings.append(_skipped(part, result))
        return fresh_events

"""The snapshot writer: buffers events, writes Parquet parts atomically, compacts on close.

Layout under ``root/run_id``: ``manifest.json``; while running ``<table>/part-NNNNNN.parquet``,
each written to a dot-named ``.tmp`` beside it, fsynced, then renamed, so no half-written part ever
shows under a part name; after ``close`` one ``<table>.parquet`` per table. A failed write raises
SnapshotError and keeps the events it could not write for the next flush; nothing already on disk
is touched.

Every event is also appended, as one JSON line, to ``<table>/journal-NNNNNN.jsonl`` the moment it
is added, and that journal is deleted once part ``NNNNNN`` (the same events) is written. A process
killed between two flushes therefore loses nothing it had added: the kernel holds the journal's
lines. A flush can take long (large answers to encode, a slow disk, an event loop too busy to
start it on time), so the periodic flush alone could not promise that. A reader takes a journal
whose part does not exist in that part's place. A part holds at most ``PART_MAX_BYTES`` of
journal lines (one larger event makes a part of its own), so a backlog of large answers is
written as several parts, oldest first.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl

from nvfp4_tui.core.events import Event, encode
from nvfp4_tui.store.manifest import (
    SnapshotError,
    build_manifest,
    check_run_id,
    error_text,
    utc_now_iso,
    write_atomic,
    write_manifest,
)
from nvfp4_tui.store.schema import SCHEMAS, TABLES, empty_frame, events_to_frame, table_for

# Room for a long run's parts plus, at close, one compacted copy of them.
DEFAULT_MIN_FREE_MIB = 64
_MIB = 1024 * 1024
_PART = re.compile(r"^part-(\d{6,})\.parquet$")
_JOURNAL = re.compile(r"^journal-(\d{6,})\.jsonl$")
# Journal bytes (the events as JSON) one part holds at most: polars encodes and fsyncs 16 MiB of
# answers in about 0.2 s on a 2-core box, so one part is a small share of a flush.
PART_MAX_BYTES = 8 * _MIB


class PartWriteError(SnapshotError):
    """A part could not be written (disk full, directory unwritable); its events stay buffered."""


def part_name(index: int) -> str:
    return f"part-{index:06d}.parquet"


def journal_name(index: int) -> str:
    return f"journal-{index:06d}.jsonl"


def journal_part_name(journal: Path) -> str:
    """The name of the part that a journal's events become."""
    match = _JOURNAL.fullmatch(journal.name)
    if match is None:
        raise ValueError(f"not a journal: {journal}")
    return part_name(int(match.group(1)))


def _numbered(table_dir: Path, pattern: re.Pattern[str]) -> list[tuple[int, Path]]:
    try:
        names = [p.name for p in table_dir.iterdir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    numbered = [(int(m.group(1)), name) for name in names if (m := pattern.fullmatch(name))]
    return [(index, table_dir / name) for index, name in sorted(numbered)]


def list_parts(table_dir: Path) -> list[Path]:
    """The table's visible parts in write order; temporary and foreign files are not parts."""
    return [path for _, path in _numbered(table_dir, _PART)]


def parts_and_journals(table_dir: Path) -> tuple[list[Path], list[Path]]:
    """The table's parts, and the journals whose part is not written yet, each in write order.

    The journals are listed first: a part written between the two listings then hides its
    journal, where the other order could miss both.
    """
    journals = _numbered(table_dir, _JOURNAL)
    parts = list_parts(table_dir)
    written = {path.name for path in parts}
    return parts, [path for index, path in journals if part_name(index) not in written]


def compacted_name(table: str) -> str:
    return f"{table}.parquet"


def parquet_bytes(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    return buffer.getvalue()


def fitting_frame(
    table: str, batch: list[Event]
) -> tuple[list[Event], pl.DataFrame, SnapshotError | None]:
    """The events that fit the table's schema, their frame, and an error naming any others.

    A malformed event would fail every retry, so it is dropped rather than holding back the rest.
    """
    try:
        return batch, events_to_frame(table, batch), None
    except (TypeError, ValueError, pl.exceptions.PolarsError):
        pass
    fitting: list[Event] = []
    first_problem = ""
    for event in batch:
        try:
            events_to_frame(table, [event])
        except (TypeError, ValueError, pl.exceptions.PolarsError) as exc:
            first_problem = first_problem or f"{event!r:.120}: {error_text(exc):.200}"
            continue
        fitting.append(event)
    dropped = len(batch) - len(fitting)
    error = SnapshotError(f"dropped {dropped} {table} event(s) that do not fit: {first_problem}")
    return fitting, events_to_frame(table, fitting), error


def check_out_root(root: Path, min_free_mib: int = DEFAULT_MIN_FREE_MIB) -> None:
    """Raise SnapshotError (one line) unless snapshots can be written under ``root``.

    The launcher asks before it starts a simulator, a UI or a worker, so that a bad ``--out`` is
    refused as bad input, before the run starts; ``SnapshotWriter.open`` checks its own
    directory again.
    """
    try:
        root.mkdir(parents=True, exist_ok=True)
        _probe_write(root)
    except OSError as exc:
        raise SnapshotError(f"cannot write snapshots to {root}: {error_text(exc)}") from exc
    _check_free_space(root, min_free_mib)


def _probe_write(directory: Path) -> None:
    probe = directory / f".write-probe-{os.getpid()}.tmp"
    try:
        with open(probe, "wb") as out:
            out.write(b"probe")
            os.fsync(out.fileno())
    finally:
        probe.unlink(missing_ok=True)


def _check_free_space(directory: Path, min_free_mib: int) -> None:
    free_mib = shutil.disk_usage(directory).free // _MIB
    if free_mib < min_free_mib:
        raise SnapshotError(
            f"cannot write snapshot to {directory}: {free_mib} MiB free, "
            f"need at least {min_free_mib} MiB"
        )


@dataclass
class _Segment:
    """The events that become one part, and the journal that keeps them until then."""

    table: str
    index: int  # of the part, and of the journal
    journal: Path
    events: list[Event] = field(default_factory=list)
    journal_bytes: int = 0
    fd: int | None = None  # the journal, open for appending until the segment is sealed

    def close_journal(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


class SnapshotWriter:
    """Writes one run's snapshot; ``add`` is safe to call while a flush runs."""

    def __init__(
        self,
        root: Path,
        run_id: str,
        manifest: dict[str, Any],
        *,
        min_free_mib: int = DEFAULT_MIN_FREE_MIB,
    ) -> None:
        self.path = Path(root) / check_run_id(run_id)
        self.run_id = run_id
        self.manifest = build_manifest(manifest, run_id)
        json.dumps(self.manifest)  # a TypeError now, not a half-created snapshot in open()
        self.min_free_mib = min_free_mib
        # Each table's segment being added to; then the sealed ones, oldest first.
        self._open: dict[str, _Segment] = {}
        self._sealed: list[_Segment] = []
        self._buffers_lock = threading.Lock()  # add() on the loop, flush() in a worker thread
        self._flush_lock = threading.Lock()  # one flush or close at a time
        self._writing = 0  # events taken from the buffers by the flush in progress
        self._next_part = dict.fromkeys(TABLES, 0)
        self._journal_failure: SnapshotError | None = None  # for the next flush to raise
        self._journal_off = False  # after a failed journal write: parts only, from then on
        self._opened = False
        self._closing = False

    def open(self) -> None:
        """Create the snapshot directory and its ``running`` manifest.

        Raises SnapshotError before anything is recorded when the directory cannot be written,
        already holds files, or has less than ``min_free_mib`` free.
        """
        if self._opened:
            raise RuntimeError(f"snapshot writer for {self.path} is already open")
        existed = self.path.exists()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            if any(self.path.iterdir()):
                raise SnapshotError(f"cannot write snapshot to {self.path}: directory is not empty")
            _probe_write(self.path)
            _check_free_space(self.path, self.min_free_mib)
            for table in TABLES:
                (self.path / table).mkdir()
            write_manifest(self.path, self.manifest)
        except OSError as exc:
            self._remove_if_unused(existed)
            raise SnapshotError(f"cannot write snapshot to {self.path}: {error_text(exc)}") from exc
        except SnapshotError:
            self._remove_if_unused(existed)
            raise
        self._opened = True

    def _remove_if_unused(self, existed: bool) -> None:
        if existed or not self.path.is_dir():
            return
        for table in TABLES:
            with contextlib.suppress(OSError):
                (self.path / table).rmdir()
        with contextlib.suppress(OSError):
            self.path.rmdir()

    def add(self, event: Event) -> None:
        """Buffer ``event`` in its table and append it to the table's journal (TokenProgress is
        not persisted and is dropped)."""
        if not self._opened or self._closing:
            raise RuntimeError(f"snapshot writer for {self.path} is not open")
        table = table_for(event)
        if table is None:
            return
        try:
            line: bytes | None = encode(event)
        except (TypeError, ValueError):
            line = None  # its part write names what does not fit
        with self._buffers_lock:
            segment = self._segment_for(table, len(line) if line else 0)
            segment.events.append(event)
            if line is not None and not self._journal_off:
                self._append(segment, line)

    def _segment_for(self, table: str, size: int) -> _Segment:
        segment = self._open.get(table)
        if segment is not None and segment.journal_bytes + size > PART_MAX_BYTES:
            self._seal(segment)
            segment = None
        if segment is None:
            index = self._next_part[table]
            self._next_part[table] += 1
            segment = _Segment(table, index, self.path / table / journal_name(index))
            self._open[table] = segment
        return segment

    def _seal(self, segment: _Segment) -> None:
        segment.close_journal()
        del self._open[segment.table]
        self._sealed.append(segment)

    def _append(self, segment: _Segment, line: bytes) -> None:
        """Append ``line`` to the segment's journal; on failure, stop journaling and say so."""
        try:
            if segment.fd is None:
                flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
                segment.fd = os.open(segment.journal, flags, 0o644)
            view = memoryview(line)
            while view:
                view = view[os.write(segment.fd, view) :]
        except OSError as exc:
            segment.close_journal()
            self._journal_off = True
            self._journal_failure = SnapshotError(
                f"cannot write {segment.journal}: {error_text(exc)}; "
                "from now on rows are kept only once flushed"
            )
            return
        segment.journal_bytes += len(line)

    @property
    def buffered_events(self) -> int:
        """Events added but not yet written to a part."""
        with self._buffers_lock:
            segments = [*self._open.values(), *self._sealed]
            return self._writing + sum(len(segment.events) for segment in segments)

    def flush(self) -> None:
        """Write every segment buffered so far as its table's next part, oldest first.

        Raises SnapshotError naming the first part that failed; its events, and the later ones
        of its table, stay buffered (and journaled) for the next flush.
        """
        if not self._opened:
            raise RuntimeError(f"snapshot writer for {self.path} is not open")
        with self._flush_lock:
            self._flush_locked()
            with self._buffers_lock:
                journal_failure, self._journal_failure = self._journal_failure, None
        if journal_failure is not None:  # close() drops it: its parts are all written
            raise journal_failure

    def _flush_locked(self) -> None:
        with self._buffers_lock:
            for segment in list(self._open.values()):
                self._seal(segment)
            pending, self._sealed = self._sealed, []
            self._writing = sum(len(segment.events) for segment in pending)
        failures: list[SnapshotError] = []
        held: list[_Segment] = []  # a table's parts are written in order: after a failure, none
        for segment in pending:
            if any(earlier.table == segment.table for earlier in held):
                held.append(segment)
                continue
            fitting, frame, rejected = fitting_frame(segment.table, segment.events)
            if rejected is not None:
                failures.append(rejected)
                with self._buffers_lock:
                    self._writing -= len(segment.events) - len(fitting)
                segment.events = fitting
            path = self.path / segment.table / part_name(segment.index)
            try:
                if fitting:
                    write_atomic(path, parquet_bytes(frame))
            except OSError as exc:
                failures.append(PartWriteError(f"cannot write {path}: {error_text(exc)}"))
                held.append(segment)
                continue
            # Once the part is in place a reader skips this journal, so a failure here is moot.
            with contextlib.suppress(OSError):
                segment.journal.unlink(missing_ok=True)
            with self._buffers_lock:
                self._writing -= len(fitting)
        with self._buffers_lock:
            self._sealed[:0] = held
            self._writing -= sum(len(segment.events) for segment in held)
        if failures:
            raise next((f for f in failures if isinstance(f, PartWriteError)), failures[0])

    async def flush_periodically(
        self,
        interval_s: float = 0.5,
        on_error: Callable[[SnapshotError], None] | None = None,
    ) -> None:
        """Flush every ``interval_s`` in a worker thread until cancelled.

        A failed flush goes to ``on_error`` and is retried on the next tick (its events stay
        buffered); without ``on_error`` it ends this task with the SnapshotError.
        """
        while True:
            await asyncio.sleep(interval_s)
            try:
                await asyncio.to_thread(self.flush)
            except SnapshotError as exc:
                if on_error is None:
                    raise
                on_error(exc)

    def update_manifest(self, keys: dict[str, Any]) -> None:
        """Add ``keys`` to the manifest and rewrite it whole; raises SnapshotError."""
        if not self._opened:
            raise RuntimeError(f"snapshot writer for {self.path} is not open")
        with self._flush_lock:  # close() rewrites it too: one writer of the file at a time
            manifest = {**self.manifest, **keys}
            try:
                write_manifest(self.path, manifest)
            except (OSError, TypeError) as exc:
                raise SnapshotError(
                    f"cannot write {self.path / 'manifest.json'}: {error_text(exc)}"
                ) from exc
            self.manifest = manifest

    def close(self, status: Literal["complete", "aborted"]) -> None:
        """Final flush, compact every table, then mark the manifest ``status`` with ``ended_at``.

        No event can be added once close has been called. Raises SnapshotError if a write
        fails; calling close again retries what is left.
        """
        if status not in ("complete", "aborted"):
            raise ValueError(f"close status must be 'complete' or 'aborted', not {status!r}")
        if not self._opened:
            raise RuntimeError(f"snapshot writer for {self.path} is not open")
        self._closing = True
        with self._flush_lock:
            self._flush_locked()
            failures: list[SnapshotError] = []
            for table in TABLES:
                try:
                    self._compact(table)
                except SnapshotError as exc:
                    failures.append(exc)
            self.manifest = {**self.manifest, "status": status, "ended_at": utc_now_iso()}
            try:
                write_manifest(self.path, self.manifest)
            except OSError as exc:
                raise SnapshotError(
                    f"cannot write {self.path / 'manifest.json'}: {error_text(exc)}"
                ) from exc
        if failures:
            raise failures[0]

    def _compact(self, table: str) -> None:
        """Replace the table's parts by one file; the parts go only once that file is in place."""
        target = self.path / compacted_name(table)
        parts = list_parts(self.path / table)
        if not target.exists():
            try:
                frame = pl.read_parquet(parts) if parts else empty_frame(table)
            except (OSError, pl.exceptions.PolarsError) as exc:
                raise SnapshotError(
                    f"cannot compact {self.path / table}: {error_text(exc)}"
                ) from exc
            try:
                write_atomic(target, parquet_bytes(frame.select(SCHEMAS[table].names())))
            except OSError as exc:
                raise SnapshotError(f"cannot write {target}: {error_text(exc)}") from exc
        # Every journal left has its part written (close flushed first): the part is in target.
        journals = [path for _, path in _numbered(self.path / table, _JOURNAL)]
        try:
            for part in [*parts, *journals]:
                part.unlink(missing_ok=True)
        except OSError as exc:
            raise SnapshotError(
                f"cannot remove compacted parts in {self.path / table}: {error_text(exc)}"
            ) from exc
        # A table folder still holding someone else's file is harmless: readers skip it.
        with contextlib.suppress(OSError):
            (self.path / table).rmdir()

"""The journal: every event added is on disk at once, and readers take it where no part is yet."""

from __future__ import annotations

import errno
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from nvfp4_tui.store import writer as writer_module
from nvfp4_tui.store.manifest import SnapshotError, read_manifest, write_manifest
from nvfp4_tui.store.reader import SnapshotTail, open_snapshot
from nvfp4_tui.store.writer import PART_MAX_BYTES, PartWriteError, SnapshotWriter, list_parts
from tests.store.helpers import one_of_each, request_event


def opened(root: Path) -> SnapshotWriter:
    writer = SnapshotWriter(root, "journal", {"purpose": "journal test"})
    writer.open()
    return writer


def dead_writer(writer: SnapshotWriter) -> None:
    """Mark the snapshot as written by a process that has exited, as after a SIGKILL."""
    child = subprocess.Popen(["true"])
    child.wait()
    manifest = read_manifest(writer.path)
    write_manifest(writer.path, {**manifest, "writer": {**manifest["writer"], "pid": child.pid}})


def test_events_never_flushed_are_read_from_the_journal(tmp_path: Path) -> None:
    writer = opened(tmp_path)
    for index in range(3):
        writer.add(request_event(index))
    writer.flush()
    for event in [request_event(3), request_event(4), *one_of_each()]:
        writer.add(event)
    # No flush: a process killed here leaves only the journals.
    assert not list_parts(writer.path / "gpu")
    snapshot = open_snapshot(writer.path)
    assert snapshot.warnings == []
    assert snapshot.requests()["request_index"].to_list() == [0, 1, 2, 3, 4, 0]
    assert snapshot.gpu().height == 1 and snapshot.server().height == 1
    assert len(snapshot.run_events()) == len(one_of_each()) - 3
    writer.close("complete")
    assert not list((writer.path).rglob("journal-*"))
    assert open_snapshot(writer.path).requests().height == 6


def test_a_cut_last_line_is_dropped_and_a_bad_line_named(tmp_path: Path) -> None:
    writer = opened(tmp_path)
    for index in range(4):
        writer.add(request_event(index))
    journal = next((writer.path / "requests").glob("journal-*.jsonl"))
    lines = journal.read_bytes().split(b"\n")
    lines[1] = b'{"type": "RequestFinished", "t": '  # a damaged middle line
    cut = b"\n".join(lines[:-2]) + b"\n" + lines[-2][:40]  # the last append never finished
    journal.write_bytes(cut)
    snapshot = open_snapshot(writer.path)
    assert snapshot.requests()["request_index"].to_list() == [0, 2]
    assert len(snapshot.warnings) == 1, snapshot.warnings
    assert snapshot.warnings[0].startswith(f"skipped {journal} line 2: not an event")


def test_large_events_make_parts_of_bounded_size_in_order(tmp_path: Path) -> None:
    writer = opened(tmp_path)
    answer = "river " * (PART_MAX_BYTES // 6 // 4)  # with its other fields, three to a part
    for index in range(10):
        writer.add(replace(request_event(2 * index), answer_text=answer))
    writer.flush()
    parts = list_parts(writer.path / "requests")
    assert len(parts) == 4
    snapshot = open_snapshot(writer.path)
    assert snapshot.requests()["request_index"].to_list() == [2 * i for i in range(10)]


def test_a_follower_takes_the_journals_of_a_writer_that_died(tmp_path: Path) -> None:
    writer = opened(tmp_path)
    writer.add(request_event(0))
    writer.flush()
    writer.add(request_event(1))
    tail = SnapshotTail(writer.path)
    # Its writer (this process) is alive: the journal may still grow, the tail waits for parts.
    assert [e.request_index for e in tail.poll()] == [0]  # type: ignore[attr-defined]
    dead_writer(writer)
    assert [e.request_index for e in tail.poll()] == [1]  # type: ignore[attr-defined]
    assert tail.poll() == [] and tail.warnings == []


def test_a_journal_that_cannot_be_written_is_said_once_and_parts_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = opened(tmp_path)
    real_write = os.write

    def full_disk(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writer_module.os, "write", full_disk)
    writer.add(request_event(0))
    monkeypatch.setattr(writer_module.os, "write", real_write)
    writer.add(request_event(1))  # journaling stays off: the flush says so
    with pytest.raises(SnapshotError, match=r"journal-000000\.jsonl: \[Errno 28\] No space") as e:
        writer.flush()
    assert not isinstance(e.value, PartWriteError)  # a run goes on: its parts are written
    assert writer.buffered_events == 0
    writer.add(request_event(2))
    assert not list((writer.path / "requests").glob("journal-*"))
    writer.flush()  # said once
    assert open_snapshot(writer.path).requests()["request_index"].to_list() == [0, 1, 2]


def test_a_journal_failure_does_not_stop_close(tmp_path: Path, monkeypatch) -> None:
    writer = opened(tmp_path)

    def full_disk(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patch:
        patch.setattr(writer_module.os, "write", full_disk)
        writer.add(request_event(0))
    writer.close("complete")  # every part written and compacted: the journal no longer matters
    snapshot = open_snapshot(writer.path)
    assert snapshot.status == "complete" and snapshot.requests().height == 1

"""Hostile files where a snapshot should be: FIFOs, devices, huge or deeply nested JSON.

Each is a one-line error naming the file (a manifest, a legacy file) or a part skipped with a
warning; none may hang a reader, eat its memory or end in a traceback. A read that would hang is
run in a thread with a deadline, so a regression fails the test instead of stalling the suite.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nvfp4_tui.cli import main as cli_main
from nvfp4_tui.core import exit_codes
from nvfp4_tui.sources.follow import find_newest_running
from nvfp4_tui.store.legacy import LegacyError, read_legacy
from nvfp4_tui.store.manifest import MANIFEST_NAME, SnapshotError
from nvfp4_tui.store.outside_files import JSON_MAX_BYTES, JSON_MAX_DEPTH
from nvfp4_tui.store.reader import SnapshotTail, open_snapshot
from nvfp4_tui.store.writer import SnapshotWriter, list_parts
from tests.store.helpers import one_of_each

DEADLINE_S = 20.0  # far above a read of these few files; a hang fails instead of stalling


def within_deadline(action: Callable[[], Any]) -> Any:
    """``action()``'s result or exception, or a failure when it does not return in time."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = action()
        except BaseException as exc:  # handed to the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), f"still reading after {DEADLINE_S:g} s: it would hang"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def snapshot(root: Path) -> Path:
    writer = SnapshotWriter(root, "hostile-files", {"profile": None})
    writer.open()
    for event in one_of_each():
        writer.add(event)
    writer.flush()  # parts, as a run still going (or killed) leaves them
    return writer.path


def fifo_at(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def zero_device_at(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.symlink_to("/dev/zero")


def deep_json(depth: int) -> bytes:
    return b'{"a": ' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize(
    ("plant", "says"),
    [
        (fifo_at, "a FIFO, not a regular file"),
        (zero_device_at, "a character device, not a regular file"),
        (lambda p: p.write_bytes(b" " * (JSON_MAX_BYTES + 1) + b"{}"), "too large"),
        (lambda p: p.write_bytes(deep_json(100_000)), f"deeper than {JSON_MAX_DEPTH} levels"),
        (lambda p: p.write_bytes(deep_json(JSON_MAX_DEPTH + 1)), "deeper than"),
        (lambda p: p.write_bytes(b'{"schema_version": 1' + b"9" * 5000 + b"}"), "not readable"),
    ],
)
def test_a_manifest_that_is_no_small_regular_json_file_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], plant: Callable[[Path], None], says: str
) -> None:
    directory = snapshot(tmp_path)
    manifest = directory / MANIFEST_NAME
    plant(manifest)
    with pytest.raises(SnapshotError, match=says):
        within_deadline(lambda: open_snapshot(directory))
    for command in (["report"], ["replay", "--headless"], ["follow", "--headless"]):
        code = within_deadline(lambda c=command: cli_main([c[0], str(directory), *c[1:]]))
        err = capsys.readouterr().err
        assert code == exit_codes.USAGE, err
        assert len(err.splitlines()) == 1 and str(manifest) in err and says in err, err


def test_follow_looks_past_a_fifo_manifest_for_the_newest_running_run(tmp_path: Path) -> None:
    good = snapshot(tmp_path / "a")
    hostile = snapshot(tmp_path / "b")
    hostile.rename(good.parent / "zz-hostile")
    fifo_at(good.parent / "zz-hostile" / MANIFEST_NAME)
    assert within_deadline(lambda: find_newest_running(good.parent)) == good


@pytest.mark.parametrize("plant", [fifo_at, zero_device_at, lambda p: p.mkdir()])
def test_a_part_that_is_no_regular_file_is_skipped_by_name(
    tmp_path: Path, plant: Callable[[Path], None]
) -> None:
    directory = snapshot(tmp_path)
    part = list_parts(directory / "requests")[0]
    part.unlink()
    plant(part)
    opened = within_deadline(lambda: open_snapshot(directory))
    assert opened.requests().is_empty() and opened.gpu().height == 1
    assert [w.split(": ")[0] for w in opened.warnings] == [f"skipped {part}"], opened.warnings
    assert "not a regular file" in opened.warnings[0]
    tail = SnapshotTail(directory)
    assert within_deadline(tail.poll)  # the other tables' events
    assert any(str(part) in w for w in tail.warnings)


def test_an_event_row_nested_too_deeply_is_skipped_with_a_warning(tmp_path: Path) -> None:
    import polars as pl

    from nvfp4_tui.store.schema import events_to_frame

    directory = snapshot(tmp_path)
    row = events_to_frame("events", [one_of_each()[0]])
    deep = row.with_columns(pl.Series("json", [deep_json(100_000).decode()]))
    deep.write_parquet(directory / "events" / "part-000001.parquet")
    opened = open_snapshot(directory)
    assert len(opened.warnings) == 1 and "not an event (maximum recursion" in opened.warnings[0]
    assert opened.run_events()  # the readable rows


@pytest.mark.parametrize(
    ("plant", "says"),
    [
        (fifo_at, "a FIFO, not a regular file"),
        (zero_device_at, "a character device"),
        (lambda p: p.write_bytes(deep_json(JSON_MAX_DEPTH + 1)), "nested deeper than"),
    ],
)
def test_import_refuses_a_legacy_path_that_is_no_regular_file(
    tmp_path: Path, plant: Callable[[Path], None], says: str
) -> None:
    path = tmp_path / "benchmark.json"
    plant(path)
    with pytest.raises(LegacyError, match=says) as caught:
        within_deadline(lambda: read_legacy(path))
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)

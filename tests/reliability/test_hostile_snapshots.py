"""Damaged and hostile snapshots: clear one-line errors, and whatever is readable still replays.

A snapshot may be cut short by a crash, copied badly, edited, or made by someone else: truncated
parts, a part of another table's shape, 0-byte files, a compacted file that is not Parquet, event
rows that are not events, a manifest that is not JSON, a run id that climbs out of its directory,
numbers no run produces. None of it may crash a reader, a replay, a report or the UI.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from nvfp4_tui.cli import main as cli_main
from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.events import Event, RequestFinished
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.output.report import render_snapshot
from nvfp4_tui.sources.follow import FollowSource
from nvfp4_tui.sources.replay import ReplaySource
from nvfp4_tui.store import decoded_size
from nvfp4_tui.store.manifest import SnapshotError, read_manifest, write_manifest
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.store.schema import events_to_frame
from nvfp4_tui.store.writer import SnapshotWriter, list_parts, part_name
from nvfp4_tui.tui.app import FleetApp
from tests.replay.builders import timeline_run
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import wait_until

SECONDS = 40
CHUNKS = 5  # flushes while "running": each table gets up to this many parts


def _running_snapshot(root: Path, run_id: str = "hostile") -> tuple[Path, list[Event]]:
    """A snapshot left in the running layout (parts, no compaction), written in CHUNKS flushes."""
    events = timeline_run(SECONDS)[:-1]  # no RunFinished: the run was still going
    writer = SnapshotWriter(root, run_id, {"profile": {"name": run_id}})
    writer.open()
    size = math.ceil(len(events) / CHUNKS)
    for start in range(0, len(events), size):
        for event in events[start : start + size]:
            writer.add(event)
        writer.flush()
    return writer.path, events


def _rows(directory: Path) -> int:
    return open_snapshot(directory).requests().height


def _requests_in(part: Path) -> int:
    return pl.read_parquet(part).height


def _replayed(directory: Path) -> FleetState:
    state = FleetState()
    for event in ReplaySource(directory, speed=None, hold_at_end=False).snapshot.events():
        state.apply(event)
    return state


def test_damaged_parts_are_skipped_by_name_and_the_rest_replays(tmp_path: Path) -> None:
    directory, _ = _running_snapshot(tmp_path)
    parts = list_parts(directory / "requests")
    assert len(parts) == CHUNKS
    total = _rows(directory)
    truncated, wrong_schema, empty = parts[1], parts[2], parts[3]
    lost = sum(_requests_in(p) for p in (truncated, wrong_schema, empty))
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    pl.DataFrame({"gpu": [0], "power_w": [1.0]}).write_parquet(wrong_schema)
    empty.write_bytes(b"")
    (directory / "requests" / ".part-000099.parquet.tmp").write_bytes(b"PAR1 half")
    (directory / "requests.parquet").write_bytes(b"not parquet at all")

    snapshot = open_snapshot(directory)
    assert snapshot.requests().height == total - lost
    named = {Path(w.split(": ")[0].removeprefix("skipped ")) for w in snapshot.warnings}
    assert named == {directory / "requests.parquet", truncated, wrong_schema, empty}
    for warning in snapshot.warnings:
        assert len(warning.splitlines()) == 1 and len(warning) < 400, warning
    assert "wrong schema" in " ".join(snapshot.warnings)
    assert "empty file (0 bytes)" in " ".join(snapshot.warnings)
    state = _replayed(directory)
    assert state.requests_done == total - lost


def test_replay_and_report_commands_warn_and_go_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory, _ = _running_snapshot(tmp_path)
    list_parts(directory / "requests")[0].write_bytes(b"")
    assert cli_main(["replay", str(directory), "--headless"]) == exit_codes.DAMAGED
    captured = capsys.readouterr()
    assert "warning: skipped" in captured.err and "empty file" in captured.err
    assert "run running" in captured.out  # its writer (this process) is alive
    assert cli_main(["report", str(directory)]) == exit_codes.DAMAGED


def test_event_rows_that_are_not_events_are_skipped_with_a_warning(tmp_path: Path) -> None:
    directory, events = _running_snapshot(tmp_path)
    bad = events_to_frame("events", [events[0]]).with_columns(
        pl.Series("json", ['{"type": "RunStarted", "run_id": 3'])  # cut JSON
    )
    alien = events_to_frame("events", [events[0]]).with_columns(
        pl.Series("type", ["FromTheFuture"]),
        pl.Series("json", [json.dumps({"type": "FromTheFuture", "t": 1.0})]),
    )
    table = directory / "events"
    pl.concat([bad, alien]).write_parquet(table / part_name(len(list_parts(table))))
    snapshot = open_snapshot(directory)
    assert len([w for w in snapshot.warnings if "events" in w]) == 2, snapshot.warnings
    assert snapshot.requests().height > 0
    tail_events = FollowSource(directory)._tail.poll()
    assert any(isinstance(e, RequestFinished) for e in tail_events)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "not JSON"),
        (b"{not json", "not JSON"),
        (b"[1, 2]", "list at top level"),
        (b'{"schema_version": 1, "status": "running"}', "'run_id'"),
        (b'{"schema_version": 1, "status": "done", "run_id": "x"}', "'status'"),
        (b'{"schema_version": 99, "status": "running", "run_id": "x"}', "newer"),
        (b"\xff\xfe\x00garbage", "cannot read"),
    ],
)
def test_a_bad_manifest_is_a_one_line_error_exit_2(
    tmp_path: Path, content: bytes, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    directory, _ = _running_snapshot(tmp_path)
    (directory / "manifest.json").write_bytes(content)
    with pytest.raises(SnapshotError, match=says):
        open_snapshot(directory)
    for command in (["replay", "--headless"], ["report"], ["follow", "--headless"]):
        assert cli_main([command[0], str(directory), *command[1:]]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and str(directory / "manifest.json") in err, err


@pytest.mark.parametrize(
    "run_id", ["../../outside", "a/b", "..", ".hidden", "x\x1b]0;pwned\x07", "x\ny", "", "a" * 5000]
)
def test_a_run_id_that_is_not_a_plain_name_is_refused(tmp_path: Path, run_id: str) -> None:
    root = tmp_path / "root"
    with pytest.raises(SnapshotError, match="invalid run id") as caught:
        SnapshotWriter(root, run_id, {})
    message = str(caught.value)
    assert "\x1b" not in message and "\n" not in message and len(message) < 300
    assert not root.exists() and not (tmp_path / "outside").exists()
    directory, _ = _running_snapshot(tmp_path, "fine")
    manifest = read_manifest(directory)
    write_manifest(directory, {**manifest, "run_id": run_id})
    with pytest.raises(SnapshotError, match="run_id") as caught:
        open_snapshot(directory)
    assert "\x1b" not in str(caught.value) and "\n" not in str(caught.value)


def test_zero_byte_files_everywhere_still_open(tmp_path: Path) -> None:
    directory, _ = _running_snapshot(tmp_path)
    for table in ("gpu", "server", "events"):
        for part in list_parts(directory / table):
            part.write_bytes(b"")
    (directory / "gpu.parquet").write_bytes(b"")
    snapshot = open_snapshot(directory)
    assert snapshot.gpu().is_empty() and snapshot.requests().height > 0
    assert snapshot.events()  # the request rows
    assert all("empty file" in w for w in snapshot.warnings)


def _hostile_rows() -> list[Event]:
    """Rows of the right schema holding what no run produces."""
    events = timeline_run(6)
    weird = [
        {"ttft_s": math.nan, "e2e_s": math.inf, "decode_tps": -5.0, "tokens_out": -3},
        {"ttft_s": -1.0, "e2e_s": 0.0, "decode_tps": math.inf, "tokens_out": 2**62},
        {"status": "bogus", "error_kind": "not-a-kind", "error_message": "\x1b[2J" * 1000},
        {"suite": "", "endpoint_id": "ghost", "concurrency": 0, "score_heuristic": math.nan},
        {"t": math.nan, "queue_s": -math.inf, "attempt": -1, "retry_after_s": math.inf},
    ]
    requests = [e for e in events if isinstance(e, RequestFinished)]
    hostile = [replace(r, **changes) for r, changes in zip(requests, weird, strict=False)]
    return [e for e in events if not isinstance(e, RequestFinished)] + hostile


async def test_numbers_no_run_produces_replay_report_and_draw(tmp_path: Path) -> None:
    writer = SnapshotWriter(tmp_path, "weird", {"profile": None})
    writer.open()
    for event in _hostile_rows():
        writer.add(event)
    writer.close("complete")
    snapshot = open_snapshot(writer.path)
    assert snapshot.warnings == []
    state = FleetState()
    state.apply_all(snapshot.events())
    assert render_snapshot(snapshot, "text")
    assert render_snapshot(snapshot, "json")
    events = snapshot.events()
    end_t = max(e.t for e in events if math.isfinite(e.t))
    app = FleetApp(FixedSource(events, kind="live"), clock=lambda: end_t)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.open_detail("a")
        await pilot.pause()
        await pilot.press("escape", "l", "escape")
        assert app.source_error is None
    replay = FleetApp(ReplaySource(snapshot, speed=None))
    async with replay.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: replay.state.status == "complete", "the whole replay")
        await pilot.press("space", "left", "home", "end", "l")
        assert replay.source_error is None
        assert replay.state.status == "complete"


def test_a_part_made_to_blow_up_when_decoded_is_refused_by_name_and_export_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dictionary of one long answer repeated by run-length encoding: an 11 kB part was
    1.6 GB in memory, and its CSV export ran for minutes. Here a few kB that would decode to
    40 MB, against a floor lowered to 1 MiB."""
    monkeypatch.setattr(decoded_size, "DECODED_FLOOR_BYTES", 1 << 20)
    directory, _ = _running_snapshot(tmp_path)
    parts = list_parts(directory / "requests")
    bomb = parts[2]
    lost = _requests_in(bomb)
    total = _rows(directory)
    one = pl.read_parquet(parts[0]).head(1)
    rows = one.select(pl.all().repeat_by(20_000).explode())
    rows.with_columns(answer_text=pl.lit("A" * 2_000)).write_parquet(bomb, compression_level=22)
    assert bomb.stat().st_size * decoded_size.DECODED_MAX_RATIO < 40_000_000

    snapshot = open_snapshot(directory)
    assert snapshot.requests().height == total - lost
    [warning] = snapshot.warnings
    assert warning.startswith(f"skipped {bomb}: would take ") and "not read" in warning
    out = tmp_path / "csv"
    assert cli_main(["export", str(directory), "--format", "csv", "--out", str(out)]) == (
        exit_codes.DAMAGED
    )
    assert "not read" in capsys.readouterr().err
    assert pl.read_csv(out / "requests.csv").height == total - lost

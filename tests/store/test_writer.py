"""The writer: parts while running, compaction on close, errors reported before and during a run."""

from __future__ import annotations

import asyncio
import errno
import json
import shutil
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

import polars as pl
import pytest

from nvfp4_tui.core.events import TokenProgress
from nvfp4_tui.store import writer as writer_module
from nvfp4_tui.store.manifest import SnapshotError, check_run_id, new_run_id
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.store.writer import SnapshotWriter
from tests.store.helpers import one_of_each, request_event
from tests.support.factories import T0

VERSION_KEYS = {"python", "nvfp4_tui", "polars", "aiohttp", "textual"}


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


def manifest_of(path: Path) -> dict[str, Any]:
    return json.loads((path / "manifest.json").read_text())


def opened(tmp_path: Path, run_id: str = "run-1") -> SnapshotWriter:
    writer = SnapshotWriter(tmp_path, run_id, {"profile": {"name": "demo", "gpus": 7}})
    writer.open()
    return writer


def test_open_writes_a_running_manifest(tmp_path: Path) -> None:
    writer = opened(tmp_path)
    manifest = manifest_of(writer.path)
    assert writer.path == tmp_path / "run-1"
    assert manifest["status"] == "running"
    assert manifest["run_id"] == "run-1"
    assert manifest["schema_version"] == 1
    assert manifest["ended_at"] is None
    assert manifest["profile"] == {"name": "demo", "gpus": 7}
    assert set(manifest["versions"]) == VERSION_KEYS
    assert manifest["host"]
    datetime.fromisoformat(manifest["started_at"])
    assert files_under(writer.path) == ["manifest.json"]


def test_flush_writes_numbered_parts_then_close_compacts(tmp_path: Path) -> None:
    writer = opened(tmp_path)
    first = one_of_each()
    for event in first:
        writer.add(event)
    writer.add(TokenProgress(T0, "gpu0", 1, 99.0))
    writer.flush()
    writer.flush()  # nothing buffered: no empty part
    second = [request_event(i) for i in range(1, 4)]
    for event in second:
        writer.add(event)
    writer.flush()
    assert files_under(writer.path) == [
        "events/part-000000.parquet",
        "gpu/part-000000.parquet",
        "manifest.json",
        "requests/part-000000.parquet",
        "requests/part-000001.parquet",
        "server/part-000000.parquet",
    ]
    assert pl.read_parquet(writer.path / "requests/part-000001.parquet").height == 3

    writer.close("complete")
    assert files_under(writer.path) == [
        "events.parquet",
        "gpu.parquet",
        "manifest.json",
        "requests.parquet",
        "server.parquet",
    ]
    assert [p.name for p in writer.path.iterdir() if p.is_dir()] == []
    manifest = manifest_of(writer.path)
    assert manifest["status"] == "complete"
    assert datetime.fromisoformat(manifest["ended_at"]) >= datetime.fromisoformat(
        manifest["started_at"]
    )
    snapshot = open_snapshot(writer.path)
    assert snapshot.warnings == []
    assert snapshot.events() == sorted(first + second, key=lambda e: e.t)
    assert snapshot.requests()["request_index"].to_list() == [0, 1, 2, 3]


def test_aborted_run_is_compacted_too_and_empty_tables_keep_their_schema(tmp_path: Path) -> None:
    writer = opened(tmp_path)
    writer.add(request_event(0))
    writer.close("aborted")
    assert manifest_of(writer.path)["status"] == "aborted"
    gpu = pl.read_parquet(writer.path / "gpu.parquet")
    assert gpu.height == 0
    assert "vram_used_mib" in gpu.columns
    assert pl.read_parquet(writer.path / "requests.parquet").height == 1


def test_no_event_is_accepted_after_close(tmp_path: Path) -> None:
    writer = opened(tmp_path)
    writer.close("complete")
    with pytest.raises(RuntimeError, match="not open"):
        writer.add(request_event(0))
    with pytest.raises(ValueError, match="'complete' or 'aborted'"):
        writer.close("running")  # type: ignore[arg-type]


def test_unwritable_directory_is_reported_before_the_run(tmp_path: Path) -> None:
    # Tests run as root, which ignores permission bits, so the root is placed under a regular
    # file: creating a directory there fails with ENOTDIR for every user.
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    writer = SnapshotWriter(blocker / "sub", "run-1", {})
    with pytest.raises(SnapshotError) as caught:
        writer.open()
    message = str(caught.value)
    assert message == f"cannot write snapshot to {blocker}/sub/run-1: [Errno 20] Not a directory"
    assert "\n" not in message


def test_probe_failure_is_reported_and_nothing_is_left(tmp_path: Path, monkeypatch) -> None:
    def refuse(directory: Path) -> NoReturn:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(writer_module, "_probe_write", refuse)
    writer = SnapshotWriter(tmp_path, "run-1", {})
    with pytest.raises(SnapshotError, match=r"run-1: \[Errno 13\] Permission denied$"):
        writer.open()
    assert not writer.path.exists()


def test_low_disk_space_is_reported_before_the_run(tmp_path: Path, monkeypatch) -> None:
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(
        writer_module.shutil, "disk_usage", lambda _: usage._replace(free=10 * 1024 * 1024)
    )
    writer = SnapshotWriter(tmp_path, "run-1", {}, min_free_mib=64)
    with pytest.raises(SnapshotError, match="10 MiB free, need at least 64 MiB"):
        writer.open()
    assert not writer.path.exists()


def test_existing_snapshot_is_never_overwritten(tmp_path: Path) -> None:
    first = opened(tmp_path)
    first.add(request_event(0))
    first.close("complete")
    before = files_under(first.path)
    with pytest.raises(SnapshotError, match="directory is not empty"):
        SnapshotWriter(tmp_path, "run-1", {}).open()
    assert files_under(first.path) == before


@pytest.mark.parametrize("run_id", ["", "../up", "a/b", ".hidden", "sp ace", "x" * 201, "é"])
def test_unsafe_run_ids_are_refused(tmp_path: Path, run_id: str) -> None:
    with pytest.raises(SnapshotError, match="invalid run id"):
        SnapshotWriter(tmp_path, run_id, {})


def test_new_run_id_is_a_sanitised_name_after_the_time() -> None:
    now = datetime(2026, 12, 2, 9, 30, 0)
    assert new_run_id("demo-7gpu", now) == "20261202-093000-demo-7gpu"
    assert new_run_id("Demo fleet / 7 GPUs!", now) == "20261202-093000-Demo-fleet-7-GPUs"
    assert new_run_id("../../etc/passwd", now) == "20261202-093000-etc-passwd"
    assert new_run_id("日本", now) == "20261202-093000"
    assert len(new_run_id("x" * 500, now)) == len("20261202-093000-") + 64
    assert check_run_id(new_run_id("a..b", now)) == "20261202-093000-a..b"


def fail_with_enospc(*_: object, **__: object) -> NoReturn:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_failed_write_keeps_its_events_and_damages_nothing(tmp_path: Path, monkeypatch) -> None:
    writer = opened(tmp_path)
    writer.add(request_event(0))
    writer.flush()
    with monkeypatch.context() as patch:
        patch.setattr(pl.DataFrame, "write_parquet", fail_with_enospc)
        writer.add(request_event(1))
        writer.add(one_of_each()[0])
        with pytest.raises(SnapshotError) as caught:
            writer.flush()
        message = str(caught.value)
        assert message.startswith(f"cannot write {writer.path}/")
        assert message.endswith("requests/part-000001.parquet: [Errno 28] No space left on device")
        assert "\n" not in message
        assert writer.buffered_events == 2
        writer.add(request_event(2))
        with pytest.raises(SnapshotError):
            writer.close("complete")
        assert writer.buffered_events == 3

        snapshot = open_snapshot(writer.path)
        assert snapshot.warnings == []
        assert snapshot.status == "running"
        # Not in parts, but every event added is in a journal, which a reader reads too.
        assert sorted(p.name for p in (writer.path / "requests").iterdir()) == [
            "journal-000001.jsonl",
            "journal-000002.jsonl",
            "part-000000.parquet",
        ]
        assert snapshot.requests()["request_index"].to_list() == [0, 1, 2]
        assert len(snapshot.table("events")) == 1
        assert not [p for p in writer.path.rglob("*") if p.name.endswith(".tmp")]

    writer.close("complete")
    assert writer.buffered_events == 0
    snapshot = open_snapshot(writer.path)
    assert snapshot.status == "complete"
    assert snapshot.requests()["request_index"].to_list() == [0, 1, 2]
    assert len(snapshot.table("events")) == 1


def test_a_failed_rename_leaves_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    writer = opened(tmp_path)
    writer.add(request_event(0))

    def replace_fails(src: object, dst: object) -> NoReturn:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr("nvfp4_tui.store.manifest.os.replace", replace_fails)
    with pytest.raises(SnapshotError, match=r"\[Errno 5\] Input/output error"):
        writer.flush()
    monkeypatch.undo()
    assert files_under(writer.path) == ["manifest.json", "requests/journal-000000.jsonl"]
    writer.flush()
    assert files_under(writer.path) == ["manifest.json", "requests/part-000000.parquet"]


def test_removed_directory_is_a_clear_error(tmp_path: Path) -> None:
    writer = opened(tmp_path)
    shutil.rmtree(writer.path)
    writer.add(request_event(0))
    with pytest.raises(SnapshotError, match=r"\[Errno 2\] No such file or directory$"):
        writer.flush()
    assert writer.buffered_events == 1
    assert not writer.path.exists()


async def test_flush_periodically_writes_parts_in_the_background(tmp_path: Path) -> None:
    writer = opened(tmp_path)
    task = asyncio.create_task(writer.flush_periodically(interval_s=0.02))
    try:
        for index in range(5):
            writer.add(request_event(index))
            for _ in range(500):
                if writer.buffered_events == 0:
                    break
                await asyncio.sleep(0.01)
            assert writer.buffered_events == 0
    finally:
        task.cancel()
    writer.close("complete")
    assert open_snapshot(writer.path).requests()["request_index"].to_list() == [0, 1, 2, 3, 4]


async def test_flush_periodically_reports_errors_and_retries(tmp_path: Path, monkeypatch) -> None:
    writer = opened(tmp_path)
    errors: list[SnapshotError] = []
    monkeypatch.setattr(pl.DataFrame, "write_parquet", fail_with_enospc)
    task = asyncio.create_task(writer.flush_periodically(0.02, on_error=errors.append))
    try:
        writer.add(request_event(0))
        for _ in range(500):
            if len(errors) >= 2:
                break
            await asyncio.sleep(0.01)
        assert len(errors) >= 2
        assert writer.buffered_events == 1
        monkeypatch.undo()
        for _ in range(500):
            if writer.buffered_events == 0:
                break
            await asyncio.sleep(0.01)
        assert writer.buffered_events == 0
    finally:
        task.cancel()
    assert open_snapshot(writer.path).requests()["request_index"].to_list() == [0]


async def test_flush_periodically_without_handler_ends_with_the_error(
    tmp_path: Path, monkeypatch
) -> None:
    writer = opened(tmp_path)
    monkeypatch.setattr(pl.DataFrame, "write_parquet", fail_with_enospc)
    writer.add(request_event(0))
    with pytest.raises(SnapshotError, match="No space left"):
        await asyncio.wait_for(writer.flush_periodically(0.01), timeout=10)


def test_an_event_that_does_not_fit_is_dropped_alone(tmp_path: Path) -> None:
    writer = opened(tmp_path)
    writer.add(request_event(0))
    writer.add(replace(request_event(1), ttft_s="fast"))  # type: ignore[arg-type]
    writer.add(request_event(2))
    writer.add(one_of_each()[0])
    with pytest.raises(SnapshotError, match=r"dropped 1 requests event\(s\) that do not fit: "):
        writer.flush()
    assert writer.buffered_events == 0
    snapshot = open_snapshot(writer.path)
    assert snapshot.requests()["request_index"].to_list() == [0, 2]
    assert len(snapshot.table("events")) == 1


def test_manifest_that_is_not_json_is_refused_at_once(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        SnapshotWriter(tmp_path, "run-1", {"profile": object()})
    assert list(tmp_path.iterdir()) == []


def test_failed_compaction_keeps_the_parts_readable(tmp_path: Path) -> None:
    writer = opened(tmp_path)
    writer.add(request_event(0))
    writer.flush()
    bad_part = writer.path / "requests" / "part-000001.parquet"
    bad_part.write_bytes(b"PAR1 torn by a disk fault")
    writer.add(one_of_each()[0])
    with pytest.raises(SnapshotError, match=rf"^cannot compact {writer.path}/requests: "):
        writer.close("complete")
    assert manifest_of(writer.path)["status"] == "complete"
    assert (writer.path / "events.parquet").exists()
    snapshot = open_snapshot(writer.path)
    assert [w.split(": ")[0] for w in snapshot.warnings] == [f"skipped {bad_part}"]
    assert snapshot.requests()["request_index"].to_list() == [0]

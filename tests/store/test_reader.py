"""The reader: both layouts, a mixed one, unreadable files skipped with warnings, the tail."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from nvfp4_tui.core.events import GpuSample, RunFinished
from nvfp4_tui.store.manifest import SnapshotError
from nvfp4_tui.store.reader import SnapshotTail, open_snapshot
from nvfp4_tui.store.schema import SCHEMAS
from nvfp4_tui.store.writer import SnapshotWriter
from tests.store.helpers import one_of_each, request_event
from tests.support.factories import T0, write_snapshot

FIRST = one_of_each()
SECOND = [request_event(i, t=T0 + 10 + i) for i in range(1, 4)]
ALL = sorted(FIRST + SECOND, key=lambda e: e.t)


def two_batches(tmp_path: Path, close: bool) -> Path:
    return write_snapshot(tmp_path, "run-1", FIRST, SECOND, close="complete" if close else None)


def test_parts_layout_of_a_crashed_run(tmp_path: Path) -> None:
    path = two_batches(tmp_path, close=False)
    snapshot = open_snapshot(path)
    assert snapshot.status == "running"
    assert snapshot.run_id == "run-1"
    assert snapshot.manifest["profile"] == {"name": "run-1"}
    assert snapshot.warnings == []
    assert snapshot.events() == ALL
    assert snapshot.requests().schema == SCHEMAS["requests"]
    assert snapshot.gpu()["vram_used_mib"].to_list() == [92316.0]
    assert snapshot.server()["kv_cache_pct"].to_list() == [12.5]


def test_compacted_layout(tmp_path: Path) -> None:
    path = two_batches(tmp_path, close=True)
    snapshot = open_snapshot(path)
    assert snapshot.status == "complete"
    assert snapshot.warnings == []
    assert snapshot.events() == ALL
    assert snapshot.events() is not snapshot.events()  # callers may mutate their copy


def test_mixed_layout_reads_the_compacted_file_and_ignores_its_parts(tmp_path: Path) -> None:
    # A crash during compaction leaves a compacted table beside its parts, and other tables
    # still in parts only.
    path = two_batches(tmp_path, close=False)
    saved = tmp_path / "saved"
    shutil.copytree(path, saved)
    writer_path = two_batches(tmp_path / "other", close=True)
    shutil.copy(writer_path / "requests.parquet", saved / "requests.parquet")
    snapshot = open_snapshot(saved)
    assert snapshot.warnings == []
    assert snapshot.events() == ALL
    assert snapshot.requests()["request_index"].to_list() == [0, 1, 2, 3]


def test_events_at_equal_t_keep_table_order(tmp_path: Path) -> None:
    same_t = [
        request_event(0, t=T0),
        GpuSample(T0, 3),
        RunFinished(T0, "complete"),
        request_event(1, t=T0 - 1),
    ]
    path = write_snapshot(tmp_path, "ties", same_t)
    names = [type(e).__name__ for e in open_snapshot(path).events()]
    assert names == ["RequestFinished", "RunFinished", "RequestFinished", "GpuSample"]


def corrupt_parts(path: Path) -> dict[str, Path]:
    """Truncated, empty and wrong-schema parts beside the good ones, plus a stray temporary."""
    good = (path / "requests" / "part-000001.parquet").read_bytes()
    bad = {
        "truncated": path / "requests" / "part-000002.parquet",
        "empty": path / "requests" / "part-000003.parquet",
        "wrong_columns": path / "requests" / "part-000004.parquet",
        "wrong_dtype": path / "gpu" / "part-000001.parquet",
    }
    bad["truncated"].write_bytes(good[: len(good) // 2])
    bad["empty"].write_bytes(b"")
    pl.DataFrame({"t": [1.0], "other": ["x"]}).write_parquet(bad["wrong_columns"])
    gpu = pl.read_parquet(path / "gpu" / "part-000000.parquet")
    gpu.with_columns(pl.col("gpu").cast(pl.String)).write_parquet(bad["wrong_dtype"])
    (path / "requests" / ".part-000005.parquet.tmp").write_bytes(good[:10])
    (path / "requests" / "notes.txt").write_text("not a part")
    return bad


def test_unreadable_parts_are_skipped_with_one_warning_each(tmp_path: Path) -> None:
    path = two_batches(tmp_path, close=False)
    bad = corrupt_parts(path)
    snapshot = open_snapshot(path)
    assert snapshot.events() == ALL
    assert len(snapshot.warnings) == 4
    by_file = {w.split(": ", 1)[0]: w for w in snapshot.warnings}
    assert set(by_file) == {f"skipped {p}" for p in bad.values()}
    assert "not readable as Parquet" in by_file[f"skipped {bad['truncated']}"]
    assert "empty file (0 bytes)" in by_file[f"skipped {bad['empty']}"]
    assert "missing column 'ts'" in by_file[f"skipped {bad['wrong_columns']}"]
    assert "column 'gpu' is String, expected Int64" in by_file[f"skipped {bad['wrong_dtype']}"]
    assert all("\n" not in w for w in snapshot.warnings)


def test_unreadable_compacted_file_falls_back_to_the_parts(tmp_path: Path) -> None:
    path = two_batches(tmp_path, close=False)
    (path / "requests.parquet").write_bytes(b"PAR1 not really")
    snapshot = open_snapshot(path)
    assert snapshot.events() == ALL
    assert len(snapshot.warnings) == 1
    assert snapshot.warnings[0].startswith(f"skipped {path / 'requests.parquet'}: ")
    assert snapshot.warnings[0].endswith("reading its parts instead")


def test_a_part_with_extra_columns_is_read(tmp_path: Path) -> None:
    path = two_batches(tmp_path, close=False)
    part = path / "requests" / "part-000001.parquet"
    pl.read_parquet(part).with_columns(future_metric_s=pl.lit(1.5)).write_parquet(part)
    snapshot = open_snapshot(path)
    assert snapshot.warnings == []
    assert snapshot.events() == ALL


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "manifest.json: not JSON (Expecting property name enclosed in double"),
        ("[1, 2]", "manifest.json: list at top level; expected a JSON object"),
        ('{"schema_version": 99, "status": "complete", "run_id": "r"}', "schema_version 99 is"),
        ('{"schema_version": 1, "status": "done", "run_id": "r"}', "key 'status' is 'done'"),
        ('{"schema_version": "1"}', "key 'schema_version' is '1'; expected an integer"),
    ],
)
def test_bad_manifest_is_one_line_naming_the_file(tmp_path: Path, text: str, expected: str) -> None:
    path = two_batches(tmp_path, close=True)
    (path / "manifest.json").write_text(text)
    with pytest.raises(SnapshotError) as caught:
        open_snapshot(path)
    message = str(caught.value)
    assert message.startswith(f"{path / 'manifest.json'}: ")
    assert expected in message
    assert "\n" not in message


def test_missing_manifest_says_it_is_not_a_snapshot(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match=r"manifest.json: missing; .* is not a snapshot"):
        open_snapshot(tmp_path)


def test_tail_returns_each_event_once_across_parts_and_compaction(tmp_path: Path) -> None:
    writer = SnapshotWriter(tmp_path, "live", {})
    writer.open()
    tail = SnapshotTail(writer.path)
    assert tail.poll() == []
    assert tail.manifest is not None and tail.manifest["status"] == "running"

    for event in FIRST:
        writer.add(event)
    writer.flush()
    assert tail.poll() == FIRST
    assert tail.poll() == []
    assert not tail.finished

    writer.add(SECOND[0])
    writer.flush()
    writer.add(SECOND[1])
    writer.flush()
    assert tail.poll() == SECOND[:2]

    writer.add(SECOND[2])
    writer.flush()  # this part is never seen as a part: compaction removes it first
    writer.close("complete")
    assert tail.poll() == SECOND[2:]
    assert tail.finished
    assert tail.poll() == []
    assert tail.warnings == []


def test_tail_skips_a_bad_part_with_a_warning(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, "live", [request_event(0)], close=None)
    (path / "requests" / "part-000001.parquet").write_bytes(b"")
    tail = SnapshotTail(path)
    assert [e.request_index for e in tail.poll()] == [0]
    assert tail.warnings == [
        f"skipped {path / 'requests' / 'part-000001.parquet'}: empty file (0 bytes)"
    ]
    assert tail.poll() == []
    assert len(tail.warnings) == 1


def test_manifest_written_by_the_writer_is_valid_json_for_other_tools(tmp_path: Path) -> None:
    path = two_batches(tmp_path, close=True)
    body = json.loads((path / "manifest.json").read_text())
    assert body["run_id"] == "run-1"
    assert not list(path.glob(".*"))

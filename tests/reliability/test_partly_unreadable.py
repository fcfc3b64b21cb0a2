"""A snapshot read only in part: every reading command says which file it skipped and exits 4.

What could be read is still shown or exported (nothing recorded is held back by one bad file),
but no command reads "0 requests" or "0 significant changes" out of a truncated table as if the
run had been empty.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from nvfp4_tui.cli import main as cli_main
from nvfp4_tui.core import exit_codes
from nvfp4_tui.output.report import render_snapshot
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.store.writer import SnapshotWriter, list_parts
from tests.replay.builders import timeline_run

SECONDS = 12


def recorded(root: Path, run_id: str, *, close: bool = True) -> Path:
    writer = SnapshotWriter(root, run_id, {"profile": {"name": run_id}})
    writer.open()
    events = timeline_run(SECONDS)
    for start in range(0, len(events), 10):
        for event in events[start : start + 10]:
            writer.add(event)
        writer.flush()
    if close:
        writer.close("complete")
    return writer.path


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def said(err: str, path: Path) -> None:
    """stderr names the skipped file on a line of its own, then the exit code."""
    lines = err.splitlines()
    assert any(line.startswith(f"warning: skipped {path}: ") for line in lines), err
    assert lines[-1].endswith("(exit 4)") and "read only in part" in lines[-1], err


@pytest.mark.parametrize("table", ["requests", "events"])
def test_a_truncated_compacted_table_makes_every_reader_exit_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str
) -> None:
    good = recorded(tmp_path, "good")
    damaged = recorded(tmp_path, "damaged")
    truncate(damaged / f"{table}.parquet")
    readers: list[list[str]] = [
        ["report", str(damaged)],
        ["report", str(damaged), "--format", "json"],
        ["replay", str(damaged), "--headless"],
        ["follow", str(damaged), "--headless"],
        ["export", str(damaged), "--format", "csv", "--out", str(tmp_path / "csv")],
        ["compare", str(good), str(damaged)],
    ]
    for argv in readers:
        assert cli_main(argv) == exit_codes.DAMAGED, argv
        said(capsys.readouterr().err, damaged / f"{table}.parquet")
    # What could be read still went out: every other table in full.
    other = "gpu" if table == "requests" else "requests"
    exported = (tmp_path / "csv" / f"{other}.csv").read_text().splitlines()
    assert len(exported) == 1 + open_snapshot(good).table(other).height
    assert cli_main(["report", str(good)]) == exit_codes.OK
    assert capsys.readouterr().err == ""


def test_one_bad_part_among_many_keeps_the_rest_and_exits_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = recorded(tmp_path, "running", close=False)
    parts = list_parts(directory / "requests")
    assert len(parts) >= 3
    complete = open_snapshot(directory).requests().height
    truncate(parts[1])
    assert cli_main(["replay", str(directory), "--headless"]) == exit_codes.DAMAGED
    captured = capsys.readouterr()
    said(captured.err, parts[1])
    read = open_snapshot(directory).requests().height
    assert 0 < read < complete  # the other parts' rows, nothing invented


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: (d / "requests.parquet").write_bytes(b""),
        lambda d: (d / "gpu.parquet").write_bytes(b"PAR1 not really"),
    ],
)
def test_empty_or_foreign_table_files_exit_4_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: Callable[[Path], None]
) -> None:
    directory = recorded(tmp_path, "damaged")
    damage(directory)
    assert cli_main(["report", str(directory)]) == exit_codes.DAMAGED
    assert "read only in part: 1 file(s)" in capsys.readouterr().err


def test_what_was_read_in_part_says_so_in_the_report_and_the_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = recorded(tmp_path, "damaged")
    truncate(directory / "requests.parquet")
    assert cli_main(["report", str(directory)]) == exit_codes.DAMAGED
    assert capsys.readouterr().out.startswith("Read in part: 1 file(s) or row(s)")
    markdown, document = tmp_path / "report.md", tmp_path / "report.json"
    assert cli_main(["export", str(directory), "--format", "markdown", "--out", str(markdown)]) == 4
    assert "Read in part: 1 file(s)" in markdown.read_text()
    assert cli_main(["export", str(directory), "--format", "json", "--out", str(document)]) == 4
    skipped = json.loads(document.read_text())["skipped"]
    assert len(skipped) == 1 and str(directory / "requests.parquet") in skipped[0]
    good = recorded(tmp_path, "good")
    assert cli_main(["export", str(good), "--format", "json", "--out", str(document)]) == 0
    assert json.loads(document.read_text())["skipped"] == []
    assert "Read in part" not in render_snapshot(open_snapshot(good))

"""Exports: Parquet equals the snapshot, CSV opens in polars, JSON and Markdown carry the report."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from nvfp4_tui.cli import main
from nvfp4_tui.output.export import csv_frame, export_snapshot
from nvfp4_tui.output.report import REPORT_FORMATS
from nvfp4_tui.store.manifest import SnapshotError
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.store.schema import TABLES
from tests.support.factories import write_snapshot

from .builders import noisy_run

ROW_KEYS = {
    "endpoint",
    "suite",
    "concurrency",
    "n",
    "quality_mean",
    "e2e_tps_mean",
    "decode_tps_pooled",
    "decode_tps_p50",
    "decode_tps_mean",
    "ttft_p50_s",
    "throughput_tps",
    "errors",
    "suspect",
    "rate_rps",  # open loop: the phase's planned rate; null for a closed loop
    "load",  # "c=4" or "2 req/s"
    "score",  # which score quality_mean is: "verified", else "heuristic" for a run without
    "quality_n",
    "quality_ci95_low",  # Wilson: inside [0, 1]
    "quality_ci95_high",
    "quality_heuristic_mean",
    "quality_heuristic_n",
    "quality_verified_mean",
    "quality_verified_n",
    "quality_judge_mean",
    "quality_judge_n",
    "tokens_out_mean",
    "full_load_share",  # closed loop: share of the phases' time with N in flight
    "steady",  # false: the level never held its concurrency long enough
    "timing_doubt_s",  # how late the worst phase's timings may read, when over the threshold
    "incomplete",
}


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    return write_snapshot(tmp_path, "run", noisy_run("run", seed=3, n=6))


def test_parquet_tables_equal_the_snapshot(snapshot: Path, tmp_path: Path) -> None:
    out = tmp_path / "parquet"
    written = export_snapshot(snapshot, "parquet", out)
    assert sorted(p.name for p in written) == sorted(f"{t}.parquet" for t in TABLES)
    source = open_snapshot(snapshot)
    for table in TABLES:
        exported = pl.read_parquet(out / f"{table}.parquet")
        assert_frame_equal(exported, source.table(table))
    assert exported.schema["ts"] == pl.Datetime("us", "UTC")


def test_csv_tables_open_in_polars(snapshot: Path, tmp_path: Path) -> None:
    out = tmp_path / "csv"
    export_snapshot(snapshot, "csv", out)
    source = open_snapshot(snapshot)
    requests = pl.read_csv(out / "requests.csv", try_parse_dates=True)
    expected = source.requests()
    assert requests.columns == expected.columns
    assert requests.height == expected.height
    assert requests.get_column("decode_tps").to_list() == pytest.approx(
        expected.get_column("decode_tps").to_list()
    )
    assert requests.get_column("ts").dtype == pl.Datetime("us", "UTC")
    events = pl.read_csv(out / "events.csv")
    assert (
        events.get_column("type").to_list() == source.table("events").get_column("type").to_list()
    )


def test_json_and_markdown_carry_the_report(snapshot: Path, tmp_path: Path) -> None:
    [path] = export_snapshot(snapshot, "json", tmp_path / "out" / "report.json")
    body = json.loads(path.read_text())
    assert body["run_id"] == "run" and body["status"] == "complete"
    assert len(body["leaderboard"]) == 9
    assert all(set(row) == ROW_KEYS for row in body["leaderboard"])
    assert body["tables"][0]["title"].startswith("Quality")
    [md] = export_snapshot(snapshot, "markdown", tmp_path / "report.md")
    text = md.read_text()
    assert text.startswith("# run\n")
    assert (
        "### Quality (heuristic score, mean per suite, concurrency 1)" in text
        and "| suite | Alpha | Beta | Gamma |" in text
    )


def test_export_errors_are_one_line(snapshot: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(SnapshotError, match="not a directory"):
        export_snapshot(snapshot, "csv", tmp_path / "file")
    with pytest.raises(SnapshotError, match="a directory"):
        export_snapshot(snapshot, "json", tmp_path)
    assert main(["export", str(tmp_path / "nope"), "--format", "csv", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a snapshot directory" in err


def test_report_formats(snapshot: Path, capsys) -> None:
    assert REPORT_FORMATS == ("text", "json", "markdown")
    assert main(["report", str(snapshot), "--format", "json"]) == 0
    every_row = json.loads(capsys.readouterr().out)
    rows = [row for row in every_row if "kind" not in row]  # the leaderboard's
    assert [row["endpoint"] for row in rows[:3]] == ["a", "a", "a"]
    assert [row["suite"] for row in rows[:3]] == ["english", "math", "coding"]
    assert all(set(row) == ROW_KEYS for row in rows)
    assert {row["kind"] for row in every_row if "kind" in row} == {"metric_stats"}
    assert main(["report", str(snapshot)]) == 0
    text = capsys.readouterr().out
    assert "Leaderboard" in text and "Aggregate throughput vs concurrency" in text
    assert "\x1b[" not in text  # readable in a CI log


def test_a_csv_text_cell_that_starts_a_formula_opens_as_text(tmp_path: Path) -> None:
    hostile = ['=HYPERLINK("http://x","y")', "@SUM(1)", "\t=1+1", "-2+3", "-3.5", "plain"]
    frame = pl.DataFrame({"label": hostile, "tps": [-1.5] * len(hostile)})
    (tmp_path / "t.csv").write_text(csv_frame(frame).write_csv())
    back = pl.read_csv(tmp_path / "t.csv")
    assert back.get_column("label").to_list() == [
        '\'=HYPERLINK("http://x","y")',
        "'@SUM(1)",
        "'\t=1+1",
        "'-2+3",
        "-3.5",
        "plain",
    ]
    assert back.get_column("tps").to_list() == [-1.5] * len(hostile)

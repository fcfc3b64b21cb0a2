"""One truth for every figure: a snapshot replayed through the live path (events -> FleetState)
shows, cell for cell, the leaderboard that ``report --format json`` prints for it.

Both read ``nvfp4_tui.core.figures``; what this checks is everything around it: the events a replay
builds from the Parquet tables, the load levels and rates, which rows count as errors or
suspects, the default score, the order of the rows.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest

from nvfp4_tui.core.state import FleetState
from nvfp4_tui.output.compare import compare_snapshots
from nvfp4_tui.output.report import render_snapshot
from nvfp4_tui.sources.base import ResetBatch
from nvfp4_tui.sources.replay import ReplaySource
from nvfp4_tui.store.legacy import import_legacy
from nvfp4_tui.store.reader import open_snapshot

from .builders import legacy_file

SAMPLE = Path(__file__).resolve().parents[2] / "snapshots" / "sample-demo"


def _rounded(value: Any) -> Any:
    # Sums taken in another order differ in the last bits; 10 significant digits do not.
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.10g}")
    return value


def _cells(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: _rounded(value) for key, value in row.items()} for row in rows]


async def _replayed(snapshot: Path) -> FleetState:
    state = FleetState()
    source = ReplaySource(open_snapshot(snapshot), speed=None, hold_at_end=False)
    async with asyncio.timeout(60):
        async for batch in source.batches():
            if isinstance(batch, ResetBatch):
                state = FleetState()
            state.apply_all(batch)
    return state


def live_cells(state: FleetState) -> list[dict[str, Any]]:
    board = state.board()
    score = board.shown_score()
    return _cells([row.json(score) for row in board.rows])


def report_cells(snapshot: Path) -> list[dict[str, Any]]:
    rows = json.loads(render_snapshot(open_snapshot(snapshot), "json"))
    return _cells([row for row in rows if "kind" not in row])


def assert_one_truth(snapshot: Path) -> None:
    state = asyncio.run(_replayed(snapshot))
    live, report = live_cells(state), report_cells(snapshot)
    assert live, "no leaderboard cells"
    assert [(r["endpoint"], r["suite"], r["load"]) for r in live] == [
        (r["endpoint"], r["suite"], r["load"]) for r in report
    ]
    for mine, theirs in zip(live, report, strict=True):
        assert mine == theirs


def test_the_shipped_sample_replays_to_its_report() -> None:
    assert_one_truth(SAMPLE)
    cells = report_cells(SAMPLE)
    assert {row["score"] for row in cells} == {"verified"}
    assert {row["load"] for row in cells} == {"c=1", "c=4"}


def test_an_imported_legacy_run_replays_to_its_report(tmp_path: Path) -> None:
    # Suspect rows (the seed's silent HTTP failures) are neither errors nor scores in both.
    path = tmp_path / "benchmark.json"
    legacy_file(path)
    snapshot = import_legacy(path, tmp_path / "seed")
    assert_one_truth(snapshot)
    cells = report_cells(snapshot)
    assert {row["score"] for row in cells} == {"heuristic"}
    assert any(row["suspect"] for row in cells)
    # The panes' and the header's error counts are the report's too.
    state = asyncio.run(_replayed(snapshot))
    assert state.errors == sum(row["errors"] for row in cells)
    suspects = sum(e.requests_suspect for e in state.endpoints.values())
    assert suspects == sum(row["suspect"] for row in cells)


def test_compare_summarises_each_cell_as_the_leaderboard_does() -> None:
    # compare keeps per-request samples for its tests; its summaries must still be the
    # leaderboard's figures (the same rows counted, warm-up and cool-down left out of timings).
    snapshot = open_snapshot(SAMPLE)
    comparison = compare_snapshots(snapshot, snapshot)
    cells = {(r["endpoint"], r["suite"], r["load"]): r for r in report_cells(SAMPLE)}
    assert len(comparison.cells) == len(cells)
    for cell in comparison.cells:
        row = cells[(cell.endpoint_a, cell.suite, cell.load.label)]
        summaries = {change.metric.name: change.a for change in cell.changes}
        assert summaries["quality"] == pytest.approx(row["quality_mean"])
        assert summaries["decode_tps"] == pytest.approx(row["decode_tps_mean"])
        assert summaries["ttft_p50_s"] == pytest.approx(row["ttft_p50_s"])

"""Open-loop phases at two rates are two load levels everywhere: the live state, the tables the
UI reads, the headless progress lines, the text report and `report --format json`. Their
concurrency is 0 (no cap), so grouping by concurrency alone would fold them into one "c=0"."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.core.events import Event, PhaseFinished, PhasePlan, RequestFinished, RunStarted
from nvfp4_tui.core.figures.board import quality_table, speed_rows
from nvfp4_tui.core.figures.scores import HEURISTIC
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.launch.run import PhasePrinter
from nvfp4_tui.output.report import render_snapshot, snapshot_board
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.store.writer import SnapshotWriter
from nvfp4_tui.tui.readouts import load_curves
from tests.load.records import RATE_REQUESTS, leaderboard_json_keys, rate_run
from tests.support.digest import digest
from tests.support.factories import T0, endpoint_info, request, write_snapshot

LEADERBOARD_KEYS = leaderboard_json_keys()
ONE, TWO = Load("rate", 1.0), Load("rate", 2.0)


def record(events: list[Event], root: Path) -> Path:
    writer = SnapshotWriter(root, "rates", {"profile": {"name": "rates"}})
    writer.open()
    for event in events:
        writer.add(event)
    writer.close("complete")
    return writer.path


def test_state_keeps_each_rate_apart() -> None:
    state = FleetState()
    state.apply_all(rate_run())
    a = state.endpoints["a"]
    rows = a.leaderboard()
    assert [(r.concurrency, r.rate_rps, r.load.label) for r in rows] == [
        (0, 1.0, "1 req/s"),
        (0, 2.0, "2 req/s"),
    ]
    assert [r.requests for r in rows] == [RATE_REQUESTS, RATE_REQUESTS]
    assert [r.score("score_heuristic").mean for r in rows] == pytest.approx([0.9, 0.8])
    assert [r.throughput_tps for r in rows] == pytest.approx([120 / 4.5, 120 / 3.0])
    by_load = a.throughput_by_load()
    assert [(r.load, r.phases, r.output_tokens) for r in by_load] == [(ONE, 1, 120), (TWO, 1, 120)]
    endpoint = digest(state)["endpoints"][0]
    assert [row["load"] for row in endpoint["throughput"]] == ["1 req/s", "2 req/s"]
    assert [row["rate_rps"] for row in endpoint["leaderboard"]] == [1.0, 2.0]


def test_ui_tables_read_at_the_lowest_rate() -> None:
    state = FleetState()
    state.apply_all(rate_run())
    assert state.board().base_load == ONE
    table = quality_table(state.board(), HEURISTIC)
    assert table.load == ONE
    a, b = table.cell("essay", "a"), table.cell("essay", "b")
    assert a is not None and b is not None
    assert (a.mean, b.mean) == pytest.approx((0.9, 0.6))
    assert table.best == {"essay": frozenset({"a"})}
    rows, _ = speed_rows(state.board())
    assert [r.decode_tps for r in rows] == pytest.approx([20.0, 20.0])
    curves = {c.endpoint_id: c for c in load_curves(state, state.board())}
    assert [load for load, _ in curves["a"].points] == [ONE, TWO]


def test_progress_lines_name_the_rate() -> None:
    stream = io.StringIO()
    printer = PhasePrinter(stream)
    for event in rate_run():
        printer(event)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 4
    assert [line.split()[:4] for line in lines[:2]] == [
        ["a", "essay", "1", "req/s"],
        ["a", "essay", "2", "req/s"],
    ]
    assert "c0" not in stream.getvalue()


def test_text_report_has_a_row_and_a_column_per_rate(tmp_path: Path) -> None:
    text = render_snapshot(open_snapshot(record(rate_run(), tmp_path)))
    assert "Quality (heuristic score, mean per suite, 1 req/s)" in text
    assert "Speed (decode pooled over requests, e2e mean per request, 1 req/s)" in text
    throughput = text.split("Aggregate throughput (tok/s")[1].split("\n\n")[0]
    header, _, a_row, b_row = throughput.splitlines()[1:5]
    assert header.split()[1:] == ["1", "req/s", "2", "req/s"]
    assert a_row.split()[1:] == ["26.7", "40.0"] and b_row.split()[1:] == ["26.7", "40.0"]
    board = text.split("Leaderboard\n")[1].splitlines()
    assert [line.split()[2:4] for line in board[2:6]] == [["1", "req/s"], ["2", "req/s"]] * 2
    assert "Aggregate throughput vs request rate" in text
    assert "c=0" not in text


def test_report_json_adds_the_rate_beside_the_concurrency(tmp_path: Path, capsys) -> None:
    snapshot = record(rate_run(), tmp_path)
    assert main(["report", str(snapshot), "--format", "json"]) == 0
    every_row = json.loads(capsys.readouterr().out)
    rows = [r for r in every_row if "kind" not in r]  # the leaderboard's
    assert {r["load"] for r in every_row if r.get("kind") == "metric_stats"} == {
        "1 req/s",
        "2 req/s",
    }
    assert all(set(r) == LEADERBOARD_KEYS for r in rows)
    assert [(r["endpoint"], r["concurrency"], r["rate_rps"], r["n"]) for r in rows] == [
        ("a", 0, 1.0, RATE_REQUESTS),
        ("a", 0, 2.0, RATE_REQUESTS),
        ("b", 0, 1.0, RATE_REQUESTS),
        ("b", 0, 2.0, RATE_REQUESTS),
    ]
    assert [r["throughput_tps"] for r in rows[:2]] == pytest.approx([120 / 4.5, 120 / 3.0])


def test_two_runs_in_one_snapshot_keep_their_own_load_levels(tmp_path: Path) -> None:
    """Phase indexes start over in a second run: its closed-loop phase 0 is not the first
    run's 2 req/s phase 0, and the first run's rows keep their rate."""
    info = endpoint_info("a", 0)

    def answered(t: float, concurrency: int, index: int) -> RequestFinished:
        return request(
            t=t,
            concurrency=concurrency,
            request_index=index,
            ttft_s=0.1,
            e2e_s=1.0,
            tokens_out=100,
            decode_tps=100.0,
            e2e_tps=100.0,
        )

    t1 = T0 + 100
    open_plan = PhasePlan("a", "english", 0, 3, rate_rps=2.0, arrivals="constant")
    events: list[Event] = [
        RunStarted(T0, "r1", "r1", (info,), (open_plan,)),
        *(answered(T0 + i, 0, i) for i in range(3)),
        PhaseFinished(T0 + 5, "a", "english", 0, 0, 3, 0, 300, 5.0),
        RunStarted(t1, "r2", "r2", (info,), (PhasePlan("a", "english", 1, 3),)),
        *(answered(t1 + i, 1, i) for i in range(3)),
        PhaseFinished(t1 + 5, "a", "english", 1, 0, 3, 0, 300, 5.0),
    ]
    rows = snapshot_board(open_snapshot(write_snapshot(tmp_path, "two-runs", events))).rows
    assert sorted((r.load.label, r.n) for r in rows) == [("2 req/s", 3), ("c=1", 3)]

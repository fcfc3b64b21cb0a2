"""Snapshot SVGs of every screen, drawn from the sample events with a frozen clock.

Update with ``pytest tests/tui --snapshot-update``, then look at the SVGs before accepting them.
"""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from nvfp4_tui.output.compare import compare_snapshots
from nvfp4_tui.sources.replay import ReplaySource
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.compare_app import CompareApp
from tests.support.factories import write_snapshot
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import sample_app, settle
from tests.support.sample_events import RUN_ID, sample_events

from .runs import compare_run, settle_replay
from .test_compare_screen import SHIFT as COMPARE_SHIFT


def _settled(source: FixedSource):
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot, source)

    return run_before


def test_fleet_120x36(snap_compare) -> None:
    """Seven panes, fully visible; the run partway, statuses and in-flight counts in motion."""
    app, source = sample_app()
    assert snap_compare(app, terminal_size=(120, 36), run_before=_settled(source))


def test_fleet_80x24(snap_compare) -> None:
    """A small terminal: two columns, the grid scrolls, every line still legible."""
    app, source = sample_app()
    assert snap_compare(app, terminal_size=(80, 24), run_before=_settled(source))


def test_detail_120x36(snap_compare) -> None:
    """GPU 4 (a reasoning model): charts, the server's TTFT far below the client's, recent
    requests, the latest answer, reasoning folded."""
    app, source = sample_app()
    assert snap_compare(
        app, press=["down", "down", "enter"], terminal_size=(120, 36), run_before=_settled(source)
    )


def test_leaderboard_120x36(snap_compare) -> None:
    """The complete run: quality with CIs, speed against each class, scaling, Pareto, routes."""
    app, source = sample_app(complete=True)
    assert snap_compare(app, press=["l"], terminal_size=(120, 36), run_before=_settled(source))


def test_help_120x36(snap_compare) -> None:
    """Every key of every screen, each with its binding id."""
    app, source = sample_app()
    assert snap_compare(
        app, press=["question_mark"], terminal_size=(120, 36), run_before=_settled(source)
    )


def test_fleet_replay_120x36(snap_compare, tmp_path: Path) -> None:
    """A replay paused 1:50 into the recorded sample run at x5: the timeline replaces the bar."""
    path = write_snapshot(tmp_path, RUN_ID, sample_events(None))
    source = ReplaySource(path, speed=5)
    source.control("pause")
    source.control("seek:110")
    app = FleetApp(source, clock=source.clock, title=f"replay {RUN_ID}")

    async def run_before(pilot: Pilot) -> None:
        await settle_replay(pilot, source)

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_compare_120x36(snap_compare, tmp_path: Path) -> None:
    """Two runs compared: three significant changes, two better and one worse, n per cell."""
    a = write_snapshot(tmp_path, "run-a", compare_run("run-a", seed=1, shift={}))
    b = write_snapshot(tmp_path, "run-b", compare_run("run-b", seed=2, shift=COMPARE_SHIFT))
    app = CompareApp(compare_snapshots(open_snapshot(a), open_snapshot(b)))
    assert snap_compare(app, terminal_size=(120, 36))


def test_detail_no_server_metrics_120x36(snap_compare) -> None:
    """GPU 6 serves no /metrics: "no server metrics" where the server's charts would be."""
    app, source = sample_app()
    assert snap_compare(
        app,
        press=["down", "down", "right", "right", "enter"],
        terminal_size=(120, 36),
        run_before=_settled(source),
    )

"""Snapshot SVGs of every screen, drawn from the sample events with a frozen clock.

Update with ``pytest tests/tui --snapshot-update``, then look at the SVGs before accepting them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.pilot import Pilot

from nvfp4_tui.output.compare import compare_snapshots
from nvfp4_tui.sources.replay import ReplaySource
from nvfp4_tui.store.legacy import import_legacy
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.compare_app import CompareApp
from nvfp4_tui.tui.screens.fleet import FleetScreen
from tests.support.factories import write_snapshot
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import sample_app, settle
from tests.support.sample_events import RUN_ID, large_fleet, sample_events

from ..replay.builders import legacy_file
from .runs import compare_run, settle_replay
from .test_compare_screen import SHIFT as COMPARE_SHIFT

SIZES = [(80, 24), (120, 36), (160, 48)]
SIZE_IDS = [f"{w}x{h}" for w, h in SIZES]
sizes = pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
VIEW_KEY_PRESSES = 3  # "c" goes round the three views


def _settled(source: FixedSource, view: str | None = None):
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot, source)
        if view is None:
            return
        screen = pilot.app.screen
        assert isinstance(screen, FleetScreen)
        for _ in range(VIEW_KEY_PRESSES):
            if screen.view == view:
                break
            await pilot.press("c")
        assert screen.view == view
        await settle(pilot, source)

    return run_before


@sizes
def test_grid(snap_compare, size: tuple[int, int]) -> None:
    """Seven panes and the fleet's totals, the run partway: at 80×24 the grid scrolls (the
    compact view is the default there)."""
    app, source = sample_app()
    assert snap_compare(app, terminal_size=size, run_before=_settled(source, "grid"))


@sizes
def test_compact(snap_compare, size: tuple[int, int]) -> None:
    """One line per endpoint: every GPU on screen, even at 80×24."""
    app, source = sample_app()
    assert snap_compare(app, terminal_size=size, run_before=_settled(source, "compact"))


@sizes
def test_table(snap_compare, size: tuple[int, int]) -> None:
    """Sixteen endpoints on two nodes: the table view, grouped by node with node totals."""
    app, source = sample_app(fleet=large_fleet(16, 2))
    assert snap_compare(app, terminal_size=size, run_before=_settled(source, "table"))


@sizes
def test_detail(snap_compare, size: tuple[int, int]) -> None:
    """GPU 4 (a reasoning model): charts, the server's TTFT far below the client's, recent
    requests, the latest answer, reasoning folded; at 80×24 the first row of charts only."""
    app, source = sample_app()

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot, source)
        app.open_detail("dense_qwopus")
        await settle(pilot, source)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@sizes
def test_statistics(snap_compare, size: tuple[int, int]) -> None:
    """GPU 4's every statistic per level, the run complete: at 80×24 without p90."""
    app, source = sample_app(complete=True)

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot, source)
        app.open_detail("dense_qwopus")
        await settle(pilot, source)
        await pilot.press("s")
        await settle(pilot, source)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@sizes
def test_leaderboard(snap_compare, size: tuple[int, int]) -> None:
    """The complete run: quality with CIs, speed against each class, scaling, Pareto, routes."""
    app, source = sample_app(complete=True)
    assert snap_compare(app, press=["l"], terminal_size=size, run_before=_settled(source))


@sizes
def test_help(snap_compare, size: tuple[int, int]) -> None:
    """Every key of every screen once, by its name, and what the abbreviations mean."""
    app, source = sample_app()
    assert snap_compare(
        app, press=["question_mark"], terminal_size=size, run_before=_settled(source)
    )


@sizes
def test_replay(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:
    """A replay paused 1:50 into the recorded sample run at x5: the timeline replaces the bar."""
    path = write_snapshot(tmp_path, RUN_ID, sample_events(None))
    source = ReplaySource(path, speed=5)
    source.control("pause")
    source.control("seek:110")
    app = FleetApp(source, clock=source.clock, title=f"replay {RUN_ID}")

    async def run_before(pilot: Pilot) -> None:
        await settle_replay(pilot, source)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@sizes
def test_compare(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:
    """Two runs compared: three significant changes, two better and one worse, n per cell."""
    a = write_snapshot(tmp_path, "run-a", compare_run("run-a", seed=1, shift={}))
    b = write_snapshot(tmp_path, "run-b", compare_run("run-b", seed=2, shift=COMPARE_SHIFT))
    app = CompareApp(compare_snapshots(open_snapshot(a), open_snapshot(b)))
    assert snap_compare(app, terminal_size=size)


@sizes
def test_compare_renamed_imports(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:
    """Two imports of the seed script's output, B's models renamed to long labels: B's names
    cut at a word and marked †, the script's levels c=1⁺ and c=4⁺ with what was in flight
    under the tables, VRAM's last sample only below 160 columns, and the table's rows in view
    at 80×24 (the figures and the scrolling notes give way)."""
    legacy_file(tmp_path / "a.json", seed=5)
    body = legacy_file(tmp_path / "b.json", seed=6)
    for model in body["metadata"]["models"].values():
        model["name"] += " 35B Instruct (NVFP4, official weights)"
    (tmp_path / "b.json").write_text(json.dumps(body), encoding="utf-8")
    a = import_legacy(tmp_path / "a.json", tmp_path / "a")
    b = import_legacy(tmp_path / "b.json", tmp_path / "b")
    app = CompareApp(compare_snapshots(open_snapshot(a), open_snapshot(b)))
    assert snap_compare(app, terminal_size=size)


def test_detail_no_server_metrics_120x36(snap_compare) -> None:
    """GPU 6 serves no /metrics: "no server metrics" where the server's charts would be."""
    app, source = sample_app()
    assert snap_compare(
        app,
        press=["down", "down", "right", "right", "enter"],
        terminal_size=(120, 36),
        run_before=_settled(source),
    )

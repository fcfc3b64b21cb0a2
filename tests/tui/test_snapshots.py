"""Snapshot SVGs of every screen, drawn from the sample events with a frozen clock.

Update with ``pytest tests/tui --snapshot-update``, then look at the SVGs before accepting them.
"""

from __future__ import annotations

from textual.pilot import Pilot

from nvfp4_tui.sources.fixed import FixedSource
from nvfp4_tui.tui.sample_app import sample_app, settle


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
    """GPU 4 (a reasoning model): charts, recent requests, the latest answer, reasoning folded."""
    app, source = sample_app()
    assert snap_compare(
        app, press=["down", "down", "enter"], terminal_size=(120, 36), run_before=_settled(source)
    )


def test_leaderboard_120x36(snap_compare) -> None:
    """The complete run: quality with CIs, speed against each class, scaling, Pareto, routes."""
    app, source = sample_app(complete=True)
    assert snap_compare(app, press=["l"], terminal_size=(120, 36), run_before=_settled(source))


def test_help_120x36(snap_compare) -> None:
    """Every key, with the binding ids a keymap can remap."""
    app, source = sample_app()
    assert snap_compare(
        app, press=["question_mark"], terminal_size=(120, 36), run_before=_settled(source)
    )

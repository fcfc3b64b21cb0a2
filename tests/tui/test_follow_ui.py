"""Following a run another process writes: "following", STALE when quiet, the run's end, and a
quit that leaves the run alone."""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.pilot import Pilot

from nvfp4_tui.core.events import TokenProgress
from nvfp4_tui.launch import ui as launch
from nvfp4_tui.sources.follow import FollowSource
from nvfp4_tui.sources.replay import timeline_t
from nvfp4_tui.store.manifest import read_manifest
from nvfp4_tui.store.writer import SnapshotWriter
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.screens.confirm_quit import ConfirmQuitScreen
from nvfp4_tui.tui.source_status import FOLLOW_STALE_S
from nvfp4_tui.tui.widgets.run_header import RunHeader
from tests.support.factories import start_snapshot
from tests.support.sample_events import PARTWAY_S, RUN_ID, START_T, sample_events

from .runs import POLL_S, POLL_TRIES

POLL_INTERVAL_S = 0.05


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _summary(app: FleetApp) -> str:
    return str(app.screen.query_one(RunHeader).query_one(".summary").render())


async def _until(pilot: Pilot, condition) -> None:
    for _ in range(POLL_TRIES):
        if condition():
            break
        await pilot.pause(POLL_S)
    pilot.app.redraw()  # type: ignore[attr-defined]
    await pilot.pause()


def _partway(tmp_path: Path) -> tuple[SnapshotWriter, list]:
    """The sample run written up to PARTWAY_S, its writer still open; and the events left."""
    persisted = [e for e in sample_events(None) if not isinstance(e, TokenProgress)]
    # The list is in arrival order: a request arrives when it ends, after its ``t``.
    cut = next(i for i, e in enumerate(persisted) if timeline_t(e) > START_T + PARTWAY_S)
    writer = start_snapshot(tmp_path, RUN_ID, persisted[:cut])
    return writer, persisted[cut:]


async def test_following_then_stale_then_quit_leaves_the_run_running(tmp_path: Path) -> None:
    writer, _ = _partway(tmp_path)
    clock = FakeClock()
    source = FollowSource(writer.path, poll_interval_s=POLL_INTERVAL_S, clock=clock)
    app = FleetApp(source, clock=lambda: START_T + PARTWAY_S)
    async with app.run_test(size=(120, 36)) as pilot:
        await _until(pilot, lambda: source.events_delivered > 0)
        assert "◉ following" in _summary(app) and "STALE" not in _summary(app)
        assert "ETA" in _summary(app)
        assert app.state.requests_done > 0
        clock.now += FOLLOW_STALE_S + 5
        await _until(pilot, lambda: "STALE" in _summary(app))
        assert "◉ following STALE 0:15" in _summary(app)
        await pilot.press("q")
        await pilot.pause()
        assert not any(isinstance(s, ConfirmQuitScreen) for s in app.screen_stack)
    assert app.return_code == 0
    assert read_manifest(writer.path)["status"] == "running", "following never stops the run"


async def test_the_run_completing_is_shown_and_announced(tmp_path: Path) -> None:
    writer, rest = _partway(tmp_path)
    source = FollowSource(writer.path, poll_interval_s=POLL_INTERVAL_S)
    app = FleetApp(source, clock=lambda: START_T + PARTWAY_S)
    notes: list[str] = []
    app.notify = lambda message, **_: notes.append(message)  # type: ignore[method-assign]
    async with app.run_test(size=(120, 36)) as pilot:
        await _until(pilot, lambda: source.events_delivered > 0)
        for event in rest:
            writer.add(event)
        writer.close("complete")
        await _until(pilot, lambda: app.source_ended)
        assert source.finished
        assert "✓ complete" in _summary(app)
        assert app.state.requests_done == app.state.total_requests
        assert notes == ["The run completed; its snapshot is final. q quits."]


def test_an_aborted_run_exits_1_through_run_source_ui(tmp_path: Path, monkeypatch) -> None:
    writer, _ = _partway(tmp_path)
    writer.close("aborted")  # no RunFinished event: the manifest alone says so
    source = FollowSource(writer.path, poll_interval_s=POLL_INTERVAL_S)
    seen: list[str] = []

    async def watch_then_quit(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, FleetApp)
        await _until(pilot, lambda: app.source_ended)
        seen.append(_summary(app))
        await pilot.press("q")

    async def headless(self: App, **_: object) -> None:
        await App.run_async(self, headless=True, size=(120, 36), auto_pilot=watch_then_quit)

    monkeypatch.setattr(FleetApp, "run_async", headless)
    assert launch.run_source_ui(source, f"follow {RUN_ID}") == 1
    assert "✗ aborted" in seen[0]

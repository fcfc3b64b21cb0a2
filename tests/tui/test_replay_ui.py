"""A recorded run replayed in the app: the timeline in the header, and every replay key."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4_tui.core.state import FleetState
from nvfp4_tui.sources.replay import ReplaySource, timeline_t
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.tui import app as app_module
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.commands import FleetCommands
from nvfp4_tui.tui.screens.help import KEY_W, HelpScreen
from nvfp4_tui.tui.widgets.gpu_pane import GpuPane
from nvfp4_tui.tui.widgets.meter import Meter
from nvfp4_tui.tui.widgets.run_header import RunHeader
from tests.support.digest import digest
from tests.support.factories import write_snapshot
from tests.support.sample_app import press_for, sample_app, settle
from tests.support.sample_events import RUN_ID, sample_events

from .runs import run_command, settle_replay

START_S = 110


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole sample run, recorded once for every test of this module."""
    root = tmp_path_factory.mktemp("snapshots")
    return write_snapshot(root, RUN_ID, sample_events(None))


def paused_replay(path: Path, at_s: float = START_S, speed: float = 5) -> ReplaySource:
    """A replay at ``speed``, paused ``at_s`` seconds in: its position holds still for the test."""
    source = ReplaySource(path, speed=speed)
    source.control("pause")
    source.control(f"seek:{at_s}")
    return source


def replay_app(source: ReplaySource) -> FleetApp:
    return FleetApp(source, clock=source.clock, title=f"replay {RUN_ID}")


def folded_until(path: Path, position_t: float) -> FleetState:
    """A fresh state folded from every recorded event on the timeline up to ``position_t``."""
    events = sorted(open_snapshot(path).events(), key=timeline_t)
    state = FleetState()
    state.apply_all(e for e in events if timeline_t(e) <= position_t)
    return state


def _summary(app: FleetApp) -> str:
    return str(app.screen.query_one(RunHeader).query_one(".summary").render())


def _timeline(app: FleetApp) -> tuple[tuple[str, str], ...]:
    return app.screen.query_one(RunHeader).query_one(".progress", Meter)._wordings


async def test_header_shows_the_timeline_speed_and_pause(recorded: Path) -> None:
    source = paused_replay(recorded)
    app = replay_app(source)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_replay(pilot, source)
        assert app.title == f"replay {RUN_ID}"
        assert "replay paused" in _summary(app)
        expected = folded_until(recorded, source.position_t)
        assert f"requests {expected.requests_done}/{expected.total_requests}" in _summary(app)
        assert _timeline(app) == (("1:50 / 6:11", "‖ x5"),)
        assert len(app.screen.query(GpuPane)) == 7


async def test_space_pauses_and_plus_minus_step_the_speed(recorded: Path) -> None:
    source = paused_replay(recorded)
    app = replay_app(source)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_replay(pilot, source)
        await pilot.press("space")
        assert not source.paused
        assert "▶ replay" in _summary(app)
        await pilot.press("space")
        assert source.paused
        await pilot.press("plus")
        assert source.speed_label == "x10"
        await pilot.press("equals_sign")  # "+" without shift
        assert source.speed_label == "x60"
        await pilot.press("minus", "minus", "minus")
        assert source.speed_label == "x2"
        await pilot.pause()
        assert _timeline(app)[0][1] == "‖ x2"


async def test_right_plays_on_and_left_rebuilds_the_state_from_the_start(recorded: Path) -> None:
    source = paused_replay(recorded)
    app = replay_app(source)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_replay(pilot, source)
        assert app.generation == 0
        await pilot.press("right")
        await settle_replay(pilot, source)
        assert source.position_s == pytest.approx(START_S + 10)
        assert app.generation == 0, "forward: the new events are folded into the same state"
        assert digest(app.state) == digest(folded_until(recorded, source.position_t))
        await pilot.press("left", "left")
        await settle_replay(pilot, source)
        assert source.position_s == pytest.approx(START_S - 10)
        assert app.generation >= 1, "backwards: a fresh state"
        assert digest(app.state) == digest(folded_until(recorded, source.position_t))
        assert _timeline(app)[0][0] == "1:40 / 6:11"
        requests = app.state.requests_done
        assert f"requests {requests}/" in _summary(app)
        # The panes show the rebuilt state, not what they held before the seek.
        pane = app.screen.query_one("#pane-moe_qwen36", GpuPane)
        endpoint = app.state.endpoints["moe_qwen36"]
        assert pane.readout is not None and pane.readout.errors.count == endpoint.requests_error
        assert [q.n for q in pane.readout.quality] == [
            endpoint.quality_stats(s, app.score_name).n for s in endpoint.suites()
        ]


async def test_a_large_rebuild_runs_off_the_event_loop(recorded: Path, monkeypatch) -> None:
    monkeypatch.setattr(app_module, "INLINE_REBUILD_EVENTS", 10)
    source = paused_replay(recorded)
    app = replay_app(source)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_replay(pilot, source)
        before = app.generation  # the first read may already be a large batch, off the loop too
        await pilot.press("left")
        for _ in range(100):
            await settle_replay(pilot, source)
            if app.generation > before:
                break
        assert app.generation == before + 1
        assert digest(app.state) == digest(folded_until(recorded, source.position_t))


async def test_a_large_jump_ahead_is_folded_off_the_event_loop(recorded: Path, monkeypatch) -> None:
    monkeypatch.setattr(app_module, "INLINE_REBUILD_EVENTS", 10)
    source = paused_replay(recorded)
    app = replay_app(source)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_replay(pilot, source)
        before, old_state = app.generation, app.state
        await pilot.press("end")
        for _ in range(100):
            await settle_replay(pilot, source)
            if app.generation > before:
                break
        assert app.state is not old_state  # folded into a copy, then swapped in
        assert digest(app.state) == digest(folded_until(recorded, source.position_t))


async def test_home_and_end(recorded: Path) -> None:
    source = paused_replay(recorded)
    app = replay_app(source)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_replay(pilot, source)
        await pilot.press("end")
        await settle_replay(pilot, source)
        assert source.at_end
        assert "✓ complete" in _summary(app)
        assert _timeline(app) == (("6:11 / 6:11", "■ x5"),)
        assert app.state.requests_done == app.state.total_requests
        await pilot.press("home")
        await settle_replay(pilot, source)
        assert source.position_s == 0
        assert app.state.requests_done == 0 and app.state.run_name == "demo-7gpu"
        assert "replay paused" in _summary(app)


async def test_home_and_end_seek_in_the_compact_view_too(recorded: Path) -> None:
    # 80x24 opens the compact view, a table in focus that would scroll on Home and End itself.
    source = paused_replay(recorded)
    app = replay_app(source)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle_replay(pilot, source)
        await pilot.press("end")
        await settle_replay(pilot, source)
        assert source.at_end
        await pilot.press("home")
        await settle_replay(pilot, source)
        assert source.position_s == 0


async def test_left_and_right_seek_instead_of_moving_between_panes(recorded: Path) -> None:
    source = paused_replay(recorded)
    app = replay_app(source)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_replay(pilot, source)
        await pilot.press("down")  # focuses the first pane
        first = app.screen.query_one("#pane-moe_qwen36")
        assert app.focused is first
        await pilot.press("right")
        assert app.focused is first
        assert source.position_s == pytest.approx(START_S + 10)
        await pilot.press("down")
        assert app.focused is app.screen.query_one("#pane-dense_qwopus")


async def test_replay_keys_in_the_help_and_the_palette(recorded: Path) -> None:
    source = paused_replay(recorded)
    app = replay_app(source)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_replay(pilot, source)
        names = [hit.text async for hit in FleetCommands(app.screen).discover()]
        for name in ("Resume replay", "Replay faster", "Replay slower", "Back 10 s"):
            assert name in names
        for name in ("Forward 10 s", "Replay from the start", "Replay to the end"):
            assert name in names
        assert "Pause run" not in names, "p pauses a live run only"
        await pilot.press("p")
        assert source.paused, "p is not a replay key"
        await press_for(pilot, "question_mark", screen=HelpScreen)
        text = str(app.screen.query_one("#keys").render())
        assert "Replay\n" in text and "(replays only)" not in text
        for key, what in (("space", "Play/pause"), ("+", "Faster"), ("-", "Slower")):
            assert f"  {key}".ljust(KEY_W + 2) + what in text
        for key, what in (("←", "Back 10 s"), ("→", "Forward 10 s"), ("home", "To the start")):
            assert f"  {key}".ljust(KEY_W + 2) + what in text
        assert f"  {'end'}".ljust(KEY_W + 2) + "To the end" in text
        # Run through the palette: the command reaches the source.
        await pilot.press("escape")
        await pilot.pause()
        await run_command(pilot, "replay faster", "Replay faster")
        assert source.speed_label == "x10"


async def test_replay_keys_do_nothing_in_a_live_run() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("space", "plus", "minus", "home", "end")
        assert source.commands == []
        names = [hit.text async for hit in FleetCommands(app.screen).discover()]
        assert not any("eplay" in name for name in names)
        await pilot.press("question_mark")
        await pilot.pause()
        assert "Replay (replays only)" in str(app.screen.query_one("#keys").render())

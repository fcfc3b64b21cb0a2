"""The app driven by the Pilot on the sample events: every key, every screen change, resizes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from textual.containers import Grid
from textual.widgets import DataTable, Static

from nvfp4_tui.core.events import (
    Event,
    PhasePlan,
    PhaseStarted,
    RunStarted,
)
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.commands import FleetCommands
from nvfp4_tui.tui.screens.confirm_quit import ConfirmQuitScreen
from nvfp4_tui.tui.screens.detail import DetailScreen
from nvfp4_tui.tui.screens.fleet import FleetScreen, grid_shape
from nvfp4_tui.tui.screens.help import ABBREVIATIONS, KEY_W, HelpScreen, KeyList
from nvfp4_tui.tui.screens.leaderboard import LeaderboardScreen
from nvfp4_tui.tui.widgets.gpu_pane import GpuPane
from nvfp4_tui.tui.widgets.run_header import RunHeader
from tests.support.factories import endpoint_info, request
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import press_for, sample_app, settle
from tests.support.sample_events import START_T, sample_events

from .runs import run_command

ENDPOINTS = 7


def _panes(app: FleetApp) -> list[GpuPane]:
    return list(app.screen.query(GpuPane))


def _text(widget: Static) -> str:
    return str(widget.render())


async def test_fleet_shows_one_pane_per_endpoint_with_live_numbers() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        assert isinstance(app.screen, FleetScreen)
        panes = _panes(app)
        assert [p.endpoint_id for p in panes] == list(app.state.endpoints)
        header = app.screen.query_one(RunHeader)
        summary = str(header.query_one(".summary").render())
        assert "demo-7gpu" in summary and "live" in summary and "1:50" in summary
        assert "6 errors" in summary
        phases = str(header.query_one(".phases").render())
        assert "GPU0" in phases and "c4" in phases and "c1" in phases
        huihui = app.screen.query_one("#pane-moe_huihui", GpuPane)
        assert "http_4xx" in str(huihui.query_one(".errors").render())
        for pane in panes:
            assert pane.readout is not None and pane.readout.decode_tps is not None
            assert pane.readout.vram.used_mib is not None


async def test_panes_draw_once_mounted_though_nothing_changes_after() -> None:
    # One batch, a source that stays open and a stopped clock: the refresh timer sees no change
    # after the panes are made, so only their mounting can draw them.
    events = sample_events(None)
    source = FixedSource(events, linger=True)
    app = FleetApp(source, clock=lambda: events[-1].t)
    async with app.run_test(size=(120, 36)) as pilot:
        await source.drained.wait()
        while not _panes(app):
            await pilot.pause()
        await app.workers.wait_for_complete([w for w in app.workers if w.group == "panes"])
        await pilot.pause()
        panes = _panes(app)
        assert len(panes) == ENDPOINTS
        assert all(pane.readout is not None for pane in panes)


async def test_all_seven_panes_fit_at_120x36_and_wider() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        for width, height, columns in ((120, 36, 4), (160, 48, 4), (200, 50, 4), (300, 40, 7)):
            await pilot.resize_terminal(width, height)
            await pilot.pause()
            grid = app.screen.query_one("#grid", Grid)
            assert grid.styles.grid_size_columns == columns
            assert grid.virtual_size.height <= grid.size.height, "no scrolling"
            for pane in _panes(app):
                region = pane.region
                assert region.right <= width and region.bottom <= height
                assert pane.size.width >= 26 and pane.size.height >= 15


async def test_small_terminal_shows_every_endpoint_in_the_compact_view() -> None:
    app, source = sample_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, source)
        screen = app.screen
        assert isinstance(screen, FleetScreen) and screen.view == "compact"
        table = screen.query_one("#compact", DataTable)
        assert table.row_count == ENDPOINTS + 1  # and the fleet's totals
        assert table.region.bottom <= 24 and table.virtual_size.height <= table.size.height
        await pilot.resize_terminal(240, 60)
        await pilot.pause()
        assert screen.view == "grid"
        assert screen.query_one("#grid", Grid).styles.grid_size_columns == 4


async def test_c_cycles_compact_table_and_a_scrolling_grid() -> None:
    app, source = sample_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, source)
        screen = app.screen
        assert isinstance(screen, FleetScreen)
        await pilot.press("c")
        await pilot.pause()
        assert screen.view == "table"
        await pilot.press("c")
        await pilot.pause()
        assert screen.view == "grid"
        grid = screen.query_one("#grid", Grid)
        assert grid.styles.grid_size_columns == 2
        assert grid.virtual_size.height > grid.size.height
        assert all(p.size.width >= 26 for p in _panes(app))


def test_grid_shape() -> None:
    # The shape whose panes are best proportioned, of those that fit their width and height.
    assert grid_shape(7, 120, 36, 17) == (4, 2)
    assert grid_shape(7, 160, 48, 17) == (4, 2)
    assert grid_shape(7, 200, 50, 17) == (4, 2)  # not one row of seven narrow walls
    assert grid_shape(7, 240, 60, 17) == (4, 2)
    assert grid_shape(7, 400, 30, 17) == (7, 1)  # two rows would not keep their height
    assert grid_shape(7, 60, 200, 17) == (1, 7)
    # None keeps its height: the fewest rows that keep the width, and the grid scrolls.
    assert grid_shape(7, 80, 24, 17) == (2, 4)
    assert grid_shape(7, 20, 24, 17) == (1, 7)
    assert grid_shape(1, 200, 50, 17) == (1, 1)


async def test_enter_and_escape_open_and_close_the_detail() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("right", "right")  # first press focuses the first pane
        assert app.focused is app.screen.query_one("#pane-moe_redhat")
        await press_for(pilot, "enter", screen=DetailScreen)
        assert app.screen.endpoint_id == "moe_redhat"
        table = app.screen.query_one("#requests", DataTable)
        assert table.row_count > 0
        await press_for(pilot, "escape", screen=FleetScreen)


async def test_click_on_a_pane_opens_its_detail() -> None:
    app, source = sample_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, source)
        await pilot.click("#pane-dense_qwen35")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.endpoint_id == "dense_qwen35"


async def test_arrow_keys_move_between_panes_by_row_and_column() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("down")  # focuses the first pane
        await pilot.press("down")
        assert app.focused is app.screen.query_one("#pane-dense_qwopus")  # 4 columns: index 4
        await pilot.press("right", "up")
        assert app.focused is app.screen.query_one("#pane-moe_redhat")
        await pilot.press("left", "left")  # the first column: left goes no further
        assert app.focused is app.screen.query_one("#pane-moe_qwen36")


async def test_leaderboard_grid_and_back() -> None:
    app, source = sample_app(complete=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await press_for(pilot, "l", screen=LeaderboardScreen)
        quality = app.screen.query_one("#quality", DataTable)
        assert quality.row_count == 6  # one row per suite
        assert len(quality.columns) == 1 + ENDPOINTS
        routes = app.screen.query_one("#routes", DataTable)
        assert routes.row_count == 6
        await press_for(pilot, "g", screen=FleetScreen)
        await press_for(pilot, "l", "escape", screen=FleetScreen)


async def test_g_leaves_a_detail_for_the_grid() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await press_for(pilot, "enter", screen=DetailScreen)
        await pilot.press("l")
        await pilot.pause()
        await press_for(pilot, "g", screen=FleetScreen)


async def test_help_lists_every_key_once_by_its_name_and_every_abbreviation() -> None:
    app, source = sample_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, source)
        await press_for(pilot, "question_mark", screen=HelpScreen)
        lists = list(app.screen.query(KeyList))
        text = "\n".join(str(keys.render()) for keys in lists)
        lines = text.splitlines()
        for key, what in (
            ("q", "Quit"),
            ("p", "Pause/resume"),
            ("l", "Leaderboard"),
            ("?", "Keys"),
            ("enter", "Detail"),
            ("c", "Grid/compact/table"),
            ("s", "Sort table"),
            ("esc / q / ?", "Close"),
        ):
            assert any(line.startswith(f"  {key}".ljust(KEY_W + 2) + what) for line in lines), key
        assert "id " not in text and "question_mark" not in text and "escape" not in text
        assert sum(line.strip().startswith("esc ") and "Back" in line for line in lines) == 1
        for short, _ in ABBREVIATIONS:
            assert f"  {short}" in text
        for abbreviation in ("KV", "TTFT", "ITL", "TPOT", "±", "p50", "SLO", "c=4"):
            assert abbreviation in text
        # A long explanation wraps under its own column, never back to the keys' column.
        width = min(keys.size.width for keys in lists)
        assert all(len(line) <= width for line in lines)
        assert all(line[:1] != " " or line.startswith("  ") for line in lines)
        await press_for(pilot, "escape", screen=FleetScreen)


async def test_p_pauses_and_resumes_the_run() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("p")
        await pilot.pause()
        assert source.commands == ["pause"]
        app.redraw()
        assert "paused" in str(app.screen.query_one(RunHeader).query_one(".summary").render())
        await pilot.press("p")
        await pilot.pause()
        assert source.commands == ["pause", "resume"]


async def test_p_does_nothing_without_a_live_run() -> None:
    app, source = sample_app(complete=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("p")
        await pilot.pause()
        assert source.commands == []


async def test_q_asks_while_the_run_is_going_and_can_be_cancelled() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await press_for(pilot, "q", screen=ConfirmQuitScreen)
        await press_for(pilot, "n", screen=FleetScreen)
        assert not source.closed and app.is_running


async def test_q_then_yes_stops_the_run_and_exits_0() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
    assert source.closed
    assert app.return_code == 0


async def test_q_after_the_run_finished_quits_at_once() -> None:
    app, source = sample_app(complete=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("q")
        await pilot.pause()
    assert source.closed
    assert app.return_code == 0


async def test_command_palette_offers_every_action_and_each_detail() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        provider = FleetCommands(app.screen)
        hits = {hit.text: hit.help async for hit in provider.discover()}
        names = list(hits)
        for name in ("Fleet grid", "Leaderboard", "Pause run", "Keys", "Quit"):
            assert name in names
        # Each action's key, as its binding has it.
        assert hits["Fleet grid"] == "One pane per endpoint (g)"
        assert hits["Keys"] == "Every key binding (?)"
        assert sum(name.startswith("Detail: GPU") for name in names) == ENDPOINTS
        # The fleet screen's own keys too, which README promises are all there.
        assert hits["Grid/compact/table"] == "On this screen (c)"
        assert hits["Sort table"] == "On this screen (s)"
        view = app.screen.view
        await run_command(pilot, "compact", "Grid/compact/table")
        assert app.screen.view != view
        await run_command(pilot, "leaderboard", "Leaderboard")
        assert isinstance(app.screen, LeaderboardScreen)


async def test_the_palette_has_one_quit_and_one_keys() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        ours = [hit.text async for hit in FleetCommands(app.screen).discover()]
        system = [command.title for command in app.get_system_commands(app.screen)]
        every = ours + system
        assert every.count("Quit") == 1 and every.count("Keys") == 1
        assert "Theme" in system, "Textual's other commands stay"


async def test_model_output_is_shown_as_plain_text() -> None:
    info = endpoint_info("e", 0, model_class="dense")
    answer = "[bold]not markup[/bold] \x1b[31mred\x1b[0m\x1b]0;title\x07 done"
    events: list[Event] = [
        RunStarted(START_T, "r", "run", (info,), (PhasePlan("e", "math", 1, 1),)),
        PhaseStarted(START_T + 1, "e", "math", 1, 0),
        request(
            "e",
            t=START_T + 1,
            suite="math",
            prompt_id="[red]p[/red]",
            ttft_s=0.1,
            e2e_s=1.0,
            tokens_out=10,
            decode_tps=10.0,
            answer_text=answer,
            reasoning_text="think \x1b[2J hard",
        ),
    ]
    source = FixedSource(events, linger=True)
    app = FleetApp(source, clock=lambda: START_T + 3)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("enter")
        await pilot.pause()
        shown = app.screen.query_one("#answer-text", Static).render()
        assert str(shown) == "[bold]not markup[/bold] red done"
        thinking = app.screen.query_one("#reasoning-text", Static).render()
        assert str(thinking) == "think  hard"
        assert "[red]p[/red]" in str(app.screen.query_one("#answer-meta", Static).render())


class _BrokenSource(FixedSource):
    def __init__(self) -> None:
        super().__init__([])

    async def batches(self) -> AsyncIterator[list[Event]]:
        yield []
        raise ConnectionResetError("worker went away")


async def test_a_failing_source_is_reported_not_fatal() -> None:
    app = FleetApp(_BrokenSource(), clock=lambda: START_T)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.source_ended
        assert app.source_error == "ConnectionResetError: worker went away"
        assert app.is_running


async def test_redraws_are_bounded_whatever_the_event_rate(monkeypatch) -> None:
    # 2 minutes of run time in about a second: a batch every few milliseconds.
    app, _ = sample_app()
    source = FixedSource(app.source.events, speed=120, linger=True)
    app.source = source
    draws = 0
    original = FleetScreen.show_state

    def counting(self: FleetScreen, state, now) -> None:
        nonlocal draws
        draws += 1
        original(self, state, now)

    monkeypatch.setattr(FleetScreen, "show_state", counting)
    async with app.run_test(size=(120, 36)):
        loop = asyncio.get_running_loop()
        started = loop.time()
        await asyncio.wait_for(source.drained.wait(), 30)
        elapsed = loop.time() - started
        batches = len(app.source.events)  # an upper bound on batches, for scale
    assert draws <= elapsed * 10 + 10  # the refresh timer's rate, plus draws on mounting
    assert draws < batches


async def test_bindings_can_be_remapped_by_id() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        app.set_keymap({"leaderboard": "b"})
        await press_for(pilot, "b", screen=LeaderboardScreen)


@pytest.mark.parametrize("asked", ["action", "palette"])
async def test_a_screenshot_lands_in_the_current_directory_and_says_so(
    tmp_path, monkeypatch, asked: str
) -> None:
    """As a user asks for it: the palette's entry calls ``deliver_screenshot`` itself, not the
    action, and where there is no ~/Downloads it failed ("Failed to save screenshot")."""
    from tests.support.sample_app import sample_app, settle
    from tests.tui.runs import run_command

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no Downloads folder in it
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    app, source = sample_app(complete=True)
    notes: list[str] = []
    app.notify = lambda message, **_: notes.append(str(message))  # type: ignore[method-assign]
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        if asked == "action":
            app.action_screenshot()
        else:
            await run_command(pilot, "Screenshot", "Screenshot")
        for _ in range(100):  # the file is written on a thread
            await pilot.pause(0.05)
            if notes:
                break
    (saved,) = tmp_path.glob("*.svg")
    assert notes and str(saved) in notes[0]

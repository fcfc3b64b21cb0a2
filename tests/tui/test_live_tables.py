"""Tables that refresh while a run goes on keep the cursor and the scroll a user set."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from nvfp4_tui.core.events import RequestFinished
from nvfp4_tui.tui.screens import leaderboard
from nvfp4_tui.tui.screens.leaderboard import LeaderboardScreen
from nvfp4_tui.tui.widgets.live_table import Column, LiveTable
from tests.support.sample_app import sample_app, settle
from tests.support.sample_events import PARTWAY_S, START_T, sample_events

POLL_S = 0.05
POLL_TRIES = 200


async def _until(pilot: Pilot, condition: Callable[[], bool]) -> None:
    for _ in range(POLL_TRIES):
        if condition():
            return
        await pilot.pause(POLL_S)
    raise AssertionError("the condition never held")


def _cells(table: LiveTable) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_the_leaderboard_refreshing_keeps_the_cursor_and_the_scroll(monkeypatch) -> None:
    monkeypatch.setattr(leaderboard, "REDRAW_INTERVAL_S", 0.0)
    refreshes = 0
    show_quality = LeaderboardScreen._show_quality

    def counted(self: LeaderboardScreen, *args: object) -> None:
        nonlocal refreshes
        refreshes += 1
        show_quality(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(LeaderboardScreen, "_show_quality", counted)
    later = [
        e
        for e in sample_events(None)
        if isinstance(e, RequestFinished) and e.t + (e.e2e_s or 0.0) > START_T + PARTWAY_S
    ]
    app, source = sample_app()
    # 40 columns: too narrow for even the quality table's narrowest layout, so it scrolls.
    async with app.run_test(size=(40, 40)) as pilot:
        await settle(pilot, source)
        await pilot.press("l")
        await pilot.pause()
        table = app.screen.query_one("#quality", LiveTable)
        table.focus()
        await pilot.press("down", "down", "right", "right", "right")
        await pilot.pause()
        scrolled = table.scroll_x
        assert table.cursor_row == 2 and scrolled > 0
        before = _cells(table)

        async def refreshed_with(events: list[RequestFinished]) -> None:
            seen = refreshes
            app.state.apply_all(events)
            await _until(pilot, lambda: refreshes > seen)  # drawn by the app's own timer
            await pilot.pause()

        half = len(later) // 2
        await refreshed_with(later[:half])
        await refreshed_with(later[half:])
        assert _cells(table) != before, "the refreshes changed what the table shows"
        assert table.cursor_row == 2
        assert table.scroll_x == scrolled


class _OneTable(App[None]):
    def compose(self) -> ComposeResult:
        yield LiveTable()


COLUMNS: list[Column] = [("name", "name"), ("n", Text("n", justify="right"))]


async def test_rows_that_come_go_or_move_keep_the_cursor_on_its_row() -> None:
    app = _OneTable()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(LiveTable)
        table.show_rows(COLUMNS, [("a", ["a", "1"]), ("b", ["b", "2"]), ("c", ["c", "3"])])
        table.focus()
        await pilot.press("down")
        assert table.cursor_row == 1
        table.show_rows(COLUMNS, [("b", ["b", "5"]), ("c", ["c", "3"]), ("d", ["d", "4"])])
        await pilot.pause()
        assert _cells(table) == [["b", "5"], ["c", "3"], ["d", "4"]]
        assert table.cursor_row == 0, "on b still, now first"
        table.show_rows(COLUMNS, [("d", ["d", "4"]), ("b", ["b", "5"])])
        await pilot.pause()
        assert _cells(table) == [["d", "4"], ["b", "5"]]
        assert table.cursor_row == 1, "on b still, after d"
        # A column whose label changes lays the table anew, the cursor on its row.
        table.show_rows([("name", "who"), *COLUMNS[1:]], [("d", ["d", "4"]), ("b", ["b", "6"])])
        await pilot.pause()
        assert [str(c.label) for c in table.ordered_columns] == ["who", "n"]
        assert table.cursor_row == 1 and _cells(table)[1] == ["b", "6"]


async def test_a_row_cursor_shows_only_while_the_table_has_focus() -> None:
    app = _OneTable()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(LiveTable)
        table.show_rows(COLUMNS, [("a", ["a", "1"])])
        table.blur()
        await pilot.pause()
        assert table.cursor_type == "none"
        table.focus()
        await pilot.pause()
        assert table.cursor_type == "row"


async def test_a_table_laid_anew_keeps_its_scroll() -> None:
    wide: list[Column] = [(f"c{i}", f"column {i}") for i in range(12)]
    rows = [(f"r{j}", [f"{i * j:>9}" for i in range(12)]) for j in range(3)]
    app = _OneTable()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(LiveTable)
        table.show_rows(wide, rows)
        table.focus()
        await pilot.pause()
        await pilot.press("right", "right", "right")
        await pilot.pause()
        scrolled = table.scroll_x
        assert scrolled > 0
        table.show_rows([("c0", "first"), *wide[1:]], rows)  # a label changed
        await pilot.pause()
        await pilot.pause()
        assert str(table.ordered_columns[0].label) == "first"
        assert table.scroll_x == scrolled

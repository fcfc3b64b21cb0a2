"""The fleet's three views: which one a terminal and a fleet get, the table's sorting and node
groups, the grid's totals cell, and the chart labels that name each series."""

from __future__ import annotations

from rich.console import RenderableType
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable

from nvfp4_tui.core.figures.fleet import fleet_totals
from nvfp4_tui.tui.screens.detail import DetailScreen
from nvfp4_tui.tui.screens.fleet import FleetScreen, auto_view
from nvfp4_tui.tui.widgets.charts import place_labels, separate_cells, spread_rows
from nvfp4_tui.tui.widgets.fleet_table import FLEET_ROW, NODE_ROW, SORT_KEYS, quality_bar
from nvfp4_tui.tui.widgets.gpu_pane import GpuPane
from nvfp4_tui.tui.widgets.keys_footer import KeysFooter
from nvfp4_tui.tui.widgets.run_header import PhaseLine
from nvfp4_tui.tui.widgets.spark_bars import SparkBars
from nvfp4_tui.tui.widgets.totals_pane import TotalsPane
from tests.support.sample_app import sample_app, settle, wait_until
from tests.support.sample_events import large_fleet

PANE_H = 17


def test_the_view_follows_the_terminal_and_the_fleet() -> None:
    assert auto_view(7, 1, 160, 48, PANE_H) == "grid"
    assert auto_view(7, 1, 120, 36, PANE_H) == "grid"  # the footer gives way
    assert auto_view(7, 1, 80, 24, PANE_H) == "compact"
    assert auto_view(16, 2, 160, 48, PANE_H) == "table"  # several nodes
    assert auto_view(30, 1, 80, 24, PANE_H) == "table"  # more lines than fit
    assert auto_view(64, 8, 240, 60, PANE_H) == "table"


def test_labels_in_a_column_keep_their_order_and_a_row_each() -> None:
    assert spread_rows([5.0, 5.2, 5.1, 1.0], 8) == [5, 7, 6, 1]
    assert spread_rows([7.0, 7.0, 7.0], 8) == [5, 6, 7]  # pushed down from the top
    assert sorted(spread_rows([0.0] * 9, 8)) == [0, 0, 1, 2, 3, 4, 5, 6, 7]  # no room: clamped


def test_markers_in_one_cell_are_moved_apart_and_the_others_stay() -> None:
    # RedHatAI and Jiunsong at near speed and score: the later one moves a cell aside.
    assert separate_cells([(30, 4), (30, 4), (10, 2), (31, 4)], 40) == [
        (30, 4),
        (31, 4),
        (10, 2),
        (32, 4),  # its own cell taken by the one moved there: the next free one, right first
    ]
    assert separate_cells([(39, 0), (39, 0)], 40) == [(39, 0), (38, 0)]  # the edge: leftwards
    assert separate_cells([(0, 0), (0, 0)], 1) == [(0, 0), (0, 0)]  # no room: drawn where it lies


def test_labels_beside_points_cover_neither_each_other_nor_a_point() -> None:
    markers = [(3, 4), (20, 4)]
    cells = place_labels([(5, 4, 8), (5, 4, 8), (1, 5, 4)], 40, 10, markers)
    spans = [
        (row, column, column + length - 1)
        for (column, row), (_, _, length) in zip(
            cells, [(5, 4, 8), (5, 4, 8), (1, 5, 4)], strict=True
        )
    ]
    for index, (row, start, end) in enumerate(spans):
        for other in spans[index + 1 :]:
            assert other[0] != row or other[2] < start or other[1] > end
        assert all(r != row or not start <= c <= end for c, r in markers)


def test_a_quality_bar_has_a_character_per_suite() -> None:
    class Q:
        def __init__(self, mean: float | None) -> None:
            self.mean = mean

    assert quality_bar([Q(1.0), Q(0.5), Q(None), Q(0.0)]) == "█▅·▁"  # type: ignore[list-item]


async def test_the_phase_line_says_how_many_it_left_out() -> None:
    app, source = sample_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, source)
        line = app.screen.query_one(PhaseLine)
        text = line.render().plain
        shown = text.count("GPU")
        assert 0 < shown < 7 and text.endswith(f"+{7 - shown} more")
        assert len(text) <= line.size.width


async def test_the_table_groups_by_node_and_s_sorts_within_each() -> None:
    app, source = sample_app(fleet=large_fleet(16, 2))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        screen = app.screen
        assert isinstance(screen, FleetScreen) and screen.view == "table"
        table = screen.query_one("#table", DataTable)
        keys = [str(row.key.value) for row in table.ordered_rows]
        assert keys[0] == NODE_ROW + "node-a" and keys[9] == NODE_ROW + "node-b"
        assert keys[-1] == FLEET_ROW and len(keys) == 16 + 3
        await pilot.press("s")  # by tok/s, fastest first
        await pilot.pause()
        app.redraw()
        await pilot.pause()
        assert SORT_KEYS[1].name == "tok/s"
        keys = [str(row.key.value) for row in table.ordered_rows]
        for group in (keys[1:9], keys[10:18]):
            decode = [app.state.endpoints[k].decode_tps_now(app.clock()) or 0 for k in group]
            assert decode == sorted(decode, reverse=True)
        node_a = {e.id for e in app.state.endpoints.values() if e.info.node == "node-a"}
        assert set(keys[1:9]) == node_a
        table.move_cursor(row=2)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen) and app.screen.endpoint_id == keys[2]


async def test_the_grid_spare_cell_holds_the_fleet_totals() -> None:
    app, source = sample_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, source)
        cell = app.screen.query_one(TotalsPane)
        assert cell.display and cell.region.width > 20
        totals = fleet_totals(app.state.endpoints.values(), app.clock())
        text = str(cell.render())
        assert f"{totals.requests_done:,} requests done" in text
        assert f"{totals.errors:,} errors" in text
        assert totals.decode_tps is not None and f"{totals.decode_tps:,.0f} tok/s" in text


async def test_every_pane_writes_its_sparkline_range_at_120x36() -> None:
    """A 3-digit rate's pane leaves its sparkline 11 columns: it still writes the axis's top
    and bottom values beside the bars, as the 2-digit panes do."""
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        for pane in app.screen.query(GpuPane):
            spark = pane.query_one(SparkBars)
            lines = str(spark.render()).splitlines()
            assert len(lines) >= 2, pane.id
            top, bottom = lines[0].split()[-1], lines[-1].split()[-1]
            assert top.replace(".", "").isdigit() and bottom.replace(".", "").isdigit(), pane.id
            assert float(top) >= float(bottom) > 0, pane.id


async def test_the_detail_footer_has_its_keys_from_the_first_frame() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        first_frame: list[str] = []
        display = app._display

        def display_and_read_the_footer(screen: Screen, renderable: RenderableType | None) -> None:
            # What the footer drew into the detail's first frame handed to the terminal.
            if renderable is not None and isinstance(screen, DetailScreen) and not first_frame:
                first_frame.append(str(screen.query_one(KeysFooter).render()))
            display(screen, renderable)

        app._display = display_and_read_the_footer  # type: ignore[method-assign]
        app.open_detail("moe_qwen36")
        await wait_until(pilot, lambda: bool(first_frame), "the detail's first frame")
        assert all(f" {key} " in first_frame[0] for key in ("esc", "q", "l")), first_frame


async def test_pane_titles_fit_their_border_and_end_on_a_whole_word() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        cut = 0
        for pane in app.screen.query(GpuPane):
            plain = Content.from_markup(str(pane.border_title)).plain
            full = f"GPU {app.state.endpoints[pane.endpoint_id].info.gpu} · "
            full += app.state.endpoints[pane.endpoint_id].info.label
            assert len(plain) <= pane.outer_size.width - 6, plain
            if plain.endswith("…"):
                cut += 1
                head = plain[:-1]
                assert full.startswith(head) and full[len(head)] in " -", plain
        assert cut >= 2  # the sample's long names do not fit 120 columns

"""The detail's `s` opens every statistic of the endpoint per level; esc goes back, g to the grid."""

from __future__ import annotations

from nvfp4_tui.tui.screens.detail import DetailScreen
from nvfp4_tui.tui.screens.fleet import FleetScreen
from nvfp4_tui.tui.screens.statistics import StatisticsScreen
from nvfp4_tui.tui.widgets.live_table import LiveTable
from tests.support.sample_app import press_for, sample_app, settle


async def test_s_opens_the_statistics_and_esc_and_g_leave_them() -> None:
    app, source = sample_app(complete=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        app.open_detail("dense_qwopus")
        await settle(pilot, source)
        await pilot.press("s")
        await settle(pilot, source)
        assert isinstance(app.screen, StatisticsScreen)
        table = app.screen.query_one("#stats", LiveTable)
        keys = [str(row.key.value) for row in table.ordered_rows]
        assert keys[0] == "c=1" and "c=1:ttft_s" in keys and "c=4:ttft_s" in keys
        row = table.get_row("c=1:ttft_s")
        levels = app.state.endpoints["dense_qwopus"].metric_stats
        (load, *_) = [load for _, load in levels.levels("dense_qwopus")]
        ttft = next(
            s for s in levels.summaries("dense_qwopus", load) if s.metric.column == "ttft_s"
        )
        assert str(row[1]) == str(ttft.n) and ttft.n > 0
        await pilot.press("escape")
        assert isinstance(app.screen, DetailScreen)
        await pilot.press("s")
        await press_for(pilot, "g", screen=FleetScreen)

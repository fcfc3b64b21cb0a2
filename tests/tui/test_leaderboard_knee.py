"""The leaderboard's throughput-vs-load chart on a swept run: one line per endpoint, each knee
marked, so where a sweep bent is visible on screen (Pilot and a snapshot SVG)."""

from __future__ import annotations

from rich.text import Text
from textual.pilot import Pilot

from nvfp4_tui.core.events import (
    Event,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RunFinished,
    RunStarted,
)
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.widgets.charts import Chart
from tests.support.factories import T0, endpoint_info, request
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import settle

LADDER = (1, 2, 4, 8, 16)
TOKENS = 100
# Aggregate tok/s each endpoint reaches per step; the sweep stops at the first step that grows
# < 5%, so "early" runs c=1..4 (knee c=2), "mid" c=1..8 (knee c=4), "late" every step (no knee).
AGGREGATE = {
    "early": (100.0, 190.0, 196.0),
    "mid": (100.0, 195.0, 380.0, 390.0),
    "late": (100.0, 198.0, 390.0, 760.0, 1400.0),
}
KNEE_MARK = "◆"


def sweep_run() -> list[Event]:
    """Closed-loop sweep steps of one suite: c slots each send two 100-token requests in turn,
    all of one length, so every step's window throughput is exactly its AGGREGATE figure."""
    infos = tuple(
        endpoint_info(eid, gpu, label=eid.title(), model="m") for gpu, eid in enumerate(AGGREGATE)
    )
    plans = tuple(PhasePlan(i.id, "math", c, 2 * c, sweep=True) for i in infos for c in LADDER)
    events: list[Event] = [RunStarted(T0, "sweep", "sweep-run", infos, plans)]
    end = T0
    for info in infos:
        t = T0
        steps = AGGREGATE[info.id]
        for index, (c, aggregate) in enumerate(zip(LADDER, steps, strict=False)):
            e2e_s = TOKENS * c / aggregate
            events.append(PhaseStarted(t, info.id, "math", c, index))
            for i in range(2 * c):
                events.append(
                    request(
                        info.id,
                        t=t + (i // c) * e2e_s,
                        suite="math",
                        prompt_id="p",
                        concurrency=c,
                        phase_index=index,
                        request_index=i,
                        ttft_s=0.05 * c,
                        e2e_s=e2e_s,
                        tokens_out=TOKENS,
                        decode_tps=aggregate / c,
                        e2e_tps=aggregate / c,
                        score_heuristic=0.8,
                    )
                )
            wall_s = 2 * e2e_s
            t += wall_s
            stop = "throughput" if index == len(steps) - 1 and len(steps) < len(LADDER) else None
            events.append(
                PhaseFinished(
                    t, info.id, "math", c, index, 2 * c, 0, 2 * c * TOKENS, wall_s, sweep_stop=stop
                )
            )
            t += 0.5
        end = max(end, t)
    events.append(RunFinished(end, "complete"))
    return events


def sweep_app() -> tuple[FleetApp, FixedSource]:
    events = sweep_run()
    source = FixedSource(events)
    return FleetApp(source, clock=lambda: events[-1].t), source


async def test_the_chart_marks_each_knee() -> None:
    app, source = sweep_app()
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot, source)
        await pilot.press("l")
        await pilot.pause(0.6)  # past the screen's redraw throttle
        app.redraw()
        await pilot.pause()
        chart = app.screen.query_one("#chart-scaling", Chart)
        assert "vs concurrency" in str(chart.border_title)
        assert str(chart.border_subtitle) == "knee: Early c=2 · Mid c=4"
        render = chart.render()
        assert isinstance(render, Text)
        plot = render.plain
        assert plot.count(KNEE_MARK) == 2, plot
        for level in LADDER:
            assert f"c={level}" in plot
        # The same knees in the capacity table, read from the same load points.
        assert app.state.endpoints["late"].load.knee() is None


def test_leaderboard_knee_120x50(snap_compare) -> None:
    """A sweep: throughput against concurrency per endpoint, knees at c=2 and c=4 marked."""
    app, source = sweep_app()

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot, source)

    assert snap_compare(app, press=["l"], terminal_size=(120, 50), run_before=run_before)

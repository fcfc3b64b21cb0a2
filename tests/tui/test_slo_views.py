"""Goodput and SLO attainment in the panes, capacity at SLO on the leaderboard, for a run that
has SLO targets (``test_scores`` checks that a run without them shows neither)."""

from __future__ import annotations

from textual.widgets import DataTable

from nvfp4_tui.core.events import (
    Event,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RunFinished,
    RunStarted,
)
from nvfp4_tui.tui import units
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.widgets.fit_line import FitLine
from nvfp4_tui.tui.widgets.gpu_pane import GpuPane, pane_height
from tests.support.factories import T0, endpoint_info, request
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import settle, wait_until

LEVELS = (1, 2, 4)
PER_PHASE = 10
SLO_TTFT_S = 0.3
# TTFT per concurrency: "slow" misses the SLO from c=4 on, "fast" never does.
TTFT_S = {"slow": {1: 0.1, 2: 0.2, 4: 0.5}, "fast": {1: 0.1, 2: 0.1, 4: 0.15}}


def slo_run(*, finish: bool = True) -> list[Event]:
    infos = tuple(
        endpoint_info(eid, gpu, label=eid.title(), model="m") for gpu, eid in enumerate(TTFT_S)
    )
    plans = tuple(
        PhasePlan(i.id, "english", c, PER_PHASE, slo_ttft_s=SLO_TTFT_S, slo_attainment=0.9)
        for i in infos
        for c in LEVELS
    )
    events: list[Event] = [RunStarted(T0, "slo", "slo-run", infos, plans)]
    for info in infos:
        t = T0
        for index, c in enumerate(LEVELS):
            events.append(PhaseStarted(t, info.id, "english", c, index))
            for i in range(PER_PHASE):
                events.append(
                    request(
                        info.id,
                        t=t + i * 0.5,
                        prompt_id="p",
                        concurrency=c,
                        phase_index=index,
                        request_index=i,
                        ttft_s=TTFT_S[info.id][c],
                        e2e_s=1.0,
                        tokens_out=100,
                        decode_tps=100.0,
                        score_heuristic=0.8,
                    )
                )
            t += PER_PHASE * 0.5 + 0.5
            events.append(PhaseFinished(t, info.id, "english", c, index, PER_PHASE, 0, 1000, 5.5))
    if finish:
        events.append(RunFinished(t + 1, "complete"))
    return events


async def test_panes_show_attainment_and_goodput_of_the_current_phase() -> None:
    events = slo_run()
    source = FixedSource(events)
    app = FleetApp(source, clock=lambda: events[-1].t)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, source)
        slow = app.screen.query_one("#pane-slow", GpuPane)
        fast = app.screen.query_one("#pane-fast", GpuPane)
        assert pane_height(app.state.endpoints["slow"]) == 11 + 1 + 1
        # The last phase (c=4): slow missed every request, fast met them all.
        line = slow.query_one(".slo", FitLine)
        assert line.display
        current = app.state.endpoints["slow"].load.current()
        assert current is not None and current.attainment == 0.0
        assert str(line.render()).startswith("SLO met 0% of ≥90%   goodput 0.0 req/s")
        fast_line = str(fast.query_one(".slo", FitLine).render())
        goodput = app.state.endpoints["fast"].load.current().goodput_rps
        assert fast_line.startswith(f"SLO met 100% of ≥90%   goodput {goodput:.1f} req/s")
        # Two panes side by side, 26 columns each: the shortest wording (40 rows would stack them)
        await pilot.resize_terminal(60, 24)
        narrow = fast.query_one(".slo", FitLine)
        await wait_until(pilot, lambda: narrow.size.width == 26, "the panes at 60 columns")
        assert (
            str(fast.query_one(".slo", FitLine).render()) == f"SLO 100%   goodput {goodput:.1f}/s"
        )

        await pilot.press("l")
        await pilot.pause()
        table = app.screen.query_one("#capacity", DataTable)
        assert table.display
        assert "TTFT ≤ 300 ms · ≥ 90% met" in str(table.border_title)
        rows = {
            row[0].plain: [c.plain for c in row]
            for row in (table.get_row_at(i) for i in range(table.row_count))
        }
        assert rows["Slow"][1:3] == ["c=2", units.rate(_capacity_goodput(app, "slow"))]
        assert rows["Fast"][1] == "c=4"
        assert rows["Slow"][6] == rows["Fast"][6] == "c=4"  # the highest load run


def _capacity_goodput(app: FleetApp, endpoint_id: str) -> float | None:
    return app.state.endpoints[endpoint_id].load.capacity_row(endpoint_id).capacity_goodput_rps

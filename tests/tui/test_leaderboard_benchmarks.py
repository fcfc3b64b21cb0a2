"""The leaderboard screen shows standard benchmarks in a table of their own, labelled by
benchmark and protocol, and keeps them out of the quality table; a run without one shows no
such table."""

from __future__ import annotations

from textual.widgets import DataTable

from nvfp4_tui.core.events import BenchmarkSuite, Event, PhasePlan, RunFinished, RunStarted
from nvfp4_tui.tui.app import FleetApp
from tests.support.factories import T0, endpoint_info, request
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import settle

HUMANEVAL = BenchmarkSuite("humaneval", "HumanEval", "pass@1", "greedy", "chat prompt v1", 4, 164)


def run(benchmarks: tuple[BenchmarkSuite, ...]) -> list[Event]:
    infos = (endpoint_info("a", 0, label="Alpha", model="m"),)
    plans = (PhasePlan("a", "math", 1, 2), PhasePlan("a", "humaneval", 1, 4))
    events: list[Event] = [RunStarted(T0, "r", "bench", infos, plans, benchmarks=benchmarks)]
    events += [
        request("a", suite="math", prompt_id=f"m{i}", score_verified=0.5, request_index=i)
        for i in range(2)
    ]
    events += [
        request("a", suite="humaneval", prompt_id=f"h{i}", score_verified=float(i < 3))
        for i in range(4)
    ]
    return [*events, RunFinished(T0 + 10, "complete")]


async def shown(
    benchmarks: tuple[BenchmarkSuite, ...],
) -> tuple[bool, str, list[str], list[str]]:
    """Whether the benchmarks table shows, its title, its cells, and the quality table's
    suites."""
    events = run(benchmarks)
    source = FixedSource(events)
    app = FleetApp(source, clock=lambda: events[-1].t)
    async with app.run_test(size=(140, 50)) as pilot:
        await settle(pilot, source)
        await pilot.press("l")
        await pilot.pause(0.6)  # past the screen's redraw throttle
        app.redraw()
        await pilot.pause()
        table = app.screen.query_one("#benchmarks", DataTable)
        cells = [str(cell) for row in range(table.row_count) for cell in table.get_row_at(row)]
        quality = app.screen.query_one("#quality", DataTable)
        suites = [str(quality.get_row_at(row)[0]) for row in range(quality.row_count)]
        return table.display, str(table.border_title), cells, suites


async def test_a_benchmark_gets_its_own_labelled_table() -> None:
    display, title, cells, suites = await shown((HUMANEVAL,))
    assert display
    assert title == "Standard benchmarks: HumanEval pass@1, greedy, n=4 of 164, chat prompt v1"
    assert cells[:3] == ["HumanEval", "Alpha", "0.75"]
    assert cells[4] == "4"  # problems scored
    assert suites == ["math"]


async def test_a_run_without_benchmarks_shows_no_such_table() -> None:
    display, _, _, suites = await shown(())
    assert not display
    assert suites == ["math", "humaneval"]  # not a benchmark: an ordinary suite

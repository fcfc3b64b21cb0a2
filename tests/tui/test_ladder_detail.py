"""The detail screen's context ladder (issue 29, item 5): once a rung has answered, its figures
by level stand where the latest answer would (a ladder's answers are lines of codes)."""

from __future__ import annotations

from textual.pilot import Pilot

from nvfp4_tui.core.events import Event
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.screens.detail import DetailScreen
from nvfp4_tui.tui.widgets.live_table import LiveTable
from tests.support.factories import request
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import settle
from tests.support.sample_events import PARTWAY_S, START_T, sample_events

ENDPOINT = "dense_qwopus"
# (rung, level, tokens asked, server's count, TTFT s, decode tok/s, recall, its detail)
LADDER = [
    ("context_1k", 1, 1024, 1018, 0.31, 52.0, 1.0, "recall:0=1,0.5=1,1=1"),
    ("context_32k", 1, 32768, 32760, 4.4, 41.0, 1.0, "recall:0=1,0.5=1,1=1"),
    ("context_32k", 1, 32768, 32761, 4.5, 40.5, 2 / 3, "recall:0=1,0.5=0,1=1"),
    ("context_max", 4, 128131, 128130, 20.1, 12.3, 2 / 3, "recall:0=1,0.5=0,1=1"),
]


def _ladder_app() -> tuple[FleetApp, FixedSource]:
    events: list[Event] = sample_events(PARTWAY_S)
    at = START_T + PARTWAY_S - 5.0
    events += [
        request(
            ENDPOINT,
            t=at + i * 0.1,
            suite=suite,
            prompt_id=f"{suite}-{i}",
            concurrency=level,
            request_index=i,
            tokens_in_asked=asked,
            tokens_in=counted,
            ttft_s=ttft,
            prefill_tps=counted / ttft,
            decode_tps=decode,
            score_verified=recall,
            score_verified_detail=detail,
        )
        for i, (suite, level, asked, counted, ttft, decode, recall, detail) in enumerate(LADDER)
    ]
    events.sort(key=lambda e: e.t)
    source = FixedSource(events, kind="live", linger=True)
    return FleetApp(source, clock=lambda: START_T + PARTWAY_S), source


async def _opened(pilot: Pilot, app: FleetApp, source: FixedSource) -> None:
    await settle(pilot, source)
    app.open_detail(ENDPOINT)
    await settle(pilot, source)


async def test_the_ladder_takes_the_answers_place_once_a_rung_answered() -> None:
    app, source = _ladder_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await _opened(pilot, app, source)
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        table = screen.query_one("#ladder", LiveTable)
        assert table.display and not screen.query_one("#answer").display
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [row[:2] for row in rows] == [["1k", "1"], ["32k", "1"], ["max", "4"]]
        assert rows[1][3:7] == ["4450 ms", "7,363", "40.8", "0.83"]  # the two 32K requests' means
        assert rows[1][7:] == ["1.00", "0.50", "1.00"]  # recall at 0%, 50% and 100% deep
        headers = [str(column.label) for column in table.columns.values()]
        assert headers[-3:] == ["@0%", "@50%", "@100%"]
        app.open_detail("moe_qwen36")  # no ladder there: its latest answer, as ever
        await settle(pilot, source)
        assert not app.screen.query_one("#ladder").display


def test_detail_with_a_ladder_120x36(snap_compare) -> None:
    app, source = _ladder_app()
    assert snap_compare(
        app, terminal_size=(120, 36), run_before=lambda pilot: _opened(pilot, app, source)
    )

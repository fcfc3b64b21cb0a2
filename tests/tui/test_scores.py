"""Verified scores by default, heuristic ones on ``v``, and every view saying which it shows."""

from __future__ import annotations

from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from nvfp4_tui.core.events import Event, PhasePlan, RequestFinished, RunStarted
from nvfp4_tui.core.figures.scores import HEURISTIC, JUDGE, VERIFIED
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui import units
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.readouts import next_score, shown_score
from nvfp4_tui.tui.screens.detail import REQUEST_COLUMNS
from nvfp4_tui.tui.widgets.fit_line import FitLine
from nvfp4_tui.tui.widgets.gpu_pane import GpuPane
from tests.support.factories import endpoint_info, request
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import sample_app, settle
from tests.support.sample_events import START_T


def _request(
    index: int, *, heuristic: float | None, verified: float | None, judge: float | None = None
) -> RequestFinished:
    return request(
        "e",
        t=START_T + index,
        suite="math",
        prompt_id="p",
        request_index=index,
        ttft_s=0.1,
        e2e_s=1.0,
        tokens_out=10,
        decode_tps=10.0,
        score_heuristic=heuristic,
        score_verified=verified,
        score_judge=judge,
    )


def _run(*requests: RequestFinished) -> list[Event]:
    info = endpoint_info("e", 0, model_class="dense")
    return [RunStarted(START_T, "r", "run", (info,), (PhasePlan("e", "math", 1, 6),)), *requests]


def test_shown_score_falls_back_only_when_a_run_has_no_verified_scores() -> None:
    state = FleetState()
    assert shown_score(state, VERIFIED) == VERIFIED  # nothing scored yet: as asked
    state.apply_all(_run(_request(0, heuristic=0.8, verified=None)))
    assert shown_score(state, VERIFIED) == HEURISTIC
    state.apply(_request(1, heuristic=0.8, verified=0.5))
    assert shown_score(state, VERIFIED) == VERIFIED
    assert shown_score(state, HEURISTIC) == HEURISTIC


REQUEST_KEYS = [key for _, key in REQUEST_COLUMNS]


def _rows(table: DataTable) -> list:
    return [table.get_row_at(i) for i in range(table.row_count)]


def _quality(pane: GpuPane) -> list[float | None]:
    assert pane.readout is not None
    return [q.mean for q in pane.readout.quality]


async def test_panes_and_leaderboard_show_verified_scores_until_v() -> None:
    app, source = sample_app(complete=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        endpoint = app.state.endpoints["dense_qwopus"]
        pane = app.screen.query_one("#pane-dense_qwopus", GpuPane)
        verified = [endpoint.quality_stats(s, VERIFIED).mean for s in endpoint.suites()]
        heuristic = [endpoint.quality_stats(s, HEURISTIC).mean for s in endpoint.suites()]
        assert verified != heuristic
        assert _quality(pane) == verified
        assert pane.border_subtitle == "verified scores"
        assert not pane.query_one(".slo", FitLine).display, "the sample run has no SLO"
        await pilot.press("v")
        await pilot.pause()
        assert _quality(pane) == heuristic
        assert pane.border_subtitle == "heuristic scores"

        await pilot.press("l")
        await pilot.pause()
        head = str(app.screen.query_one("#lb-head", FitLine).render())
        assert "quality = heuristic score" in head
        assert "v: verified" in head  # the sample has no judge scores: v goes back
        assert not app.screen.query_one("#capacity", DataTable).display
        await pilot.press("v")
        await pilot.pause(0.6)  # the leaderboard redraws at most twice a second
        app.redraw()
        await pilot.pause()
        head = str(app.screen.query_one("#lb-head", FitLine).render())
        assert "quality = verified score" in head
        table = app.screen.query_one("#quality", DataTable)
        assert "(verified score, mean)" in str(table.border_title)
        math_row = [c.plain for c in table.get_row("math")]
        cell = next(
            row.score(VERIFIED)
            for row in endpoint.leaderboard()
            if row.suite == "math" and row.concurrency == 1
        )
        assert cell.mean is not None
        column = list(app.state.endpoints).index("dense_qwopus") + 1
        assert math_row[column].startswith(f"{cell.mean:.2f}")


async def test_detail_table_scores_follow_the_choice() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("enter")
        await pilot.pause()
        table = app.screen.query_one("#requests", DataTable)
        assert table.columns[ColumnKey("score")].label.plain == "verified"
        shown = [row[REQUEST_KEYS.index("score")].plain for row in _rows(table)]
        endpoint = app.state.endpoints[app.screen.endpoint_id]
        newest_first = list(endpoint.recent_requests)[::-1][: len(shown)]
        assert shown == [units.score(r.score(VERIFIED)) for r in newest_first]
        await pilot.press("v")
        await pilot.pause()
        assert table.columns[ColumnKey("score")].label.plain == "heuristic"
        shown = [row[REQUEST_KEYS.index("score")].plain for row in _rows(table)]
        assert shown == [units.score(r.score(HEURISTIC)) for r in newest_first]


async def test_a_run_without_verified_scores_says_so() -> None:
    events = _run(*(_request(i, heuristic=0.8, verified=None) for i in range(3)))
    source = FixedSource(events, linger=True)
    app = FleetApp(source, clock=lambda: START_T + 5)
    notes: list[str] = []
    app.notify = lambda message, **_: notes.append(message)  # type: ignore[method-assign]
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        pane = app.screen.query_one(GpuPane)
        assert pane.border_subtitle == "heuristic scores"
        assert _quality(pane) == [0.8]
        await pilot.press("v")
        assert notes == ["This run has no verified scores: showing heuristic ones."]
        assert app.score_name == HEURISTIC


def test_v_cycles_through_the_scores_the_run_has() -> None:
    state = FleetState()
    state.apply_all(_run(_request(0, heuristic=0.8, verified=0.5)))
    assert next_score(state, VERIFIED) == HEURISTIC
    assert next_score(state, HEURISTIC) == VERIFIED  # no judge graded anything: skipped
    state.apply(_request(1, heuristic=0.8, verified=0.5, judge=0.9))
    assert [next_score(state, s) for s in (VERIFIED, HEURISTIC, JUDGE)] == [
        HEURISTIC,
        JUDGE,
        VERIFIED,
    ]
    heuristic_only = FleetState()
    heuristic_only.apply_all(_run(_request(0, heuristic=0.8, verified=None)))
    assert next_score(heuristic_only, HEURISTIC) is None


async def test_the_judge_score_is_shown_on_v() -> None:
    events = _run(*(_request(i, heuristic=0.8, verified=0.5, judge=0.25) for i in range(3)))
    source = FixedSource(events, linger=True)
    app = FleetApp(source, clock=lambda: START_T + 5)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        pane = app.screen.query_one(GpuPane)
        await pilot.press("v", "l")
        await pilot.pause()
        head = str(app.screen.query_one("#lb-head", FitLine).render())
        assert "quality = heuristic score" in head and "v: judge" in head
        await pilot.press("v")
        await pilot.pause(0.6)  # the leaderboard redraws at most twice a second
        app.redraw()
        await pilot.pause()
        head = str(app.screen.query_one("#lb-head", FitLine).render())
        assert "quality = judge score" in head and "v: verified" in head
        await pilot.press("g")
        await pilot.pause()
        assert app.score_name == JUDGE
        assert pane.border_subtitle == "judge scores"
        assert _quality(pane) == [0.25]
        await pilot.press("v")
        await pilot.pause()
        assert app.score_name == VERIFIED

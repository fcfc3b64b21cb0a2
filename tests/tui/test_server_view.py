"""The server's view beside the client's: the TTFT comparison, the rings it reads, and the detail
screen's server charts (or its "no server metrics" in their place)."""

from __future__ import annotations

import asyncio
import re

import pytest
from textual.content import Content
from textual.widgets import Static

from nvfp4_tui.core.events import PhasePlan, RunStarted, ServerSample
from nvfp4_tui.core.readouts import ServerPoint, TtftPoint
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui.screens.detail import CHART_INTERVAL_S, DetailScreen, ttft_gap_wordings
from nvfp4_tui.tui.server_view import TtftComparison, timeline, ttft_comparison
from nvfp4_tui.tui.widgets.charts import Chart
from tests.support.factories import T0, endpoint_info, request
from tests.support.sample_app import sample_app, settle
from tests.support.sample_events import sample_events


def _state() -> FleetState:
    info = endpoint_info("a", 0, model_class="dense")
    state = FleetState()
    state.apply(RunStarted(T0, "r", "run", (info,), (PhasePlan("a", "math", 1, 10),)))
    return state


def _request(
    state: FleetState, sent_t: float, ttft_s: float | None, status: str = "ok", **fields
) -> None:
    state.apply(request(t=sent_t, suite="math", status=status, ttft_s=ttft_s, e2e_s=1.0, **fields))


def _scrape(
    t: float, mean_s: float, count: int = 1, p50_s: tuple[float, float | None] = (0.1, 0.25)
) -> ServerSample:
    return ServerSample(
        t,
        "a",
        ttft_count=count,
        ttft_mean_s=mean_s,
        ttft_p50_low_s=p50_s[0],
        ttft_p50_high_s=p50_s[1],
    )


def _run(client_ttft_s: float, server_ttft_s: float) -> FleetState:
    state = _state()
    for i in range(5):
        _request(state, T0 + i, client_ttft_s)
        state.apply(_scrape(T0 + i + 0.5, server_ttft_s))
    return state


def test_client_far_slower_than_the_server_is_client_bound() -> None:
    comparison = ttft_comparison(_run(0.30, 0.10).endpoints["a"])
    assert comparison.client_mean_s == pytest.approx(0.30)
    assert comparison.server_mean_s == pytest.approx(0.10)
    assert comparison.outside_server_s == pytest.approx(0.20)
    assert comparison.client_bound


def test_the_server_mean_weighs_each_scrape_by_its_first_tokens() -> None:
    state = _state()
    _request(state, T0, 0.2)
    # Three first tokens at 0.1 s and one at 0.5 s: 0.8 s over 4, not the scrapes' 0.3 s.
    state.apply(_scrape(T0 + 1, 0.1, count=3, p50_s=(0.08, 0.1)))
    state.apply(_scrape(T0 + 2, 0.5, count=1, p50_s=(0.25, 0.5)))
    state.apply(ServerSample(T0 + 3, "a", ttft_count=0))  # no first token: no weight
    comparison = ttft_comparison(state.endpoints["a"])
    assert comparison.server_mean_s == pytest.approx(0.2)
    # The p50 of all four lies between the lowest scrape's low edge and the highest high edge.
    assert (comparison.server_p50_low_s, comparison.server_p50_high_s) == (0.08, 0.5)


def test_a_p50_above_the_top_bucket_leaves_the_range_open() -> None:
    state = _state()
    _request(state, T0, 0.2)
    state.apply(_scrape(T0 + 1, 0.1))
    state.apply(_scrape(T0 + 2, 3000.0, p50_s=(2560.0, None)))
    comparison = ttft_comparison(state.endpoints["a"])
    assert (comparison.server_p50_low_s, comparison.server_p50_high_s) == (0.1, None)


def test_close_means_are_not_client_bound() -> None:
    assert not ttft_comparison(_run(0.30, 0.26).endpoints["a"]).client_bound


def test_a_few_ms_of_network_on_a_fast_first_token_is_not_a_bottleneck() -> None:
    # Three times the server's, but only 20 ms more: below the floor.
    assert not ttft_comparison(_run(0.03, 0.01).endpoints["a"]).client_bound


def test_no_server_samples_leave_nothing_to_compare() -> None:
    state = _state()
    _request(state, T0, 0.3)
    state.apply(ServerSample(T0 + 1, "a", kv_cache_pct=10.0))  # no first token in the scrape
    comparison = ttft_comparison(state.endpoints["a"])
    assert comparison == TtftComparison(None, None, None)
    assert not comparison.client_bound


def test_only_the_span_both_rings_cover_is_compared() -> None:
    state = _state()
    state.apply(_scrape(T0, 5.0, p50_s=(2.5, 5.0)))  # before any request: left out
    _request(state, T0 + 10, 0.3)
    state.apply(_scrape(T0 + 11, 0.25))
    comparison = ttft_comparison(state.endpoints["a"])
    assert comparison.since_t == pytest.approx(T0 + 10.3)
    assert comparison.server_mean_s == pytest.approx(0.25)
    assert (comparison.server_p50_low_s, comparison.server_p50_high_s) == (0.1, 0.25)


def test_rings_keep_running_requests_and_client_ttft_at_the_first_token() -> None:
    state = _state()
    state.apply(ServerSample(T0, "a", requests_running=3, requests_waiting=1, kv_cache_pct=40.0))
    _request(state, T0 + 1, 0.25)
    _request(state, T0 + 2, None, status="error", error_kind="http_5xx")
    _request(state, T0 + 3, 0.5, trimmed=True)  # a warm-up request: not timed
    endpoint = state.endpoints["a"]
    assert list(endpoint.server_history) == [ServerPoint(T0, 40.0, 1, None, 3)]
    assert list(endpoint.ttft_history) == [TtftPoint(T0 + 1.25, 0.25)]


def test_timeline_skips_missing_values_and_scales() -> None:
    points = [ServerPoint(T0 + 1, 5.0, 0, 0.1), ServerPoint(T0 + 2, None, 0, None)]
    assert timeline(points, T0, lambda p: p.ttft_mean_s, 1000) == ([1.0], [100.0])
    assert timeline([], T0, lambda p: p.kv_cache_pct) == ([], [])


def test_sample_run_has_a_client_side_gap_and_an_endpoint_without_metrics() -> None:
    events = sample_events()
    with_metrics = {e.endpoint_id for e in events if isinstance(e, ServerSample)}
    assert "moe_jiunsong" not in with_metrics
    assert len(with_metrics) == 6
    state = FleetState()
    state.apply_all(events)
    bound = {eid for eid, e in state.endpoints.items() if ttft_comparison(e).client_bound}
    assert bound == {"dense_qwopus"}
    # Elsewhere the server saw nearly all of the client's wait.
    qwen = ttft_comparison(state.endpoints["moe_qwen36"])
    assert qwen.server_mean_s is not None and qwen.client_mean_s is not None
    assert qwen.server_mean_s < qwen.client_mean_s < 1.2 * qwen.server_mean_s


async def test_detail_charts_the_server_beside_the_client() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        app.open_detail("dense_qwopus")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        load = screen.query_one("#chart-server-load", Chart)
        assert load.display and not screen.query_one("#no-server-metrics").display
        assert any("\u2801" <= ch <= "\u28ff" for ch in str(load.render())), "no braille line"
        ttft = screen.query_one("#chart-ttft-server", Chart)
        # At 120 columns the chart is 40 wide: the short wording, means and the p50 range.
        subtitle = Content.from_markup(str(ttft.border_subtitle)).plain
        assert re.fullmatch(r"mean \d+ ≫ \d+ \(p50 [\d.]+–[\d.]+\) ms", subtitle), subtitle


async def test_detail_without_metrics_says_so_until_a_sample_comes() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        app.open_detail("moe_jiunsong")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        notice = screen.query_one("#no-server-metrics", Static)
        assert notice.display and notice.border_title == "no server metrics"
        assert "/metrics" in str(notice.render())
        assert not screen.query_one("#chart-server-load").display
        ttft = screen.query_one("#chart-ttft-server", Chart)
        assert "no server metrics" in str(ttft.border_subtitle)

        # The endpoint's metrics appear (a server restarted with them): the charts come back.
        last_t = app.state.last_t
        assert last_t is not None
        app.state.apply(ServerSample(last_t, "moe_jiunsong", kv_cache_pct=12.0, ttft_count=0))
        await asyncio.sleep(CHART_INTERVAL_S)  # the charts' throttle is in wall time
        app.redraw()
        await pilot.pause()
        assert screen.query_one("#chart-server-load").display
        assert not notice.display
        # The client's TTFTs are there; the server has reported no first token yet.
        assert Content.from_markup(str(ttft.border_subtitle)).plain == (
            "mean: not enough requests yet"
        )


def test_footnote_compares_means_and_gives_the_server_p50_as_a_range() -> None:
    close = TtftComparison(T0, 0.142, 0.139, 0.1, 0.25)
    assert [w.plain for w in ttft_gap_wordings(close)] == [
        "mean TTFT client 142 · server 139 ms · server p50 in 100–250 ms",
        "mean client 142 · server 139 (p50 100–250) ms",
        "mean 142 · 139 (p50 100–250) ms",
        "mean 142 · 139 ms",
    ]
    open_top = TtftComparison(T0, 3.2, 3.0, 2.56, None)
    assert ttft_gap_wordings(open_top)[0].plain.endswith("server p50 > 2560 ms")
    assert ttft_gap_wordings(open_top)[2].plain == "mean 3200 · 3000 (p50 > 2560) ms"
    no_buckets = TtftComparison(T0, 0.142, 0.139)
    assert [w.plain for w in ttft_gap_wordings(no_buckets)] == [
        "mean TTFT client 142 · server 139 ms",
        "mean 142 · 139 ms",
    ]


async def test_a_wide_detail_screen_spells_the_footnote_out() -> None:
    app, source = sample_app()
    async with app.run_test(size=(240, 40)) as pilot:
        await settle(pilot, source)
        app.open_detail("moe_qwen36")
        await pilot.pause()
        ttft = app.screen.query_one("#chart-ttft-server", Chart)
        subtitle = Content.from_markup(str(ttft.border_subtitle)).plain
        pattern = r"mean TTFT client (\d+) · server (\d+) ms · server p50 in [\d.]+–[\d.]+ ms"
        match = re.fullmatch(pattern, subtitle)
        assert match, subtitle
        assert int(match[2]) <= int(match[1])  # the server's share of the client's wait
        await pilot.resize_terminal(120, 36)  # narrower: a shorter wording, with the same figures
        await pilot.pause()
        short = Content.from_markup(str(ttft.border_subtitle)).plain
        assert short.startswith(f"mean {match[1]} · {match[2]} (p50 "), short


async def test_detail_shows_the_latest_errors_message() -> None:
    from nvfp4_tui.tui.widgets.fit_line import FitLine
    from tests.support.sample_events import TOOL_ERROR

    app, source = sample_app()
    async with app.run_test(size=(160, 36)) as pilot:
        await settle(pilot, source)
        app.open_detail("moe_huihui")  # its tool calls fail with the server's HTTP 400
        await pilot.pause()
        line = app.screen.query_one("#detail-error", FitLine)
        assert line.display
        text = line.render().plain
        assert "latest error" in text and "http_4xx" in text and TOOL_ERROR[:60] in text
        app.screen.dismiss()
        await pilot.pause()
        app.open_detail("moe_qwen36")  # no error: no line
        await pilot.pause()
        assert not app.screen.query_one("#detail-error", FitLine).display

"""FleetState read-outs against hand-computed numbers, one concern per test."""

from __future__ import annotations

import math

import pytest

from nvfp4_tui.core.endpoint_state import EndpointState
from nvfp4_tui.core.events import (
    EndpointStatus,
    GpuSample,
    PhaseFinished,
    PhaseStarted,
    RunFinished,
    RunStarted,
    ServerSample,
    TokenProgress,
)
from nvfp4_tui.core.figures.intervals import wilson_95
from nvfp4_tui.core.figures.scores import HEURISTIC, VERIFIED
from nvfp4_tui.core.phase_track import PhaseTrack
from nvfp4_tui.core.readouts import GpuPoint, PhaseRef, ServerPoint, TpsPoint
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.state import FleetState
from tests.support.digest import digest
from tests.support.factories import T0, endpoint_info

from .builders import failed, info, plan, request, three_endpoint_run


@pytest.fixture
def fleet() -> FleetState:
    state = FleetState()
    state.apply(three_endpoint_run())
    return state


def start(state: FleetState, endpoint_id: str, index: int, t: float = T0) -> None:
    phase = state.endpoints[endpoint_id].phase_progress()[index]
    state.apply(PhaseStarted(t, endpoint_id, phase.suite, phase.concurrency, index))


def finish(
    state: FleetState,
    endpoint_id: str,
    index: int,
    *,
    t: float,
    requests: int = 0,
    errors: int = 0,
    output_tokens: int = 0,
    wall_s: float = 1.0,
) -> None:
    phase = state.endpoints[endpoint_id].phase_progress()[index]
    state.apply(
        PhaseFinished(
            t,
            endpoint_id,
            phase.suite,
            phase.concurrency,
            index,
            requests,
            errors,
            output_tokens,
            wall_s,
        )
    )


def test_before_any_event_nothing_is_known() -> None:
    state = FleetState()
    assert state.status is None
    assert state.elapsed_s(T0) is None
    assert state.eta_s(T0) is None
    assert state.progress_fraction() == 0.0
    assert state.last_t is None
    assert digest(state)["endpoints"] == []


def test_run_started_lays_out_the_plan(fleet: FleetState) -> None:
    assert (fleet.run_id, fleet.run_name, fleet.status) == ("run-1", "demo", "running")
    assert fleet.started_t == T0
    assert list(fleet.endpoints) == ["a", "b", "c"]
    assert fleet.total_requests == 16
    a, b, c = fleet.endpoints.values()
    assert (a.planned_requests, b.planned_requests, c.planned_requests) == (9, 5, 2)
    assert [e.status for e in (a, b, c)] == ["waiting"] * 3
    assert a.gpu is fleet.gpus[("", 0)]
    assert b.gpu is fleet.gpus[("", 1)]
    assert c.gpu is None
    phases = a.phase_progress()
    assert [(p.phase_index, p.suite, p.concurrency, p.planned_requests) for p in phases] == [
        (0, "english", 1, 3),
        (1, "math", 1, 2),
        (2, "english", 2, 4),
    ]
    assert {p.state for p in phases} == {"pending"}
    assert a.in_flight == 0
    assert a.current_phase is None
    assert a.suites() == ("english", "math")
    assert fleet.elapsed_s(T0 + 12.5) == 12.5


def test_counts_of_ok_incomplete_and_error_are_kept_apart(fleet: FleetState) -> None:
    start(fleet, "a", 0)
    fleet.apply(request("a", request_index=0))
    fleet.apply(request("a", request_index=1, status="incomplete"))
    fleet.apply(failed("a", request_index=2))
    fleet.apply(request("b", request_index=0))
    a = fleet.endpoints["a"]
    assert (a.requests_ok, a.requests_incomplete, a.requests_error) == (1, 1, 1)
    assert a.requests_done == 3
    assert (fleet.requests_ok, fleet.requests_incomplete, fleet.errors) == (2, 1, 1)
    assert fleet.requests_done == 4
    assert fleet.progress_fraction() == pytest.approx(4 / 16)
    phase = a.phase_progress()[0]
    assert (phase.state, phase.requests_done, phase.errors, phase.fraction) == (
        "running",
        3,
        1,
        1.0,
    )


def ttft_p50(endpoint: EndpointState, concurrency: int = 1) -> float | None:
    """The TTFT median the pane shows for one closed-loop level."""
    timings = endpoint.level_timings(Load.of(concurrency, None))
    return timings.ttft_p50_s if timings is not None else None


def test_ttft_median_skips_errors(fleet: FleetState) -> None:
    start(fleet, "a", 0)
    for ttft_s in (0.4, 0.1, 0.2):
        fleet.apply(request("a", ttft_s=ttft_s))
    fleet.apply(failed("a", ttft_s=9.0))
    a = fleet.endpoints["a"]
    assert ttft_p50(a) == pytest.approx(0.2)
    fleet.apply(request("a", status="incomplete", ttft_s=0.3))
    assert ttft_p50(a) == pytest.approx(0.25)


def test_ttft_median_is_per_load_level(fleet: FleetState) -> None:
    # c=4 requests queue behind each other: pooled with c=1's, their median read neither level.
    start(fleet, "a", 0)
    for i in range(1, 11):
        fleet.apply(request("a", request_index=i, ttft_s=0.013))
        fleet.apply(request("a", request_index=100 + i, concurrency=4, ttft_s=1.7 + i / 100))
    a = fleet.endpoints["a"]
    assert ttft_p50(a, 1) == pytest.approx(0.013)
    assert ttft_p50(a, 4) == pytest.approx(1.755)


def test_decode_rate_now_is_live_while_streaming_then_recent_mean(fleet: FleetState) -> None:
    a = fleet.endpoints["a"]
    assert a.decode_tps_now() is None
    start(fleet, "a", 2, t=T0 + 1)
    assert a.in_flight is None  # a phase runs, no progress yet
    assert a.target_concurrency == 2
    assert a.current_phase == PhaseRef("english", 2, 2, T0 + 1)
    # Two streams decoding for the whole 0.5 s window: 150 tokens over 1 stream-second.
    fleet.apply(TokenProgress(T0 + 1.5, "a", 2, 300.0, decode_tokens=75, decode_s=0.5))
    fleet.apply(
        TokenProgress(T0 + 2, "a", in_flight=2, tokens_per_s=300.0, decode_tokens=75, decode_s=0.5)
    )
    assert a.in_flight == 2
    assert a.streaming
    assert a.live_tokens_per_s == 300.0
    assert fleet.live_tokens_per_s == 300.0
    assert a.decode_tps_now() == 150.0  # per stream
    assert a.decode_tps_now(now=T0 + 3) == 150.0
    assert list(a.decode_history) == [TpsPoint(T0 + 1.5, 150.0), TpsPoint(T0 + 2, 150.0)]
    # A live rate two seconds old is no longer "now"; nothing finished yet to fall back on.
    assert a.decode_tps_now(now=T0 + 4.5) is None
    fleet.apply(request("a", t=T0 + 1, e2e_s=3.0, decode_tps=100.0, phase_index=2, concurrency=2))
    fleet.apply(request("a", t=T0 + 1, e2e_s=3.5, decode_tps=120.0, phase_index=2, concurrency=2))
    # Pooled: their tokens after the first chunk over their 2.9 and 3.4 s spent decoding.
    assert a.decode_tps_now(now=T0 + 4.5) == pytest.approx((100 * 2.9 + 120 * 3.4) / 6.3)
    assert a.decode_history[-1] == TpsPoint(T0 + 4.5, 120.0)  # at the request's end
    finish(fleet, "a", 2, t=T0 + 5, requests=2, output_tokens=400, wall_s=4.0)
    assert (a.in_flight, a.live_tokens_per_s, a.streaming) == (0, None, False)
    assert a.target_concurrency is None
    assert a.current_phase is None
    assert a.decode_tps_now() is None  # between phases: the pane shows the figures per level
    assert fleet.live_tokens_per_s == 0.0


def test_live_decode_holds_steady_while_streams_start_and_end(fleet: FleetState) -> None:
    # Four streams at 100 tok/s each, started and ended at staggered moments: in any 0.25 s
    # window between 1 and 4 of them are decoding. Tokens over decoding stream-seconds stays
    # 100; the window's tokens over the streams in flight at its end swung from 25 to 400.
    a = fleet.endpoints["a"]
    start(fleet, "a", 1, t=T0)
    seen = []
    for tick in range(1, 41):
        decoding = 1 + tick % 4
        in_flight_at_end = 1 + (tick * 3) % 4
        fleet.apply(
            TokenProgress(
                T0 + tick * 0.25,
                "a",
                in_flight_at_end,
                decoding * 100.0,
                decode_tokens=decoding * 25,
                decode_s=decoding * 0.25,
            )
        )
        seen.append(a.decode_tps_now())
    assert all(value == pytest.approx(100.0) for value in seen[4:])


def test_fallback_decode_rate_is_the_mean_of_the_last_twenty(fleet: FleetState) -> None:
    start(fleet, "a", 0)
    for i in range(1, 26):
        fleet.apply(request("a", request_index=i, decode_tps=float(i)))
    a = fleet.endpoints["a"]
    assert a.decode_tps_now() == pytest.approx(sum(range(6, 26)) / 20)


def test_transient_progress_ends_with_the_endpoint_and_the_run(fleet: FleetState) -> None:
    start(fleet, "a", 0)
    start(fleet, "b", 0)
    fleet.apply(TokenProgress(T0 + 1, "a", 1, 140.0))
    fleet.apply(TokenProgress(T0 + 1, "b", 1, 130.0))
    fleet.apply(EndpointStatus(T0 + 2, "a", "down", "connection refused"))
    a, b = fleet.endpoints["a"], fleet.endpoints["b"]
    assert (a.in_flight, a.live_tokens_per_s) == (0, None)
    assert (a.status, a.status_message) == ("down", "connection refused")
    assert b.in_flight == 1
    fleet.apply(RunFinished(T0 + 3, "aborted", "cancelled"))
    assert (b.in_flight, b.live_tokens_per_s, b.current_phase) == (0, None, None)
    assert (fleet.status, fleet.finish_message, fleet.finished_t) == (
        "aborted",
        "cancelled",
        T0 + 3,
    )
    assert fleet.elapsed_s(T0 + 100) == 3.0
    assert fleet.eta_s(T0 + 100) == 0.0


def test_status_follows_reports_until_every_phase_is_over(fleet: FleetState) -> None:
    a = fleet.endpoints["a"]
    fleet.apply(EndpointStatus(T0, "a", "warmup"))
    assert a.status == "warmup"
    fleet.apply(EndpointStatus(T0 + 1, "a", "running"))
    for index in range(3):
        start(fleet, "a", index, t=T0 + 1 + index)
        assert a.status == "running"
        finish(fleet, "a", index, t=T0 + 2 + index)
    assert a.status == "done"
    # The runner's resume() reports "running" for every endpoint; finished ones stay done.
    fleet.apply(EndpointStatus(T0 + 9, "a", "running"))
    assert a.status == "done"
    assert fleet.endpoints["b"].status == "waiting"


def test_phase_rows_and_throughput_per_concurrency(fleet: FleetState) -> None:
    start(fleet, "a", 0, t=T0)
    finish(fleet, "a", 0, t=T0 + 4, requests=3, errors=1, output_tokens=600, wall_s=4.0)
    start(fleet, "a", 1, t=T0 + 4)
    finish(fleet, "a", 1, t=T0 + 6, requests=2, output_tokens=300, wall_s=2.0)
    start(fleet, "a", 2, t=T0 + 6)
    a = fleet.endpoints["a"]
    rows = a.phase_progress()
    assert [r.state for r in rows] == ["finished", "finished", "running"]
    assert rows[0].throughput_tps == 150.0
    assert (rows[0].started_t, rows[0].finished_t, rows[0].wall_s) == (T0, T0 + 4, 4.0)
    assert rows[2].throughput_tps is None
    assert a.current_phase == PhaseRef("english", 2, 2, T0 + 6)
    finish(fleet, "a", 2, t=T0 + 8.5, requests=4, output_tokens=1000, wall_s=2.5)
    by_level = a.throughput_by_load()
    assert [(r.load.label, r.phases, r.output_tokens, r.wall_s) for r in by_level] == [
        ("c=1", 2, 900, 6.0),
        ("c=2", 1, 1000, 2.5),
    ]
    assert by_level[0].throughput_tps == pytest.approx(150.0)
    assert by_level[1].throughput_tps == pytest.approx(400.0)


def test_quality_stats_per_suite_with_a_wilson_interval(fleet: FleetState) -> None:
    start(fleet, "a", 0)
    for score in (0.6, 0.8, 0.7):
        fleet.apply(request("a", score=score))
    fleet.apply(request("a", status="incomplete", score=0.9))  # a truncated reply keeps its score
    fleet.apply(failed("a", score=0.0))  # a failure has no answer to score
    fleet.apply(request("a", suite="math", phase_index=1, score=0.2))
    a = fleet.endpoints["a"]
    english = a.quality_stats("english", HEURISTIC)
    assert english.n == 4
    assert english.mean == pytest.approx(0.75)
    assert english.std == pytest.approx(math.sqrt(0.05 / 3))
    assert (english.ci95_low, english.ci95_high) == pytest.approx(wilson_95(0.75, 4))
    math_stats = a.quality_stats("math", HEURISTIC)
    assert (math_stats.n, math_stats.mean) == (1, 0.2)
    # Wilson at n = 1 is wide, and still inside [0, 1], unlike t's (undefined) one.
    assert math_stats.ci95_low is not None and 0 <= math_stats.ci95_low < 0.2
    assert math_stats.ci95_high is not None and 0.2 < math_stats.ci95_high <= 1
    assert a.figures.suite_quality(a.id, None, HEURISTIC).n == 5
    assert a.figures.suite_quality(a.id, None, HEURISTIC).mean == pytest.approx(3.2 / 5)
    assert a.quality_stats("coding", HEURISTIC).n == 0
    assert a.quality_stats("english", VERIFIED).n == 0  # each score kept apart


def test_quality_intervals_stay_within_the_scores_bounds(fleet: FleetState) -> None:
    # The case: two answers, 0.2 and 1.0. A t interval read 0.60 ± 5.1.
    start(fleet, "a", 0)
    fleet.apply(request("a", score=0.2))
    fleet.apply(request("a", score=1.0))
    stats = fleet.endpoints["a"].quality_stats("english", HEURISTIC)
    assert stats.mean == pytest.approx(0.6)
    assert stats.ci95_low is not None and stats.ci95_high is not None
    assert 0 <= stats.ci95_low < 0.6 < stats.ci95_high <= 1


def test_leaderboard_rows_per_suite_and_concurrency(fleet: FleetState) -> None:
    start(fleet, "a", 0)
    fleet.apply(request("a", ttft_s=0.1, decode_tps=100, e2e_tps=80, tokens_out=100, score=0.4))
    fleet.apply(request("a", ttft_s=0.3, decode_tps=120, e2e_tps=90, tokens_out=200, score=0.6))
    fleet.apply(failed("a"))
    finish(fleet, "a", 0, t=T0 + 3, requests=3, errors=1, output_tokens=300, wall_s=3.0)
    start(fleet, "a", 2)
    fleet.apply(request("a", concurrency=2, phase_index=2, ttft_s=0.5, decode_tps=90, score=1.0))
    start(fleet, "a", 1)
    fleet.apply(request("a", suite="math", phase_index=1, ttft_s=0.2, score=0.0))
    rows = fleet.endpoints["a"].leaderboard()
    assert [(r.suite, r.concurrency) for r in rows] == [
        ("english", 1),
        ("math", 1),
        ("english", 2),
    ]
    first = rows[0]
    assert (first.requests, first.ok, first.incomplete, first.errors) == (3, 2, 0, 1)
    assert first.score(HEURISTIC).mean == pytest.approx(0.5)
    assert first.score(HEURISTIC).n == 2
    assert first.decode_tps.mean == pytest.approx(110.0)
    assert first.e2e_tps.mean == pytest.approx(85.0)
    assert first.tokens_out_mean == pytest.approx(150.0)
    assert first.ttft_p50_s == pytest.approx(0.2)
    assert first.throughput_tps == pytest.approx(100.0)
    assert rows[2].throughput_tps is None  # its phase has not finished
    assert rows[2].ttft_p50_s == pytest.approx(0.5)


def test_recent_requests_ring_and_latest_answer(fleet: FleetState) -> None:
    start(fleet, "a", 0)
    fleet.apply(request("a", t=T0, e2e_s=2.0, answer_text="first", reasoning_text="hmm", score=0.7))
    fleet.apply(failed("a", t=T0 + 1, e2e_s=0.5, error_kind="reset", error_message="peer reset"))
    a = fleet.endpoints["a"]
    ok_row, error_row = a.recent_requests
    assert (ok_row.status, ok_row.ttft_s, ok_row.decode_tps, ok_row.tokens_out) == (
        "ok",
        0.1,
        100.0,
        90,
    )
    assert ok_row.score(HEURISTIC) == 0.7
    assert (error_row.status, error_row.error_kind, error_row.score(HEURISTIC)) == (
        "error",
        "reset",
        None,
    )
    assert error_row.error_message == "peer reset"
    assert a.last_answer is not None
    assert (a.last_answer.answer_text, a.last_answer.reasoning_text, a.last_answer.t) == (
        "first",
        "hmm",
        T0 + 2.0,
    )
    assert a.last_error is not None
    assert (a.last_error.kind, a.last_error.message, a.last_error.t) == (
        "reset",
        "peer reset",
        T0 + 1.5,
    )
    # A row that arrives late but ended earlier does not hide the latest error.
    fleet.apply(failed("a", t=T0, e2e_s=0.1, error_kind="timeout", error_message="late row"))
    assert a.last_error.kind == "reset"


def test_gpu_telemetry_first_last_latest_and_stale(fleet: FleetState) -> None:
    gpu = fleet.endpoints["a"].gpu
    assert gpu is fleet.gpus[("", 0)]  # one track, shared by the endpoint and the fleet
    assert gpu.stale(T0)  # no sample yet
    fleet.apply(GpuSample(T0, 0, vram_used_mib=1000.0, power_w=100.0, util_gpu_pct=0.0))
    fleet.apply(GpuSample(T0 + 0.5, 0, vram_used_mib=90_000.0, power_w=450.0, util_gpu_pct=97.0))
    fleet.apply(GpuSample(T0 + 1.0, 0, vram_used_mib=None, power_w=460.0))
    fleet.apply(GpuSample(T0 - 0.3, 0, vram_used_mib=500.0))  # arrives late, sampled first
    assert gpu.samples == 4
    assert gpu.latest is not None and gpu.latest.t == T0 + 1.0
    assert (gpu.first_vram_mib, gpu.first_vram_t) == (500.0, T0 - 0.3)
    assert (gpu.last_vram_mib, gpu.last_vram_t) == (90_000.0, T0 + 0.5)
    assert gpu.history[1] == GpuPoint(T0 + 0.5, 90_000.0, 450.0, 97.0)
    assert not gpu.stale(T0 + 5.9)
    assert gpu.stale(T0 + 6.1)
    assert ("", 7) not in fleet.gpus  # never seen
    assert fleet.endpoints["c"].gpu is None
    fleet.apply(GpuSample(T0, 5, vram_used_mib=1.0))  # a GPU no endpoint names is still tracked
    assert fleet.gpus[("", 5)].samples == 1
    # On one node the index alone names a card, whatever host a source reports (DCGM's name).
    fleet.apply(GpuSample(T0 + 2, 0, vram_used_mib=2.0, host="gpubox7"))
    assert gpu.samples == 5


def test_each_node_has_its_own_gpu_0() -> None:
    state = FleetState()
    endpoints = (
        endpoint_info("a", 0, node="node-a"),
        endpoint_info("b", 0, node="node-b"),
        endpoint_info("c", 1, node="node-b"),
    )
    state.apply(RunStarted(T0, "r", "r", endpoints, ()))
    state.apply(GpuSample(T0, 0, vram_used_mib=100.0, host="node-a"))
    state.apply(GpuSample(T0, 0, vram_used_mib=200.0, host="node-b"))
    # A source naming no node of the run (local NVML) reaches the one node using that index.
    state.apply(GpuSample(T0, 1, vram_used_mib=300.0))
    # GPU 0 is on two nodes: a sample naming neither is kept apart, never given to one of them.
    state.apply(GpuSample(T0, 0, vram_used_mib=400.0))
    a, b, c = (state.endpoints[e].gpu for e in "abc")
    assert a is not None and b is not None and c is not None
    assert (a.node, a.last_vram_mib) == ("node-a", 100.0)
    assert (b.node, b.last_vram_mib) == ("node-b", 200.0)
    assert (c.node, c.last_vram_mib) == ("node-b", 300.0)
    assert state.gpus[("", 0)].last_vram_mib == 400.0
    assert sorted(state.gpus) == [("", 0), ("node-a", 0), ("node-b", 0), ("node-b", 1)]


def test_gpu_samples_before_the_run_are_kept_and_linked() -> None:
    state = FleetState()
    state.apply(GpuSample(T0 - 10, 0, vram_used_mib=600.0))
    state.apply(three_endpoint_run())
    gpu = state.endpoints["a"].gpu
    assert gpu is not None and gpu.first_vram_mib == 600.0
    assert state.dropped == 0


def test_server_samples(fleet: FleetState) -> None:
    a = fleet.endpoints["a"]
    assert a.server_stale(T0)
    ttft = {"ttft_count": 2, "ttft_mean_s": 0.08, "ttft_p50_low_s": 0.06, "ttft_p50_high_s": 0.1}
    fleet.apply(ServerSample(T0, "a", kv_cache_pct=12.5, requests_waiting=0, **ttft))
    fleet.apply(ServerSample(T0 + 1, "a", kv_cache_pct=40.0, requests_waiting=3))
    assert a.server_latest is not None and a.server_latest.kv_cache_pct == 40.0
    assert list(a.server_history) == [
        ServerPoint(T0, 12.5, 0, 0.08, None, 2, 0.06, 0.1),
        ServerPoint(T0 + 1, 40.0, 3, None),
    ]
    assert not a.server_stale(T0 + 5)
    assert a.server_stale(T0 + 6.5)


def test_eta_from_how_long_a_request_takes_in_waves_of_the_concurrency() -> None:
    state = FleetState()
    state.apply(
        RunStarted(
            T0,
            "r",
            "eta",
            (info("a", 0), info("b", 1)),
            (plan("a", "english", 1, 6), plan("a", "math", 4, 8), plan("b", "english", 1, 10)),
        )
    )
    assert state.eta_s(T0 + 1) is None  # no phase began
    start(state, "a", 0, t=T0)
    for i in range(2):
        state.apply(request("a", t=T0 + 3 * i, request_index=i, e2e_s=2.5))
    a = state.endpoints["a"]
    # A request takes 2.5 s: 4 left one at a time, then 8 four at a time: 4 x 2.5 + 2 x 2.5.
    # The rate of finished requests (2 in 10 s) would have said 12 / 0.2 = 60 s.
    assert a.request_rate(T0 + 10) == pytest.approx(0.2)
    assert a.eta_s(T0 + 10) == pytest.approx(15.0)
    assert state.eta_s(T0 + 10) is None  # b has not begun, so its pace is unknown
    state.apply(EndpointStatus(T0 + 10, "b", "down", "refused"))
    assert state.eta_s(T0 + 10) == pytest.approx(15.0)
    assert state.progress_fraction() == pytest.approx(2 / 24)


def test_eta_before_any_request_finished_uses_the_rate() -> None:
    state = FleetState()
    state.apply(RunStarted(T0, "r", "eta", (info("a", 0),), (plan("a", "english", 1, 4),)))
    start(state, "a", 0, t=T0)
    state.apply(failed("a", t=T0 + 1))  # a failure says nothing of how long answers take
    assert state.endpoints["a"].eta_s(T0 + 10) == pytest.approx(3 / 0.1)


def test_duration_bound_phases_progress_by_time() -> None:
    state = FleetState()
    state.apply(
        RunStarted(
            T0,
            "r",
            "timed",
            (info("a", 0),),
            (plan("a", "english", 1, None, 30.0), plan("a", "english", 4, None, 30.0)),
        )
    )
    assert state.total_requests is None
    assert state.endpoints["a"].planned_requests is None
    start(state, "a", 0, t=T0)
    assert state.progress_fraction(now=T0 + 15) == pytest.approx(0.25)
    # No request finished: how far past its 30 s the phase runs is unknown, so is the ETA.
    assert state.eta_s(T0 + 15) is None
    finish(state, "a", 0, t=T0 + 30, wall_s=30.0)
    start(state, "a", 1, t=T0 + 30)
    assert state.progress_fraction(now=T0 + 36) == pytest.approx(0.6)
    assert state.endpoints["a"].phase_progress(now=T0 + 36)[1].fraction == pytest.approx(0.2)
    state.apply(request("a", t=T0 + 30, phase_index=1, concurrency=4, e2e_s=4.0))
    # 24 s of sending left, then the last of 4 workers' requests, 4/5 of a 4 s one on average.
    assert state.eta_s(T0 + 36) == pytest.approx(24.0 + 3.2)
    finish(state, "a", 1, t=T0 + 60, wall_s=30.0)
    state.apply(RunFinished(T0 + 60, "complete"))
    assert state.progress_fraction() == 1.0


def test_a_request_longer_than_its_phase_ends_the_phase() -> None:
    """The demo at c=1: a 10 s phase of a dense model whose answers take 19 s runs 19 s, not
    10 + 19; a short answer's phase runs its duration and half an answer."""
    long = PhaseTrack(0, "math", 1, None, 10.0)
    long.started_t = T0
    assert long.remaining_s(T0 + 4, None, 19.0) == pytest.approx(15.0)
    short = PhaseTrack(1, "math", 1, None, 10.0)
    assert short.remaining_s(T0, None, 2.0) == pytest.approx(11.0)  # pending: all of it
    open_loop = PhaseTrack(2, "math", 1, None, 10.0, rate_rps=2.0)
    assert open_loop.remaining_s(T0, None, 2.0) == pytest.approx(12.0)


def test_events_for_unknown_endpoints_are_dropped_and_counted() -> None:
    state = FleetState()
    state.apply(request("a"))  # before RunStarted nothing is known
    state.apply(RunFinished(T0, "complete"))
    assert state.dropped == 2
    state.apply(three_endpoint_run())
    version = state.version
    for event in (
        request("zzz"),
        failed("zzz"),
        TokenProgress(T0, "zzz", 1, 10.0),
        ServerSample(T0, "zzz"),
        EndpointStatus(T0, "zzz", "running"),
        PhaseStarted(T0, "zzz", "english", 1, 0),
        PhaseFinished(T0, "zzz", "english", 1, 0, 1, 0, 10, 1.0),
        object(),
    ):
        state.apply(event)  # type: ignore[arg-type]
    assert state.dropped == 10
    assert state.version == version
    assert state.requests_done == 0


def test_non_finite_numbers_do_not_poison_statistics(fleet: FleetState) -> None:
    start(fleet, "a", 0)
    fleet.apply(
        request("a", ttft_s=math.nan, decode_tps=math.inf, e2e_tps=math.nan, score=math.nan)
    )
    fleet.apply(request("a", ttft_s=0.2, decode_tps=50.0, e2e_tps=40.0, score=1.0))
    fleet.apply(TokenProgress(T0 + 1, "a", 1, math.nan))
    a = fleet.endpoints["a"]
    assert a.requests_ok == 2
    assert ttft_p50(a) == 0.2
    assert a.quality_stats("english", HEURISTIC).mean == 1.0
    assert a.decode_tps_now() == 50.0


def test_a_second_run_started_starts_over_but_keeps_gpu_history(fleet: FleetState) -> None:
    fleet.apply(GpuSample(T0, 0, vram_used_mib=100.0))
    start(fleet, "a", 0)
    fleet.apply(request("a"))
    fleet.apply(RunStarted(T0 + 100, "run-2", "again", (info("a", 0),), (plan("a", "x", 1, 1),)))
    assert fleet.run_id == "run-2"
    assert fleet.requests_done == 0
    assert list(fleet.endpoints) == ["a"]
    gpu = fleet.endpoints["a"].gpu
    assert gpu is not None and gpu.samples == 1


def test_last_t_is_the_latest_moment_any_event_speaks_of(fleet: FleetState) -> None:
    start(fleet, "a", 0, t=T0 + 1)
    fleet.apply(request("a", t=T0 + 2, e2e_s=5.0))  # sent at +2, ended at +7
    fleet.apply(GpuSample(T0 + 3, 0))
    assert fleet.last_t == T0 + 7
    fleet.apply(GpuSample(T0 + 8, 0))
    assert fleet.last_t == T0 + 8


def test_a_request_ten_times_its_level_s_median_is_marked_a_burst(fleet: FleetState) -> None:
    start(fleet, "a", 0)
    for i, rate in enumerate((114.0, 4722.0, 143.0)):
        fleet.apply(request("a", request_index=i, decode_tps=rate))
    fleet.apply(request("a", request_index=9, concurrency=4, decode_tps=1000.0))
    a = fleet.endpoints["a"]
    marked = {row.request_index: a.decode_outlier(row) for row in a.recent_requests}
    # 4722 is 33x the c=1 median (143); 1000 at c=4 is that level's own median.
    assert marked == {0: False, 1: True, 2: False, 9: False}

"""The fleet's totals add up what each endpoint shows: every stream's tokens, requests, errors,
and each GPU's power once."""

from __future__ import annotations

import pytest

from nvfp4_tui.core.events import (
    GpuSample,
    PhasePlan,
    PhaseStarted,
    RunStarted,
    TokenProgress,
)
from nvfp4_tui.core.figures.fleet import fleet_totals
from nvfp4_tui.core.state import FleetState
from tests.support.factories import T0, endpoint_info, request
from tests.support.sample_events import PARTWAY_S, START_T, sample_events


def test_the_sample_fleet_adds_up() -> None:
    state = FleetState()
    state.apply_all(sample_events())
    now = START_T + PARTWAY_S
    totals = fleet_totals(state.endpoints.values(), now)
    endpoints = list(state.endpoints.values())
    assert totals.endpoints == 7 and totals.active == 7
    assert totals.requests_done == state.requests_done == 208
    assert totals.errors == state.errors == 6
    assert totals.power_gpus == 7
    latest = [e.gpu.latest.power_w for e in endpoints if e.gpu and e.gpu.latest]
    assert totals.power_w == pytest.approx(sum(p for p in latest if p is not None))
    streaming = [e.live_tokens_per_s for e in endpoints if e.streaming]
    assert streaming and not totals.decode_estimated
    assert totals.decode_tps is not None and totals.decode_tps >= sum(s or 0 for s in streaming)


def _two_on_one_gpu() -> FleetState:
    state = FleetState()
    a, b = endpoint_info("a", 0), endpoint_info("b", 0)
    plans = (PhasePlan("a", "math", 2, 4), PhasePlan("b", "math", 1, 4))
    state.apply(RunStarted(T0, "r", "run", (a, b), plans))
    state.apply(PhaseStarted(T0 + 1, "a", "math", 2, 0))
    state.apply(PhaseStarted(T0 + 1, "b", "math", 1, 0))
    state.apply(GpuSample(T0 + 2, 0, power_w=300.0))
    state.apply(TokenProgress(T0 + 2, "a", 2, 200.0, 200, 2.0))
    return state


def test_a_gpu_shared_by_two_endpoints_draws_its_power_once() -> None:
    totals = fleet_totals(_two_on_one_gpu().endpoints.values(), T0 + 2.5)
    assert totals.power_w == 300.0 and totals.power_gpus == 1


def test_without_live_progress_the_rate_is_an_estimate_and_says_so() -> None:
    state = _two_on_one_gpu()
    # b has no live progress: one finished request at 50 tok/s and one stream in flight.
    state.apply(
        request(
            "b", t=T0 + 1.2, suite="math", concurrency=1, ttft_s=0.1, e2e_s=1.1, decode_tps=50.0
        )
    )
    state.endpoints["b"].in_flight = 1
    totals = fleet_totals(state.endpoints.values(), T0 + 2.5)
    assert totals.decode_estimated
    assert totals.decode_tps == pytest.approx(200.0 + 50.0)


def test_stale_power_is_left_out() -> None:
    totals = fleet_totals(_two_on_one_gpu().endpoints.values(), T0 + 600)
    assert totals.power_w is None and totals.power_gpus == 0

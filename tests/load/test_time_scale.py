"""A run against a faster simulator (demo --time-scale): its schedule is modelled seconds, so it
runs that much faster; its records are the modelled GPU's; a client that fell behind is said."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from nvfp4_tui.bench.client import Measurement
from nvfp4_tui.bench.model_time import ModelTime
from nvfp4_tui.bench.runner import Runner
from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.events import (
    Event,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RunStarted,
)
from nvfp4_tui.core.phase_track import PhaseTrack
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.core.timing_doubt import TIMING_DOUBT_LAG_S
from nvfp4_tui.output.report import doubt_table
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.sources.replay import timeline_t
from nvfp4_tui.tui.widgets.run_header import run_readout
from tests.support.factories import T0, endpoint_info

from .files import endpoint_toml, write_profile

SCALE = 10.0
DURATION_S = 3.0  # modelled: 0.3 s of real time at ×10
DECODE_TPS = 40.0  # the modelled GPU's


def test_a_measurement_in_modelled_time() -> None:
    real = Measurement(
        "ok", queue_s=0.01, ttft_s=0.02, e2e_s=0.5, itl_p50_s=0.003, decode_tps=400.0,
        e2e_tps=300.0, retry_after_s=2.0, tokens_out=150,
    )  # fmt: skip
    modelled = ModelTime(SCALE).measurement(real)
    assert (modelled.queue_s, modelled.ttft_s, modelled.e2e_s) == pytest.approx((0.1, 0.2, 5.0))
    assert modelled.itl_p50_s == pytest.approx(0.03) and modelled.itl_p95_s is None
    assert (modelled.decode_tps, modelled.e2e_tps) == pytest.approx((40.0, 30.0))
    # What guards the client stays in real seconds, and counts are no time at all.
    assert (modelled.retry_after_s, modelled.tokens_out) == (2.0, 150)
    assert ModelTime().measurement(real) is real


def _run(tmp_path: Path, scale: float) -> list[Event]:
    path = write_profile(
        tmp_path,
        f"concurrency = [1]\nduration_s = {DURATION_S}\n",
        [endpoint_toml("m", 0, decode_tps=DECODE_TPS, ttft_s=0.2)],
        max_tokens=24,
    )
    profile = load_profile(path)
    suites = load_suites(profile.suite_dirs, profile.run.suites)
    events: list[Event] = []

    async def main() -> None:
        async with SimFleet(profile.endpoints, time_scale=scale) as fleet:
            plan = with_urls(profile, fleet.urls, scale)
            await Runner(plan, suites, "scaled", events.append).run()

    asyncio.run(main())
    return events


def test_a_scaled_run_keeps_the_modelled_schedule_in_less_real_time(tmp_path: Path) -> None:
    events = _run(tmp_path, SCALE)
    started = next(e for e in events if isinstance(e, PhaseStarted))
    finished = next(e for e in events if isinstance(e, PhaseFinished))
    # The phase sent for its 3 modelled seconds: 0.3 s of real time, and well under 3 s even on a
    # loaded box (a phase on real time sends for all of its 3 s).
    assert finished.t - started.t < DURATION_S
    assert finished.wall_s >= DURATION_S
    rows = [e for e in events if isinstance(e, RequestFinished) and e.status != "error"]
    assert rows
    for row in rows:  # the modelled GPU's rate, not ten times it (a lagging loop reads fast)
        assert row.decode_tps is not None and DECODE_TPS / 2 < row.decode_tps < DECODE_TPS * 2
        assert row.ttft_s is not None and row.ttft_s > 0.1  # modelled 0.2 s, not 0.02


def test_a_scaled_phase_progresses_on_real_time() -> None:
    track = PhaseTrack(0, "essay", 1, None, DURATION_S, time_scale=SCALE)
    track.started_t = T0
    assert track.fraction(T0 + 0.15) == pytest.approx(0.5)
    # 0.15 s of real time left, and half a modelled 1 s request (0.1 s real) after it.
    assert track.remaining_s(T0 + 0.15, None, 1.0) == pytest.approx(0.2)


def _lagging_state(scale: float, lag_s: float) -> FleetState:
    info = endpoint_info("m", 0, simulated=True, time_scale=scale)
    state = FleetState()
    state.apply(RunStarted(T0, "r", "r", (info,), (PhasePlan("m", "essay", 1, None, 3.0),)))
    state.apply(PhaseStarted(T0, "m", "essay", 1, 0))
    phase = PhaseFinished(T0 + 0.3, "m", "essay", 1, 0, 3, 0, 60, 3.0, loop_lag_p99_s=lag_s)
    state.apply(phase)
    return state


def test_a_scaled_client_that_fell_behind_is_said() -> None:
    behind = _lagging_state(SCALE, TIMING_DOUBT_LAG_S * 6)
    readout = run_readout(behind, T0 + 1, paused=False, source_ended=False)
    assert readout.time_scale == SCALE
    assert readout.behind_s == pytest.approx(TIMING_DOUBT_LAG_S * 6)
    assert (
        run_readout(_lagging_state(SCALE, 0.001), T0 + 1, paused=False, source_ended=False).behind_s
        is None
    )
    # On real time the same lag is a timing doubt, shown in the panes, not a clock left behind.
    assert (
        run_readout(
            _lagging_state(1.0, TIMING_DOUBT_LAG_S * 6), T0 + 1, paused=False, source_ended=False
        ).behind_s
        is None
    )


def test_the_report_says_a_scaled_client_could_not_keep_up() -> None:
    info = endpoint_info("m", 0, simulated=True, time_scale=SCALE)
    phase = PhaseFinished(T0, "m", "essay", 1, 0, 3, 0, 60, 3.0, loop_lag_p99_s=0.03)
    table = doubt_table([phase], (info,))
    assert table is not None and "could not keep up" in table[0]
    real = doubt_table([phase], (replace(info, time_scale=1.0),))
    assert real is not None and "could not keep up" not in real[0]


def test_a_scaled_request_ends_on_the_real_timeline() -> None:
    info = endpoint_info("m", 0, simulated=True, time_scale=SCALE)
    state = FleetState()
    state.apply(RunStarted(T0, "r", "r", (info,), (PhasePlan("m", "essay", 1, None, 3.0),)))
    row = RequestFinished(T0, "m", "essay", "p0", 1, 0, 0, "ok", 0.0, ttft_s=0.2, e2e_s=2.0)
    state.apply(row)
    # 2 modelled seconds are 0.2 s of the run's real timeline, in the state and in a replay.
    assert state.last_t == pytest.approx(T0 + 0.2)
    assert timeline_t(row, {"m": SCALE}) == pytest.approx(T0 + 0.2)

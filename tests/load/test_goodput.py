"""Goodput, attainment and window throughput worked out by hand equal the tool's, everywhere the
tool shows them: the tracker the runner uses, the live state, and the report's rows."""

from __future__ import annotations

from dataclasses import replace

import pytest

from nvfp4_tui.core.events import PhasePlan, RunStarted
from nvfp4_tui.core.slo import (
    LoadTracker,
    SloTargets,
    capacity_rows,
    meets,
    misses,
    tpot_s,
)
from nvfp4_tui.core.state import FleetState
from tests.load.records import (
    PHASE_0,
    PHASE_0_COUNTED,
    PHASE_0_MET,
    PHASE_0_WINDOW_S,
    PHASE_1,
    PHASE_1_REQUESTS,
    PHASE_1_WINDOW_S,
    TARGETS,
    record,
    run_events,
)

SLO = SloTargets(ttft_s=0.5, tpot_s=0.05, e2e_s=30.0)
NO_TARGETS = dict.fromkeys(TARGETS)
# Tokens generated inside phase 0's window [1.0 s, 35.0 s]: request 0 (sent at 0.5, first token
# at 0.7, done at 1.1, 9 tokens) has 8 tokens spread over 0.4 s, 0.1 s of which are inside: 2;
# every other request that did not fail lies wholly inside: 101 + 11 + 101 + 1000 + 41 + 1.
PHASE_0_WINDOW_TOKENS = 2 + 101 + 11 + 101 + 1000 + 41 + 1


def test_each_record_meets_or_misses_as_worked_out() -> None:
    outcomes = [misses(SLO, r) for r in PHASE_0]
    assert outcomes == [(), (), ("ttft",), ("tpot",), ("e2e",), ("error",), (), ()]
    assert tpot_s(0.2, 5.2, 101) == pytest.approx(0.05)
    assert tpot_s(0.45, 0.45, 1) is None
    # No targets: only failures miss.
    assert [meets(SloTargets(), r) for r in PHASE_0] == [r.status != "error" for r in PHASE_0]
    # Without a TTFT neither TTFT nor TPOT can be shown to be met; unset targets are not checked.
    assert misses(SLO, record(0, 0, 0.0, "ok", None, 1.0, 5)) == ("ttft", "tpot")
    assert misses(SloTargets(e2e_s=2.0), record(0, 0, 0.0, "ok", None, 1.0, 5)) == ()


def test_goodput_by_hand_equals_the_tracker() -> None:
    plans = [
        PhasePlan("a", "essay", 4, 8, **TARGETS),
        PhasePlan("a", "essay", 8, PHASE_1_REQUESTS, **TARGETS),
    ]
    tracker = LoadTracker(plans)
    for r in [*PHASE_0, *PHASE_1]:
        tracker.add(r)
    phase = tracker.phase(0)
    assert phase is not None
    assert (phase.requests, phase.met, phase.errors, phase.trimmed) == (
        PHASE_0_COUNTED,
        PHASE_0_MET,
        1,
        1,
    )
    assert phase.window_s == pytest.approx(PHASE_0_WINDOW_S)
    assert phase.attainment == pytest.approx(3 / 7)
    assert phase.goodput_rps == pytest.approx(3 / 34)
    assert phase.throughput_tps == pytest.approx(PHASE_0_WINDOW_TOKENS / 34)

    second = tracker.phase(1)
    assert second is not None
    assert second.goodput_rps == pytest.approx(8 / PHASE_1_WINDOW_S)
    assert second.attainment == 1.0
    assert second.throughput_tps == pytest.approx(8 * 41 / PHASE_1_WINDOW_S)

    low, high = tracker.points()
    assert (low.load.label, high.load.label) == ("c=4", "c=8")
    assert (low.sustained, high.sustained) == (False, True)
    # Capacity needs every step below it sustained: the first one was not.
    assert tracker.capacity() is None
    # Throughput fell from c=4 to c=8: the knee is c=4.
    assert tracker.knee() == low


def test_live_state_shows_the_same_goodput_and_leaves_trimmed_requests_untimed() -> None:
    state = FleetState()
    state.apply_all(run_events())
    endpoint = state.endpoints["a"]
    phase = endpoint.load.phase(0)
    assert phase is not None
    assert phase.goodput_rps == pytest.approx(3 / 34)
    assert phase.attainment == pytest.approx(3 / 7)
    assert phase.finished
    # Finished phases keep their window's tokens folded into one number.
    assert phase.throughput_tps == pytest.approx(PHASE_0_WINDOW_TOKENS / 34)
    low, high = endpoint.load.points()
    assert low.throughput_tps == pytest.approx(PHASE_0_WINDOW_TOKENS / 34)
    assert high.goodput_rps == pytest.approx(8 / PHASE_1_WINDOW_S)
    current = endpoint.load.current()
    assert current is not None and current.phase_index == 1
    assert endpoint.load.targets == SloTargets(0.5, 0.05, 30.0, 0.9)
    # TTFTs of the 6 counted phase-0 requests that did not fail and the 8 of phase 1; the
    # warm-up request is counted as done but its TTFT is left out.
    assert len(endpoint.ttft_history) == 14
    assert endpoint.requests_done == 16


def test_report_rows_carry_the_same_numbers() -> None:
    [row] = capacity_rows(run_events())
    assert row.endpoint == "a" and row.load_kind == "concurrency"
    assert row.capacity is None and row.knee == 4.0 and row.max_load == 8.0 and row.steps == 2
    assert (row.slo_ttft_s, row.slo_tpot_s, row.slo_e2e_s, row.slo_attainment) == (
        0.5,
        0.05,
        30.0,
        0.9,
    )
    # Without targets or a sweep there is no capacity row.
    started, *rest = run_events()
    assert isinstance(started, RunStarted)
    plain = replace(started, phases=tuple(replace(p, **NO_TARGETS) for p in started.phases))
    assert capacity_rows([plain, *rest]) == []

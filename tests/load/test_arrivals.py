"""Open-loop schedules: Poisson gaps fit the exponential law; the dispatcher keeps the schedule,
says how late every late send was, and never drops or delays one quietly."""

from __future__ import annotations

import asyncio
import math
from itertools import islice, pairwise

import pytest

from nvfp4_tui.bench.load import (
    OpenLoopResult,
    TrimWindows,
    arrival_offsets_s,
    phase_schedule,
    run_open_loop,
    schedule_seed,
)
from nvfp4_tui.core.events import PhasePlan
from nvfp4_tui.core.slo import LATE_AFTER_S
from tests.support.virtual_clock import run_virtual, virtual_loop

RATE_RPS = 8.0
N_GAPS = 4000


def ks_distance_to_exponential(gaps: list[float], rate: float) -> float:
    """The Kolmogorov-Smirnov distance between the gaps' empirical law and Exp(rate)."""
    ordered = sorted(gaps)
    n = len(ordered)
    distance = 0.0
    for i, gap in enumerate(ordered):
        cdf = 1.0 - math.exp(-rate * gap)
        distance = max(distance, (i + 1) / n - cdf, cdf - i / n)
    return distance


def ks_critical_distance(n: int, alpha: float) -> float:
    """Asymptotic one-sample KS critical value (Stephens' small-n correction)."""
    c = math.sqrt(-0.5 * math.log(alpha / 2))
    return c / (math.sqrt(n) + 0.12 + 0.11 / math.sqrt(n))


def gaps_of(offsets: list[float]) -> list[float]:
    return [b - a for a, b in pairwise(offsets)]


def test_poisson_gaps_fit_the_exponential_law() -> None:
    offsets = list(islice(arrival_offsets_s(RATE_RPS, "poisson", "7:a:0"), N_GAPS + 1))
    assert offsets[0] == 0.0
    gaps = gaps_of(offsets)
    critical = ks_critical_distance(len(gaps), alpha=0.01)
    assert ks_distance_to_exponential(gaps, RATE_RPS) < critical
    assert sum(gaps) / len(gaps) == pytest.approx(1 / RATE_RPS, rel=0.05)
    # The test can fail: constant gaps, and Poisson gaps at twice the rate, are rejected.
    constant = gaps_of(list(islice(arrival_offsets_s(RATE_RPS, "constant", "x"), N_GAPS + 1)))
    assert constant == pytest.approx([1 / RATE_RPS] * N_GAPS)
    assert ks_distance_to_exponential(constant, RATE_RPS) > critical
    assert ks_distance_to_exponential(gaps, 2 * RATE_RPS) > critical


def test_poisson_schedule_is_seeded_per_run_endpoint_and_phase() -> None:
    plan = PhasePlan("a", "essay", 0, 50, rate_rps=RATE_RPS, arrivals="poisson")
    seed = schedule_seed(3, "a", 0)
    assert phase_schedule(plan, seed) == phase_schedule(plan, seed)
    assert phase_schedule(plan, seed) != phase_schedule(plan, schedule_seed(3, "a", 1))
    assert phase_schedule(plan, seed) != phase_schedule(plan, schedule_seed(4, "a", 0))
    assert len(phase_schedule(plan, seed)) == 50
    timed = PhasePlan("a", "essay", 0, None, 10.0, rate_rps=RATE_RPS, arrivals="constant")
    schedule = phase_schedule(timed, seed)
    assert len(schedule) == 80 and schedule[-1] < 10.0


def test_trim_windows_by_count_and_by_time() -> None:
    by_count = TrimWindows(warmup_requests=2, cooldown_requests=3, planned_requests=10)
    assert [by_count.trimmed(i, 0.0) for i in range(10)] == [True] * 2 + [False] * 5 + [True] * 3
    by_time = TrimWindows(warmup_s=1.0, cooldown_s=2.0, planned_end_s=10.0)
    assert [by_time.trimmed(0, s) for s in (0.5, 1.0, 7.9, 8.1)] == [True, False, False, True]
    assert TrimWindows().mark(0, 0.0) is None and by_time.mark(0, 5.0) is False


# (index, due_s, late_s, the virtual time it was sent) of each send.
Sent = list[tuple[int, float, float, float]]


async def dispatch(schedule: list[float], send_s: float, **options) -> tuple[OpenLoopResult, Sent]:
    """``run_open_loop`` on the virtual clock, each send taking exactly ``send_s``."""
    loop = virtual_loop()
    sent: Sent = []

    async def send(index: int, due_s: float, late_s: float) -> None:
        sent.append((index, due_s, late_s, loop.time()))
        await asyncio.sleep(send_s)

    result = await run_open_loop(schedule, send, clock=loop.time, **options)
    return result, sent


def test_an_unhurried_schedule_is_kept() -> None:
    schedule = [i * 0.02 for i in range(20)]
    result, sent = run_virtual(dispatch(schedule, 0.005, max_in_flight=64))
    assert [i for i, *_ in sent] == list(range(20))
    assert [at for *_, at in sent] == pytest.approx(schedule, abs=1e-9)  # none early, none late
    assert result.sent == 20 and result.unsent == 0
    assert result.late == 0 and result.late_max_s is None


def test_a_full_client_sends_late_and_says_how_late() -> None:
    # One slot, requests of 50 ms due every 10 ms: request i leaves at 50 ms * i.
    schedule = [i * 0.01 for i in range(8)]
    result, sent = run_virtual(dispatch(schedule, 0.05, max_in_flight=1))
    assert result.sent == 8 and result.unsent == 0
    assert [at for *_, at in sent] == pytest.approx([0.05 * i for i in range(8)], abs=1e-9)
    assert [late for _, _, late, _ in sent] == pytest.approx([0.04 * i for i in range(8)], abs=1e-9)
    assert result.late == sum(late > LATE_AFTER_S for _, _, late, _ in sent) == 7
    assert result.late_max_s == pytest.approx(0.28, abs=1e-9)


def test_a_busy_event_loop_makes_sends_late() -> None:
    schedule = [i * 0.01 for i in range(10)]

    async def blocked() -> tuple[OpenLoopResult, Sent]:
        # The loop is held for 150 ms at 5 ms (a stalled client): all due meanwhile leave late.
        loop = virtual_loop()
        loop.call_later(0.005, loop.stall, 0.15)
        return await dispatch(schedule, 0.001, max_in_flight=64)

    result, sent = run_virtual(blocked())
    assert result.sent == 10
    late_by_index = {index: late for index, _, late, _ in sent}
    assert late_by_index[0] == 0.0
    assert [late_by_index[i] for i in range(1, 10)] == pytest.approx(
        [0.155 - 0.01 * i for i in range(1, 10)], abs=1e-9
    )
    assert result.late == 9


def test_sending_stops_at_the_phase_end_and_counts_what_was_due() -> None:
    # Requests of 100 ms through one slot: sent at 0, 0.1 and 0.2; at 0.3 the phase is over.
    schedule = [i * 0.01 for i in range(20)]
    result, sent = run_virtual(dispatch(schedule, 0.1, max_in_flight=1, send_until_s=0.25))
    assert result.sent == len(sent) == 3
    assert result.unsent == 17  # all were due before sending stopped


def test_stop_ends_sending_at_a_request_count() -> None:
    result, sent = run_virtual(
        dispatch([0.0] * 10, 0.001, max_in_flight=64, stop=lambda count: count >= 4)
    )
    assert result.sent == 4 and len(sent) == 4


def test_a_pause_shifts_the_schedule_instead_of_making_it_late() -> None:
    resume = asyncio.Event()
    schedule = [i * 0.02 for i in range(6)]

    async def paused() -> tuple[OpenLoopResult, Sent]:
        # Paused from 30 ms to 250 ms: the send due at 40 ms leaves at 250 ms, the rest after it.
        loop = virtual_loop()
        loop.call_later(0.03, resume.clear)
        loop.call_later(0.25, resume.set)
        resume.set()
        return await dispatch(schedule, 0.001, max_in_flight=64, resume=resume)

    result, sent = run_virtual(paused())
    assert result.sent == 6
    shifted = [0.0, 0.02] + [due + 0.21 for due in schedule[2:]]
    assert [at for *_, at in sent] == pytest.approx(shifted, abs=1e-9)
    assert result.late == 0 and result.late_max_s is None

"""The runner's open-loop phases, warm-up and cool-down windows and phase limits, against the
simulated fleet."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from nvfp4_tui.bench.load import phase_schedule, schedule_seed
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.core.events import Event, PhaseFinished, RequestFinished, RunStarted
from nvfp4_tui.core.slo import LATE_AFTER_S
from tests.load.files import endpoint_toml, run_profile, write_profile


def records(events: list[Event]) -> list[RequestFinished]:
    return sorted((e for e in events if isinstance(e, RequestFinished)), key=lambda r: r.t)


def finished(events: list[Event]) -> list[PhaseFinished]:
    return [e for e in events if isinstance(e, PhaseFinished)]


def schedule_misfit(sends: list[float], schedule: list[float]) -> float:
    """The median of each send's delay past its slot, counted from the quickest send's."""
    delays = [sent - due for sent, due in zip(sends, schedule, strict=True)]
    return statistics.median(d - min(delays) for d in delays)


def test_an_overloaded_open_loop_counts_every_late_send(tmp_path: Path) -> None:
    # 20 requests/s at most one in flight, each ~0.17 s: the client cannot keep up, on purpose.
    run = 'rate = 20\narrivals = "constant"\nmax_concurrency = 1\nrequests = 12\n'
    profile = load_profile(
        write_profile(tmp_path, run, [endpoint_toml("slow", 0, decode_tps=20.0)])
    )
    events, stats = run_profile(profile, time_scale=5.0)
    rows = records(events)
    [phase] = finished(events)
    assert len(rows) == 12 and all(r.status != "error" for r in rows)
    assert {r.concurrency for r in rows} == {1}
    assert stats["max_in_flight"] == 1
    by_index = sorted(rows, key=lambda r: r.request_index)
    lateness = [r.late_s for r in by_index]
    assert all(x is not None for x in lateness)
    # Request i is due at 0.05 s * i but cannot leave before the i requests ahead of it ended.
    for i, row in enumerate(by_index[1:], start=1):
        ahead = sum(r.e2e_s or 0.0 for r in by_index[:i])
        assert (row.late_s or 0.0) >= ahead - 0.05 * i - 0.01
    assert phase.late_requests == sum((x or 0.0) > LATE_AFTER_S for x in lateness) >= 10
    assert phase.unsent_requests == 0
    # The wait for a slot is lateness, not queue time inside the client: a send late by a whole
    # request's time spent next to nothing queued.
    late_sends = [x for x in lateness if x is not None and x > LATE_AFTER_S]
    assert max(r.queue_s for r in rows) < 0.5 * min(late_sends)


@pytest.mark.slow  # sends within 10 ms of a 40 ms-gap schedule: 21 ms off on a box at load 6
def test_an_open_loop_sends_on_its_poisson_schedule(tmp_path: Path) -> None:
    run = 'rate = 25\narrivals = "poisson"\nrequests = 30\nseed = 11\n'
    profile = load_profile(write_profile(tmp_path, run, [endpoint_toml("fast", 0)]))
    events, stats = run_profile(profile, time_scale=20.0)
    [started] = [e for e in events if isinstance(e, RunStarted)]
    [plan] = started.phases
    assert (plan.rate_rps, plan.arrivals, plan.concurrency) == (25.0, "poisson", 0)
    schedule = phase_schedule(plan, schedule_seed(11, "fast", 0))
    rows = sorted(records(events), key=lambda r: r.request_index)
    assert len(rows) == 30 and all(r.status != "error" for r in rows)
    # Less each send's lateness, the sends sit on the schedule, give or take the few ms a busy
    # machine takes to start a send's task: typically (the median) within a quarter of the mean
    # gap, and far closer than to another seed's schedule or to evenly spaced sends.
    sends = [row.t - (row.late_s or 0.0) for row in rows]
    fit = schedule_misfit(sends, schedule)
    assert fit < 0.25 / plan.rate_rps
    others = [phase_schedule(plan, schedule_seed(seed, "fast", 0)) for seed in (12, 13, 14)]
    others.append([i / plan.rate_rps for i in range(len(schedule))])
    assert all(fit * 5 < schedule_misfit(sends, other) for other in others)
    # Uncapped: requests overlapped as their arrivals made them.
    assert stats["max_in_flight"] > 1


def test_warmup_and_cooldown_requests_are_marked_and_left_out(tmp_path: Path) -> None:
    run = "concurrency = [2]\nrequests = 8\nwarmup_requests = 2\ncooldown_requests = 3\n"
    profile = load_profile(write_profile(tmp_path, run, [endpoint_toml("e", 0, decode_tps=50)]))
    events, _ = run_profile(profile, time_scale=20.0)
    rows = sorted(records(events), key=lambda r: r.request_index)
    assert [r.trimmed for r in rows] == [True, True, False, False, False, True, True, True]
    assert all(r.late_s is None for r in rows)


def test_a_phase_without_windows_leaves_trimmed_unset(tmp_path: Path) -> None:
    profile = load_profile(write_profile(tmp_path, "requests = 2\n", [endpoint_toml("e", 0)]))
    events, _ = run_profile(profile, time_scale=20.0)
    assert {r.trimmed for r in records(events)} == {None}


@pytest.mark.parametrize(
    ("run", "limit", "most"),
    [
        ("concurrency = [2]\nrequests = 40\nmax_errors = 3\n", "max_errors", 4),
        ("concurrency = [2]\nduration_s = 30\nmax_requests = 5\n", "max_requests", 5),
        ("rate = 50\nrequests = 400\nmax_errors = 3\n", "max_errors", 60),
    ],
)
def test_limits_cut_a_phase_short(tmp_path: Path, run: str, limit: str, most: int) -> None:
    endpoint = endpoint_toml("e", 0, decode_tps=50)
    if limit == "max_errors":
        endpoint += "\n[endpoint.sim.faults]\nhttp_status = 500\nerror_rate = 1.0\n"
    profile = load_profile(write_profile(tmp_path, run, [endpoint]))
    events, _ = run_profile(profile, time_scale=20.0)
    [phase] = finished(events)
    assert phase.limit == limit
    assert phase.requests == len(records(events)) <= most
    if limit == "max_requests":
        assert phase.requests == 5


def test_max_duration_stops_sending(tmp_path: Path) -> None:
    run = "concurrency = [1]\nrequests = 500\nmax_duration_s = 0.4\n"
    profile = load_profile(write_profile(tmp_path, run, [endpoint_toml("e", 0, decode_tps=50)]))
    events, _ = run_profile(profile, time_scale=20.0)
    [phase] = finished(events)
    assert phase.limit == "max_duration"
    assert 0 < phase.requests < 500

"""Sweep ladders, phase plans and stop rules, on hand-made load points."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from nvfp4_tui.bench.runner import plan_phases
from nvfp4_tui.bench.sweep import describe_stop, stop_rule
from nvfp4_tui.config.levels import load_levels
from nvfp4_tui.config.profile import RunPlan, SweepSpec, load_profile
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.events import PhaseFinished, PhasePlan, RequestFinished
from nvfp4_tui.core.slo import Load, LoadPoint, LoadTracker, SloTargets, capacity, knee
from tests.load.files import endpoint_toml, write_profile
from tests.support.factories import T0, request

SLO = SloTargets(ttft_s=0.5)


def point(level: float, tps: float, attainment: float = 1.0, errors: int = 0) -> LoadPoint:
    requests = 100
    return LoadPoint(
        load=Load("concurrency", level),
        phases=1,
        requests=requests,
        met=round(attainment * requests),
        errors=errors,
        late=0,
        window_s=10.0,
        attainment=attainment,
        goodput_rps=attainment * 10,
        throughput_tps=tps,
        error_share=errors / requests,
        sustained=attainment >= 0.9,
    )


def test_ladders() -> None:
    base = RunPlan(name="t", suites=("s",))
    assert [lv.concurrency for lv in load_levels(base)] == [1]
    swept = replace(base, sweep=SweepSpec())
    assert [lv.concurrency for lv in load_levels(swept)] == [1, 2, 4, 8, 16, 32, 64, 128]
    gentle = replace(base, sweep=SweepSpec(factor=1.5, max_steps=6))
    assert [lv.concurrency for lv in load_levels(gentle)] == [1, 2, 3, 5, 8, 12]
    listed = replace(base, concurrency=(2, 3, 7), sweep=SweepSpec())
    assert [lv.concurrency for lv in load_levels(listed)] == [2, 3, 7]
    rates = replace(base, rate_rps=(0.5,), max_concurrency=16, sweep=SweepSpec(max_steps=4))
    assert [(lv.rate_rps, lv.concurrency) for lv in load_levels(rates)] == [
        (0.5, 16),
        (1.0, 16),
        (2.0, 16),
        (4.0, 16),
    ]
    assert [lv.concurrency for lv in load_levels(replace(base, rate_rps=(3.0,)))] == [0]


def test_phase_plans_carry_load_bounds_and_each_endpoints_targets(tmp_path: Path) -> None:
    run = """
rate = [2, 4]
arrivals = "constant"
requests = 3
max_requests = 2
sweep = true
slo = { ttft_s = 0.5, e2e_s = 9 }
"""
    endpoints = [endpoint_toml("a", 0), endpoint_toml("b", 1, extra="slo = { ttft_s = 1 }")]
    profile = load_profile(write_profile(tmp_path, run, endpoints))
    plans = plan_phases(profile, load_suites(profile.suite_dirs, profile.run.suites))
    assert [(p.endpoint_id, p.rate_rps) for p in plans] == [
        ("a", 2.0),
        ("a", 4.0),
        ("b", 2.0),
        ("b", 4.0),
    ]
    first = plans[0]
    assert (first.requests, first.arrivals, first.sweep, first.concurrency) == (
        2,
        "constant",
        True,
        0,
    )
    assert (first.slo_ttft_s, first.slo_e2e_s, first.slo_attainment) == (0.5, 9.0, 0.9)
    assert (plans[2].slo_ttft_s, plans[2].slo_e2e_s) == (1.0, 9.0)


def test_stop_rules_in_order() -> None:
    spec = SweepSpec(max_error_share=0.05)
    growing = [point(1, 100), point(2, 190)]
    assert stop_rule(growing, spec, SLO) is None
    assert stop_rule([*growing, point(4, 195)], spec, SLO) == "throughput"
    assert stop_rule([*growing, point(4, 400, attainment=0.8)], spec, SLO) == "slo"
    # Without targets, attainment only counts failures; the error rule speaks for them.
    assert stop_rule([*growing, point(4, 400, attainment=0.8)], spec, SloTargets()) is None
    failing = point(4, 100, attainment=0.8, errors=20)
    assert stop_rule([*growing, failing], spec, SLO) == "errors"
    assert stop_rule([], spec, SLO) is None


def test_knee_capacity_and_descriptions() -> None:
    points = [point(1, 100), point(2, 190), point(4, 370), point(8, 380, attainment=0.5)]
    assert knee(points) == points[2]
    assert capacity(points) == points[2]
    assert knee(points[:3]) is None
    assert capacity([point(1, 100, attainment=0.1), *points]) is None
    assert describe_stop("throughput", points, SLO) == (
        "sweep stopped at c=8: throughput +2.7% over c=4 (< 5%)"
    )
    assert describe_stop("slo", points, SLO) == "sweep stopped at c=8: 50% met the SLO (target 90%)"
    assert describe_stop("errors", [point(2, 1, errors=7)], SLO) == (
        "sweep stopped at c=2: 7 of 100 failed"
    )
    assert Load("rate", 2.5).label == "2.5 req/s"


def _burst(phase_index: int, concurrency: int, count: int) -> list[RequestFinished]:
    """``count`` requests sent together, 10 tokens in 1 s each: 10 x count tok/s."""
    return [
        request(
            t=T0 + 10.0 * phase_index,
            suite="essay",
            concurrency=concurrency,
            phase_index=phase_index,
            request_index=i,
            ttft_s=0.1,
            e2e_s=1.0,
            tokens_out=10,
        )
        for i in range(count)
    ]


def test_steps_that_never_hold_their_concurrency_are_no_load_points() -> None:
    # A sweep bounded by 6 requests a phase: from c=8 on every step sends the same 6 at once,
    # so throughput stops growing at c=8 although the server was never asked for more.
    ladder = (1, 2, 4, 8, 16)
    planned = {c: c if c <= 4 else 6 for c in ladder}
    plans = [PhasePlan("a", "essay", c, planned[c], sweep=True) for c in ladder]
    tracker = LoadTracker(plans)
    for index, c in enumerate(ladder):
        sent = min(c, planned[c])
        for r in _burst(index, c, sent):
            tracker.add(r)
        tracker.finish(PhaseFinished(T0 + 10.0 * index + 1, "a", "essay", c, index, sent, 0, 60, 1))
    assert [p.load.value for p in tracker.points()] == [1, 2, 4]
    assert [p.throughput_tps for p in tracker.points()] == pytest.approx([10, 20, 40])
    assert tracker.knee() is None  # without the rule: a false knee at c=8
    assert stop_rule(tracker.points(), SweepSpec(), SloTargets()) is None
    assert len(tracker.phases()) == len(ladder)  # still shown as phases

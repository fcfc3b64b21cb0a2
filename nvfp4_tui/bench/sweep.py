"""Sweeps over a run's load levels: each phase's plan and the stop rules.

The levels themselves, the ladder a sweep climbs included, are ``nvfp4_tui.config.levels``.
Each endpoint climbs on its own; after a step (its phases of every suite) the first stop rule
that fires ends that endpoint's sweep:

- ``errors``: the step's error share passed ``max_error_share``;
- ``slo``: its SLO attainment fell below the target (only when the profile sets targets);
- ``throughput``: aggregate throughput grew less than ``slo.KNEE_MIN_GAIN`` over the last step.

The knee and the capacity at SLO are read from the same load points (``nvfp4_tui.core.slo``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from nvfp4_tui.config.levels import LoadLevel
from nvfp4_tui.config.profile import RunPlan, SweepSpec
from nvfp4_tui.config.suites import Suite
from nvfp4_tui.config.trace import TRACE_ARRIVALS
from nvfp4_tui.core.events import PhasePlan
from nvfp4_tui.core.slo import KNEE_MIN_GAIN, LoadPoint, SloTargets, throughput_gain

StopRule = Literal["errors", "slo", "throughput"]


def phase_plan(
    endpoint_id: str,
    suite: str,
    level: LoadLevel,
    requests: int | None,
    run: RunPlan,
    slo: SloTargets,
) -> PhasePlan:
    """One phase of the plan, with the run's bounds and the endpoint's SLO targets."""
    if requests is not None and run.max_requests is not None:
        requests = min(requests, run.max_requests)
    open_loop = level.rate_rps is not None
    return PhasePlan(
        endpoint_id,
        suite,
        level.concurrency,
        requests,
        run.duration_s,
        rate_rps=level.rate_rps,
        arrivals=run.arrivals if open_loop else None,
        burstiness=run.burstiness if open_loop and run.arrivals == "gamma" else None,
        ramp_s=run.ramp_s,
        sweep=run.sweep is not None,
        slo_ttft_s=slo.ttft_s,
        slo_tpot_s=slo.tpot_s,
        slo_e2e_s=slo.e2e_s,
        slo_attainment=slo.attainment if slo.defined else None,
    )


def trace_phase_plan(endpoint_id: str, suite: Suite, run: RunPlan, slo: SloTargets) -> PhasePlan:
    """A trace's one phase: every request at its own time (open loop, capped at the run's
    ``max_concurrency``), its level the trace's mean rate; no sweep climbs it."""
    count = len(suite.prompts)
    span_s = max((p.at_s or 0.0) for p in suite.prompts)
    rate = (count - 1) / span_s if span_s > 0 else float(count)  # its gaps over its span
    level = LoadLevel(run.max_concurrency or 0, float(f"{rate:.3g}"))  # the label: 3 figures
    plan = phase_plan(endpoint_id, suite.name, level, count, run, slo)
    # Its own times and count: none of the run's shaping of a phase applies.
    return replace(
        plan,
        requests=count,
        duration_s=None,
        arrivals=TRACE_ARRIVALS,
        burstiness=None,
        ramp_s=None,
        sweep=False,
    )


def stop_rule(points: Sequence[LoadPoint], spec: SweepSpec, targets: SloTargets) -> StopRule | None:
    """The rule that ends the sweep after its latest point (``points`` lowest load first)."""
    if not points:
        return None
    last = points[-1]
    if last.error_share is not None and last.error_share > spec.max_error_share:
        return "errors"
    if targets.defined and not last.sustained:
        return "slo"
    if len(points) >= 2:
        gain = throughput_gain(points[-2], last)
        if gain is not None and gain < KNEE_MIN_GAIN:
            return "throughput"
    return None


def describe_stop(rule: StopRule, points: Sequence[LoadPoint], targets: SloTargets) -> str:
    """One line saying why the sweep stopped, for progress lines and logs."""
    last = points[-1]
    if rule == "errors":
        return f"sweep stopped at {last.load.label}: {last.errors} of {last.requests} failed"
    if rule == "slo":
        share = last.attainment or 0.0
        return (
            f"sweep stopped at {last.load.label}: {share:.0%} met the SLO "
            f"(target {targets.attainment:.0%})"
        )
    gain = throughput_gain(points[-2], last) or 0.0
    return (
        f"sweep stopped at {last.load.label}: throughput {gain:+.1%} over "
        f"{points[-2].load.label} (< {KNEE_MIN_GAIN:.0%})"
    )

"""Load levels of a run and sweeps over them: the ladder, each phase's plan, the stop rules.

Without a sweep the levels are the profile's ``concurrency`` (closed loop) or ``rate`` (open
loop) list. A sweep climbs a ladder: the listed levels when there are several, else the one
level times ``factor`` per step, ``max_steps`` steps (concurrency rounded up to whole requests).
Each endpoint climbs on its own; after a step (its phases of every suite) the first stop rule
that fires ends that endpoint's sweep:

- ``errors``: the step's error share passed ``max_error_share``;
- ``slo``: its SLO attainment fell below the target (only when the profile sets targets);
- ``throughput``: aggregate throughput grew less than ``slo.KNEE_MIN_GAIN`` over the last step.

The knee and the capacity at SLO are read from the same load points (``nvfp4_tui.core.slo``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from nvfp4_tui.config.profile import RunPlan, SweepSpec
from nvfp4_tui.core.events import PhasePlan
from nvfp4_tui.core.slo import KNEE_MIN_GAIN, LoadPoint, SloTargets, throughput_gain

StopRule = Literal["errors", "slo", "throughput"]


@dataclass(frozen=True)
class LoadLevel:
    """Closed loop: ``concurrency`` in flight. Open loop: ``rate_rps``, capped at ``concurrency``
    in flight (0: no cap)."""

    concurrency: int
    rate_rps: float | None = None


def _ladder(levels: Sequence[float], spec: SweepSpec | None, whole: bool) -> list[float]:
    if spec is None or len(levels) > 1:
        return list(levels)
    ladder = [levels[0]]
    while len(ladder) < spec.max_steps:
        step = ladder[-1] * spec.factor
        ladder.append(max(math.ceil(step), int(ladder[-1]) + 1) if whole else step)
    return ladder


def load_levels(run: RunPlan) -> tuple[LoadLevel, ...]:
    """The run's load levels in the order they run."""
    if run.rate_rps:
        cap = run.max_concurrency or 0
        return tuple(LoadLevel(cap, r) for r in _ladder(run.rate_rps, run.sweep, whole=False))
    return tuple(LoadLevel(int(c)) for c in _ladder(run.concurrency, run.sweep, whole=True))


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
        sweep=run.sweep is not None,
        slo_ttft_s=slo.ttft_s,
        slo_tpot_s=slo.tpot_s,
        slo_e2e_s=slo.e2e_s,
        slo_attainment=slo.attainment if slo.defined else None,
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

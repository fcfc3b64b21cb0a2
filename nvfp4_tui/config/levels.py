"""A run's load levels, in the order they run: the profile's list, or the ladder a sweep climbs.

Without a sweep the levels are the profile's ``concurrency`` (closed loop) or ``rate`` (open
loop) list. A sweep climbs the listed levels when there are several, else the one level times
``factor`` per step, ``max_steps`` steps (concurrency rounded up to whole requests). The profile
checks its bounds against these levels, and the runner plans its phases from them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # profile.py checks its plan with load_levels: a runtime import would loop
    from nvfp4_tui.config.profile import RunPlan, SweepSpec


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

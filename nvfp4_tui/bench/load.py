"""Load shapes of one phase: open-loop arrival schedules, the dispatcher that keeps them, the
warm-up and cool-down windows, and the limits that cut a phase short.

An open loop sends request i at its scheduled offset from the phase start: ``i / rate`` for
``constant`` arrivals, or the sum of i random gaps of mean ``1 / rate``: exponential ones for
``poisson``, gamma ones of shape ``burstiness`` for ``gamma`` (their spread is 1 / sqrt(shape)
times the mean: below 1 burstier than Poisson, above 1 more even; 1 is Poisson), seeded per run,
endpoint and phase, so a rerun sends on the same schedule. The first request
leaves at offset 0. A request that cannot leave on time (the event loop was busy, or every slot
under ``max_concurrency`` was taken) leaves as soon as it can and carries ``late_s``, how late;
it is never quietly moved. Requests still due when the phase stops sending are counted as
unsent. Time spent paused shifts the rest of the schedule instead of making it late. A ramp
(``ramp_s``) climbs the rate linearly from 0 to the level's over the phase's first seconds,
whatever the arrival shape, and a closed loop's slots start one after another over it.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from nvfp4_tui.config.profile import RunPlan
from nvfp4_tui.config.tomlcheck import spelt_out
from nvfp4_tui.core.events import PhasePlan
from nvfp4_tui.core.slo import LATE_AFTER_S

OPEN_LOOP_SLOTS = 1024  # an open loop without max_concurrency still needs a pool size
Limit = Literal["max_duration", "max_requests", "max_errors", "endpoint_down"]
Send = Callable[[int, float, float], Awaitable[None]]  # (index, due offset s, late s)


def _constant(rate_rps: float, _burstiness: float, _draw: random.Random) -> Iterator[float]:
    return (index / rate_rps for index in itertools.count())


def _summed(gap: Callable[[], float]) -> Iterator[float]:
    offset = 0.0
    while True:
        yield offset
        offset += gap()


def _poisson(rate_rps: float, _burstiness: float, draw: random.Random) -> Iterator[float]:
    return _summed(lambda: draw.expovariate(rate_rps))


def _gamma(rate_rps: float, burstiness: float, draw: random.Random) -> Iterator[float]:
    scale = 1.0 / (rate_rps * burstiness)  # mean shape x scale = 1 / rate
    return _summed(lambda: draw.gammavariate(burstiness, scale))


# How each arrival shape a profile may name (config.arrivals) draws its send offsets, from the
# rate, the burstiness and the phase's seeded draw.
ARRIVAL_SHAPES: dict[str, Callable[[float, float, random.Random], Iterator[float]]] = {
    "constant": _constant,
    "poisson": _poisson,
    "gamma": _gamma,
}


def arrival_offsets_s(
    rate_rps: float, arrivals: str, seed: str, burstiness: float = 1.0
) -> Iterator[float]:
    """Send offsets from the phase start, without end; ``seed`` names the phase's draw."""
    if not rate_rps > 0:
        raise ValueError(f"rate must be > 0 requests/s, got {rate_rps!r}")
    shape = ARRIVAL_SHAPES.get(arrivals)
    if shape is None:
        raise ValueError(f"arrivals must be {spelt_out(tuple(ARRIVAL_SHAPES))}, got {arrivals!r}")
    if not burstiness > 0:
        raise ValueError(f"burstiness must be > 0, got {burstiness!r}")
    # A str seed is hashed with SHA-512: stable across runs.
    return shape(rate_rps, burstiness, random.Random(seed))


def ramped(offset_s: float, ramp_s: float) -> float:
    """Where an offset of the full-rate schedule falls when the rate climbs linearly from 0 to
    full over ``ramp_s``: the time by which the ramp has sent as many (the expected count at
    time t is rate * t^2 / (2 ramp_s) on the ramp, rate * (t - ramp_s / 2) after it)."""
    if offset_s < ramp_s / 2:
        return math.sqrt(2 * ramp_s * offset_s)
    return offset_s + ramp_s / 2


def phase_schedule(plan: PhasePlan, seed: str) -> list[float]:
    """The phase's send offsets: ``plan.requests`` of them, or all that fall in ``duration_s``;
    under ``ramp_s`` the rate climbs from 0 to the level's over its first seconds."""
    if plan.rate_rps is None:
        raise ValueError("a closed-loop phase has no arrival schedule")
    drawn = arrival_offsets_s(
        plan.rate_rps, plan.arrivals or "poisson", seed, plan.burstiness or 1.0
    )
    ramp_s = plan.ramp_s
    offsets = drawn if not ramp_s else (ramped(offset, ramp_s) for offset in drawn)
    if plan.requests is not None:
        return [next(offsets) for _ in range(plan.requests)]
    if plan.duration_s is None:
        raise ValueError("an open-loop phase needs a request count or a duration")
    schedule: list[float] = []
    for offset in offsets:
        if offset >= plan.duration_s:
            return schedule
        schedule.append(offset)
    raise AssertionError("unreachable: the offsets grow without end")


def schedule_seed(run_seed: int, endpoint_id: str, phase_index: int) -> str:
    return f"{run_seed}:{endpoint_id}:{phase_index}"


@dataclass(frozen=True)
class TrimWindows:
    """Which requests of a phase fall in its warm-up or cool-down window (by count or time).

    The windows sit on the planned phase: the cool-down counts back from the planned request
    count, or from the planned end (``duration_s``, or an open loop's last scheduled send).
    """

    warmup_requests: int = 0
    warmup_s: float = 0.0
    cooldown_requests: int = 0
    cooldown_s: float = 0.0
    planned_requests: int | None = None
    planned_end_s: float | None = None

    @classmethod
    def of(cls, run: RunPlan, plan: PhasePlan, schedule: list[float] | None) -> TrimWindows:
        end = plan.duration_s
        if end is None and schedule:
            end = schedule[-1]
        return cls(
            run.warmup_requests,
            run.warmup_s,
            run.cooldown_requests,
            run.cooldown_s,
            plan.requests,
            end,
        )

    @property
    def active(self) -> bool:
        return bool(
            self.warmup_requests or self.warmup_s or self.cooldown_requests or self.cooldown_s
        )

    def mark(self, index: int, offset_s: float) -> bool | None:
        """``RequestFinished.trimmed`` of request ``index``, sent (or due) ``offset_s`` into the
        phase: None when the phase has no windows."""
        return self.trimmed(index, offset_s) if self.active else None

    def trimmed(self, index: int, offset_s: float) -> bool:
        """Whether request ``index``, sent (or due) ``offset_s`` into the phase, is trimmed."""
        if index < self.warmup_requests or offset_s < self.warmup_s:
            return True
        if (
            self.cooldown_requests
            and self.planned_requests is not None
            and index >= self.planned_requests - self.cooldown_requests
        ):
            return True
        if self.cooldown_s and self.planned_end_s is not None:
            return offset_s > self.planned_end_s - self.cooldown_s
        return False


class PhaseLimits:
    """``max_duration_s``, ``max_requests`` and ``max_errors`` of one phase; None where unset."""

    def __init__(
        self,
        run: RunPlan,
        started: float,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.max_duration_s = run.max_duration_s
        self.max_requests = run.max_requests
        self.max_errors = run.max_errors
        self.started = started
        self.clock = clock
        self.sent = 0
        self.errors = 0
        self.hit: Limit | None = None  # the first limit reached, kept once reached

    def reached(self) -> Limit | None:
        """The limit that stops new sends now, if any."""
        if self.hit is None:
            if self.max_errors is not None and self.errors >= self.max_errors:
                self.hit = "max_errors"
            elif self.max_requests is not None and self.sent >= self.max_requests:
                self.hit = "max_requests"
            elif (
                self.max_duration_s is not None
                and self.clock() - self.started >= self.max_duration_s
            ):
                self.hit = "max_duration"
        return self.hit


@dataclass(frozen=True)
class OpenLoopResult:
    sent: int
    late: int  # sent more than LATE_AFTER_S after their slot
    late_max_s: float | None
    unsent: int  # due before sending stopped, never sent


async def run_open_loop(
    offsets: Iterable[float],
    send: Send,
    *,
    max_in_flight: int,
    send_until_s: float | None = None,
    resume: asyncio.Event | None = None,
    stop: Callable[[int], bool] = lambda sent: False,
    clock: Callable[[], float] = time.perf_counter,
) -> OpenLoopResult:
    """Send on the schedule: ``send(index, due_s, late_s)`` runs as its own task, at most
    ``max_in_flight`` at once; returns when every request sent has finished.

    Nothing is sent once ``send_until_s`` has passed (a phase bounded by duration: a backlog
    never runs on past its end) or once ``stop(requests sent so far)`` says True; it is asked
    before each send. ``resume``, when given, is waited for before each send (a pause); the
    pause shifts the rest of the schedule.
    """
    slots = asyncio.Semaphore(max_in_flight)
    origin = clock()
    sent = late = unsent = 0
    late_max_s: float | None = None

    async def one(index: int, due_s: float, late_s: float) -> None:
        try:
            await send(index, due_s, late_s)
        finally:
            slots.release()

    pending = iter(offsets)
    async with asyncio.TaskGroup() as group:
        for index, due_s in enumerate(pending):
            wait_s = origin + due_s - clock()
            if wait_s > 0:
                await asyncio.sleep(wait_s)
            if resume is not None and not resume.is_set():
                paused_at = clock()
                await resume.wait()
                origin += clock() - paused_at
            await slots.acquire()
            overdue = send_until_s is not None and clock() - origin > send_until_s
            if overdue or stop(sent):
                slots.release()
                elapsed = clock() - origin
                unsent = sum(1 for d in (due_s, *pending) if d <= elapsed)
                break
            late_s = max(0.0, clock() - origin - due_s)
            if late_s > LATE_AFTER_S:
                late += 1
                late_max_s = late_s if late_max_s is None else max(late_max_s, late_s)
            sent += 1
            group.create_task(one(index, due_s, late_s))
    return OpenLoopResult(sent, late, late_max_s, unsent)

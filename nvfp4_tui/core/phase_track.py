"""PhaseTrack: one phase of an endpoint as the events tell it (planned, started, its requests,
finished), with how far along it is and how long it has left.

A phase's plan and its requests' durations are in the run's modelled seconds (``time_scale``
times real ones against a faster simulator, ``bench.model_time``); how far along it is and how
long it has left are on the run's real timeline, as ``now`` is."""

from __future__ import annotations

import math

from nvfp4_tui.core.events import PhaseFinished
from nvfp4_tui.core.readouts import PhaseProgress, PhaseState


class PhaseTrack:
    __slots__ = (
        "concurrency",
        "duration_s",
        "errors",
        "finished",
        "index",
        "planned_requests",
        "rate_rps",
        "requests_done",
        "started_t",
        "suite",
        "time_scale",
    )

    def __init__(
        self,
        index: int,
        suite: str,
        concurrency: int,
        planned_requests: int | None,
        duration_s: float | None,
        rate_rps: float | None = None,
        time_scale: float = 1.0,
    ) -> None:
        self.index = index
        self.suite = suite
        self.concurrency = concurrency
        self.planned_requests = planned_requests
        self.duration_s = duration_s
        self.rate_rps = rate_rps
        self.time_scale = time_scale
        self.started_t: float | None = None
        self.finished: PhaseFinished | None = None
        self.requests_done = 0
        self.errors = 0

    @property
    def state(self) -> PhaseState:
        if self.finished is not None:
            return "finished"
        return "running" if self.started_t is not None else "pending"

    def fraction(self, now: float | None) -> float:
        if self.finished is not None:
            return 1.0
        if self.planned_requests is not None:
            return (
                min(1.0, self.requests_done / self.planned_requests)
                if self.planned_requests
                else 0.0
            )
        if self.duration_s and self.started_t is not None and now is not None:
            real_s = self.duration_s / self.time_scale
            return min(1.0, max(0.0, (now - self.started_t) / real_s))
        return 0.0

    def remaining_s(
        self, now: float, request_rate: float | None, request_s: float | None
    ) -> float | None:
        """Seconds left in this phase, or None when it cannot be told yet.

        ``request_s`` is how long a request of this endpoint takes (its recent mean, modelled
        seconds like the plan's; the answer is in real ones): a closed
        loop's requests take that in waves of its concurrency, an open loop's come at its rate,
        and a duration-bound phase runs that much past its duration while its last requests
        finish (``_timed_end_s``). Without it, the endpoint's rate of finished requests so far
        (that rate, taken at concurrency 1, made a demo's ETA read 35 minutes for a 12-minute
        run), and for a duration-bound phase nothing: its end is not known (the first ETA, a
        duration per phase, read 1:20 for a 2:18 run).
        """
        if self.finished is not None:
            return 0.0
        scale = self.time_scale
        request_s = None if request_s is None else request_s / scale
        tail_s = request_s or 0.0
        if self.planned_requests is not None:
            left = max(0, self.planned_requests - self.requests_done)
            if left == 0:
                return 0.0
            if self.rate_rps:
                return left / (self.rate_rps * scale) + tail_s
            if request_s is not None:
                return math.ceil(left / max(1, self.concurrency)) * request_s
            return left / request_rate if request_rate else None
        if self.duration_s is not None:
            if request_s is None:
                return None  # how far past its duration it runs is not known yet
            elapsed = now - self.started_t if self.started_t is not None else 0.0
            return max(0.0, self._timed_end_s(self.duration_s / scale, request_s) - elapsed)
        return None

    def _timed_end_s(self, duration_s: float, request_s: float) -> float:
        """When a duration-bound phase is expected to end, its requests taking ``request_s``:
        an open loop's last request starts as the duration ends; each of a closed loop's
        workers is a random way into a request then, the last of them done ``c / (c + 1)`` of
        one later on average, and a request longer than the duration ends the phase itself
        (a duration plus a whole request per phase made the demo's ETA 3:25 for 1:57)."""
        if self.rate_rps:
            return duration_s + request_s
        if request_s >= duration_s:
            return request_s  # the requests sent at its start are its last ones
        workers = max(1, self.concurrency)
        return duration_s + request_s * workers / (workers + 1)

    def read(self, now: float | None) -> PhaseProgress:
        done = self.finished
        return PhaseProgress(
            phase_index=self.index,
            suite=self.suite,
            concurrency=self.concurrency,
            planned_requests=self.planned_requests,
            duration_s=self.duration_s,
            state=self.state,
            requests_done=self.requests_done,
            errors=self.errors,
            fraction=self.fraction(now),
            started_t=self.started_t,
            finished_t=done.t if done else None,
            output_tokens=done.output_tokens if done else None,
            wall_s=done.wall_s if done else None,
            throughput_tps=done.throughput_tps if done else None,
            rate_rps=self.rate_rps,
        )

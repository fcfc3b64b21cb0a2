"""How fast one stream may make the client work: a token bucket of SSE events per second.

Every endpoint is read on the loop that times the others, so a stream that sends events far
faster than any model decodes (a flood of one-character chunks) would keep that loop, and the
process, busy: the other streams' reads then wait for it, and under CPU contention a busy
process wakes later than an idle one. Past ``burst`` events at once and ``rate`` a second, the
stream is read at that pace and TCP holds the rest back at the server. A real stream never gets
near: a model decoding 2,000 tokens/s sends at most 2,000 events/s.
"""

from __future__ import annotations

from time import perf_counter

STREAM_EVENTS_PER_S = 10_000
STREAM_EVENTS_BURST = 10_000


class EventBudget:
    """The events one stream has left to spend; refilled at ``rate`` a second up to ``burst``."""

    __slots__ = ("_allowance", "_burst", "_rate", "_spent", "_updated_at")

    def __init__(self, rate: float = STREAM_EVENTS_PER_S, burst: float = STREAM_EVENTS_BURST):
        self._rate = rate
        self._burst = burst
        self._allowance = burst
        self._spent = 0  # events counted so far
        self._updated_at = perf_counter()

    def pause_after(self, events: int) -> float:
        """Seconds to wait before the next read, the stream having taken ``events`` in all."""
        now = perf_counter()
        refill = (now - self._updated_at) * self._rate
        self._allowance = min(self._burst, self._allowance + refill) - (events - self._spent)
        self._spent = events
        self._updated_at = now
        return 0.0 if self._allowance >= 0 else -self._allowance / self._rate

"""Replay of a recorded snapshot on its own timeline: pause, speed steps, seek, home and end.

The timeline places each event when the live UI would have seen it: a RequestFinished when its
request ended (``t + e2e_s``; its ``t`` is when it was sent), every other event at its ``t``.
Playback runs at a speed from ``SPEED_STEPS`` (or any positive factor given on the command line);
``None`` is "max": events go out in chunks as fast as the consumer takes them.

Seeking forward delivers the skipped events in one batch. Seeking backwards cannot un-apply
events, so the next batch is a *reset batch*: a ``ReplayBatch`` with ``reset=True`` holding every
event from the start up to the new position. A consumer drops its state and folds the reset batch
into a fresh one (``is_reset(batch)`` tells, for any source's batch). Rebuilding costs one pass of
``FleetState.apply`` over the events (about 3 µs each), so a one-hour, seven-GPU run rebuilds in
a fraction of a second.

A snapshot whose writer died (killed, crashed) holds no RunFinished; the replay ends it with one
of its own, ``aborted`` with ``WRITER_GONE_MESSAGE``, at its last event, so views show how it
ended rather than a run that seems to go on.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import math
import time
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path

from nvfp4_tui.events import Event, RequestFinished, RunFinished
from nvfp4_tui.store.reader import Snapshot, open_snapshot

# x1 ... x60, then None: as fast as the consumer takes the events.
SPEED_STEPS: tuple[float | None, ...] = (1.0, 2.0, 5.0, 10.0, 60.0, None)
SEEK_STEP_S = 10.0
TICK_S = 1 / 30  # at a finite speed, batches are at least this far apart (bounded wake-ups)
MAX_SPEED_CHUNK = 5000  # events per batch at max speed, so the consumer can draw between them
WRITER_GONE_MESSAGE = "writer gone: the run's process ended without finishing its snapshot"


class ReplayBatch(list[Event]):
    """One batch of a replay; ``reset=True``: drop the state, fold this batch into a fresh one."""

    __slots__ = ("reset",)

    def __init__(self, events: Iterable[Event] = (), *, reset: bool = False) -> None:
        super().__init__(events)
        self.reset = reset


def is_reset(batch: list[Event]) -> bool:
    """True when ``batch`` (from any source) replaces everything delivered before it."""
    return bool(getattr(batch, "reset", False))


def timeline_t(event: Event) -> float:
    """When the event appears on the replay timeline: a request when it ended, others at ``t``."""
    if (
        isinstance(event, RequestFinished)
        and event.e2e_s is not None
        and math.isfinite(event.e2e_s)
    ):
        return event.t + event.e2e_s
    return event.t


def parse_speed(text: str) -> float | None:
    """``"max"`` -> None, ``"5"`` / ``"x5"`` -> 5.0; ValueError unless a finite number > 0."""
    word = text.strip().lower()
    if word == "max":
        return None
    try:
        speed = float(word.removeprefix("x"))
    except ValueError:
        raise ValueError(f"speed: expected a number > 0 or 'max', got {text!r}") from None
    if not (math.isfinite(speed) and speed > 0):
        raise ValueError(f"speed: expected a number > 0 or 'max', got {text!r}")
    return speed


def speed_label(speed: float | None) -> str:
    return "max" if speed is None else f"x{speed:g}"


class ReplaySource:
    """Plays a snapshot's events on the recorded timeline; controlled with ``command``.

    Commands: ``pause``, ``resume``, ``toggle``, ``faster``, ``slower``, ``speed:X`` (a number or
    ``max``), ``seek:+S`` / ``seek:-S`` (relative, seconds of run time), ``seek:S`` (absolute
    position), ``home``, ``end``. Unknown commands are ignored, as the EventSource protocol says.

    With ``hold_at_end`` (the UI's choice) ``batches`` keeps waiting for commands once everything
    is delivered, so the user can still seek back; without it the iteration ends there.
    ``clock`` is the monotonic clock playback is timed by; tests inject their own.
    """

    kind = "replay"

    def __init__(
        self,
        snapshot: Snapshot | Path,
        *,
        speed: float | None = 1.0,
        hold_at_end: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if speed is not None and not (math.isfinite(speed) and speed > 0):
            raise ValueError(f"speed must be a number > 0 or None (max), got {speed!r}")
        self.snapshot = snapshot if isinstance(snapshot, Snapshot) else open_snapshot(snapshot)
        self.hold_at_end = hold_at_end
        self._clock = clock
        recorded = self.snapshot.events()
        if self.snapshot.writer_gone:
            last_t = max((timeline_t(e) for e in recorded), default=0.0)
            recorded.append(RunFinished(last_t, "aborted", WRITER_GONE_MESSAGE))
        timed = sorted(
            ((timeline_t(e), i, e) for i, e in enumerate(recorded)),
            key=lambda item: (item[0], item[1]),
        )
        self._events: list[Event] = [e for _, _, e in timed]
        self._keys: list[float] = [t for t, _, _ in timed]
        self.start_t = self._keys[0] if self._keys else 0.0
        self.end_t = self._keys[-1] if self._keys else 0.0
        self._speed = speed
        self._paused = False
        self._anchor_t = self.start_t  # run time at ``_anchor_mono``
        self._anchor_mono = clock()
        self._started = False  # the position moves only once playback has started
        self._cursor = 0  # events[:cursor] are delivered (or owed in a pending reset batch)
        self._reset_pending = False
        self._closed = False
        self._wake = asyncio.Event()

    # ---- read-outs for the UI

    @property
    def snapshot_path(self) -> Path:
        return self.snapshot.path

    @property
    def run_status(self) -> str:
        """The recorded run's status: ``complete``, ``aborted`` (its writer's death included), or
        ``running`` while another process still writes it."""
        return "aborted" if self.snapshot.writer_gone else self.snapshot.status

    @property
    def events_total(self) -> int:
        return len(self._events)

    @property
    def events_delivered(self) -> int:
        return self._cursor

    @property
    def duration_s(self) -> float:
        return self.end_t - self.start_t

    @property
    def position_t(self) -> float:
        """The replay's "now" on the recorded run's clock (Unix seconds)."""
        if self._paused or self._speed is None or not self._started:
            return self._anchor_t
        elapsed = (self._clock() - self._anchor_mono) * self._speed
        return min(self.end_t, self._anchor_t + elapsed)

    def clock(self) -> float:
        """``position_t`` as a clock for views that ask for "now" (staleness, elapsed time)."""
        return self.position_t

    @property
    def position_s(self) -> float:
        """Seconds of run time since the first event."""
        return self.position_t - self.start_t

    @property
    def speed(self) -> float | None:
        return self._speed

    @property
    def speed_label(self) -> str:
        return speed_label(self._speed)

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def at_end(self) -> bool:
        """Every event delivered and the position at the last one."""
        return self._cursor >= len(self._events) and not self._reset_pending

    # ---- control

    async def command(self, name: str) -> None:
        self.control(name)

    def control(self, name: str) -> None:
        """Apply one command at once (``command`` without the await); see the class docstring."""
        word, _, argument = name.strip().partition(":")
        if word == "pause":
            self._set_paused(True)
        elif word == "resume":
            self._set_paused(False)
        elif word == "toggle":
            self._set_paused(not self._paused)
        elif word == "faster":
            self._set_speed(self._next_speed(+1))
        elif word == "slower":
            self._set_speed(self._next_speed(-1))
        elif word == "speed":
            self._set_speed(parse_speed(argument))
        elif word == "seek":
            self._seek(argument)
        elif word == "home":
            self._seek_to(self.start_t)
        elif word == "end":
            self._seek_to(self.end_t)
        else:
            return
        self._wake.set()

    def _reanchor(self) -> None:
        self._anchor_t = self.position_t
        self._anchor_mono = self._clock()

    def _set_paused(self, paused: bool) -> None:
        self._reanchor()
        self._paused = paused

    def _set_speed(self, speed: float | None) -> None:
        self._reanchor()
        self._speed = speed

    def _next_speed(self, direction: int) -> float | None:
        current = self._speed
        if current is None:
            return None if direction > 0 else SPEED_STEPS[-2]
        finite = [s for s in SPEED_STEPS if s is not None]
        if direction > 0:
            return next((s for s in finite if s > current), None)
        return next((s for s in reversed(finite) if s < current), current)

    def _seek(self, argument: str) -> None:
        try:
            seconds = float(argument)
        except ValueError:
            raise ValueError(
                f"seek: expected seconds such as +10, -10 or 120, got {argument!r}"
            ) from None
        if not math.isfinite(seconds):
            raise ValueError(f"seek: expected a finite number of seconds, got {argument!r}")
        relative = argument.strip().startswith(("+", "-"))
        self._seek_to(self.position_t + seconds if relative else self.start_t + seconds)

    def _seek_to(self, target_t: float) -> None:
        target_t = min(self.end_t, max(self.start_t, target_t))
        self._anchor_t = target_t
        self._anchor_mono = self._clock()
        index = bisect.bisect_right(self._keys, target_t)
        if index < self._cursor:
            self._cursor = index
            self._reset_pending = True

    # ---- delivery

    def start(self) -> None:
        """Start the playback clock (``batches`` does it; idempotent)."""
        if not self._started:
            self._started = True
            self._anchor_mono = self._clock()

    def take_due(self) -> ReplayBatch | None:
        """The batch due now: a pending reset batch, else the events up to the position."""
        if self._reset_pending:
            self._reset_pending = False
            return ReplayBatch(self._events[: self._cursor], reset=True)
        count = len(self._events)
        if self._speed is None and not self._paused and self._cursor < count:
            chunk_end = min(count, self._cursor + MAX_SPEED_CHUNK)
            self._anchor_t = max(self._anchor_t, self._keys[chunk_end - 1])
        due = bisect.bisect_right(self._keys, self.position_t)
        if due <= self._cursor:
            return None
        batch = ReplayBatch(self._events[self._cursor : due])
        self._cursor = due
        return batch

    def wait_s(self) -> float | None:
        """Seconds until the next event is due; None when only a command can change anything."""
        if self._reset_pending or (self._speed is None and not self._paused and not self.at_end):
            return 0.0
        if self._paused or self._cursor >= len(self._events):
            return None
        assert self._speed is not None
        return max(TICK_S, (self._keys[self._cursor] - self.position_t) / self._speed)

    async def batches(self) -> AsyncIterator[ReplayBatch]:
        self.start()
        while not self._closed:
            batch = self.take_due()
            if batch is not None:
                yield batch
                # A consumer that never awaits would otherwise starve its own loop at max speed.
                await asyncio.sleep(0)
                continue
            if self.at_end and not self.hold_at_end:
                return
            wait = self.wait_s()
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    async def close(self) -> None:
        self._closed = True
        self._wake.set()

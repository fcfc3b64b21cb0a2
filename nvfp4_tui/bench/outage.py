"""An endpoint that stops taking connections mid-run: hold its sends, probe until it is back.

Without this, a server that restarts (a crashed vLLM reloading its model takes minutes) turns
the rest of its plan into instant ``connect`` errors within a second. The gate records the
failure that revealed the outage, holds the endpoint's next sends, probes ``/health`` with a
growing interval, and opens again when the server answers; an outage longer than the give-up
time ends the endpoint's run with status ``down``. Other endpoints never wait on it.

A server can also die under a request without a refused connection to show it: vLLM's engine
crash answers HTTP 200 with an error object in the stream, then the server exits. So a request
that failed in its stream (``protocol``, ``reset``, ``truncated``) or with HTTP 5xx has /health
asked at once; a
server that no longer answers is in an outage from then, and the outage's messages quote the
failure that came before it. vLLM's API server outlives its engine by up to a second, answering
HTTP 500 while /health passes: a plan that ends on such a failure watches /health a few seconds
more (``LAST_WATCH_S``). An endpoint still in an outage when its plan ends ends ``down``, not
``done`` (``finish``). ``ServerDeaths`` names, from the events, the endpoints that ended a
run down after they had passed their health check: their servers died during the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from nvfp4_tui.core.events import (
    EndpointStatus,
    EndpointStatusKind,
    ErrorKind,
    Event,
    RequestFinished,
)

Probe = Callable[[], Awaitable[tuple[bool, str]]]
PROBE_FIRST_S = 0.5
PROBE_MAX_S = 10.0
# Failures a dying server leaves; each has /health asked at once. vLLM's API server answers
# HTTP 500 ("EngineCore encountered an issue") between its engine's death and its own exit, and
# its /health can still pass at the first stream error: the next 500 asks again.
DYING_KINDS: frozenset[ErrorKind | None] = frozenset({"protocol", "reset", "truncated", "http_5xx"})
# A plan that ended on such a failure watches /health this long before the endpoint reads done:
# vLLM's API server exits up to a second after its engine died, /health passing until then.
LAST_WATCH_S = 5.0


class EndpointGate:
    """Open while the run is not paused and the endpoint is taking connections; sends wait here."""

    def __init__(
        self,
        endpoint_id: str,
        emit: Callable[[Event], None],
        *,
        give_up_s: float,
        probe_first_s: float = PROBE_FIRST_S,
        probe_max_s: float = PROBE_MAX_S,
        last_watch_s: float = LAST_WATCH_S,
    ) -> None:
        self.endpoint_id = endpoint_id
        self.emit = emit
        self.probe_first_s = probe_first_s
        self.probe_max_s = probe_max_s
        self.give_up_s = give_up_s
        self.last_watch_s = last_watch_s
        self.paused = False
        self.probe: Probe | None = None  # the endpoint's health check, set for its run
        # Why the endpoint's run ended, once an outage outlasted ``give_up_s``.
        self.gave_up: str | None = None
        self._prober: asyncio.Task | None = None
        self._check: asyncio.Task | None = None  # /health asked after a failure in a stream
        self._last_failure: str | None = None  # that failure's message, quoted by the outage
        # Where the latest requests all failed as a dying server's do: the first one's message
        # (the crash; those after it are its consequences).
        self._ended_failing: str | None = None
        self._outage = ""  # why the outage going on began
        self._open = asyncio.Event()
        self._open.set()

    @property
    def down(self) -> bool:
        return self._prober is not None or self.gave_up is not None

    async def wait(self) -> None:
        await self._open.wait()

    @property
    def event(self) -> asyncio.Event:
        """Set while sends may go out (the open loop waits on it and shifts its schedule)."""
        return self._open

    def pause(self) -> None:
        self.paused = True
        self._update()

    def resume(self) -> None:
        self.paused = False
        self._update()

    def report(self, record: RequestFinished) -> None:
        """Close the gate when ``record`` shows the endpoint refusing connections; after a
        failure in a stream, ask /health whether the server is still there."""
        if self.down or self.probe is None:
            return
        if record.status != "error" or record.error_kind not in DYING_KINDS:
            self._ended_failing = None
        elif self._ended_failing is None:
            self._ended_failing = record.error_message or record.error_kind
        if record.status != "error":
            return
        if record.error_kind == "connect":
            self._begin_outage(self.probe, record.error_message or "connect")
        elif record.error_kind in DYING_KINDS and self._check is None:
            # The failure the check is about; those while it runs are its consequences.
            self._last_failure = record.error_message
            self._check = asyncio.create_task(self._check_health(self.probe))

    async def finish(self) -> None:
        """The endpoint's plan has ended: an outage still going on ends its run ``down``."""
        if self._check is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._check
        if self._ended_failing is not None and not self.down and self.probe is not None:
            await self._watch_last(self.probe)
        if self._prober is not None and self.gave_up is None:
            self.gave_up = f"{self._outage}; still down when its plan ended"
        await self.close()

    def _begin_outage(self, probe: Probe, message: str) -> None:
        after = f" (after: {self._last_failure})" if self._last_failure else ""
        self._outage = f"{message}{after}"
        self._status("down", f"{self._outage}; probing /health until it answers")
        self._prober = asyncio.create_task(self._probe_until_back(probe))
        self._update()

    async def _check_health(self, probe: Probe) -> None:
        try:
            healthy, message = await _ask(probe)
            if healthy:
                self._last_failure = None
            elif not self.down:
                self._begin_outage(probe, message)
        finally:
            self._check = None

    async def _watch_last(self, probe: Probe) -> None:
        """Ask /health until ``last_watch_s`` has passed; a server gone by then is an outage."""
        started = time.perf_counter()
        while time.perf_counter() - started < self.last_watch_s:
            await asyncio.sleep(self.probe_first_s)
            healthy, message = await _ask(probe)
            if not healthy:
                self._last_failure = self._ended_failing
                self._begin_outage(probe, message)
                return

    async def close(self) -> None:
        if self._check is not None:
            self._check.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._check
        if self._prober is not None:
            self._prober.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._prober
            # A task cancelled before it ever ran skips its own clean-up.
            self._prober = None
            self._update()

    async def _probe_until_back(self, probe: Probe) -> None:
        started = time.perf_counter()
        wait_s = self.probe_first_s
        try:
            while True:
                await asyncio.sleep(wait_s)
                healthy, message = await _ask(probe)
                down_s = time.perf_counter() - started
                if healthy:
                    back = f"back after {down_s:.1f} s"
                    self._last_failure = None
                    self._status("paused" if self.paused else "running", back)
                    return
                if down_s >= self.give_up_s:
                    after = f" (after: {self._last_failure})" if self._last_failure else ""
                    self.gave_up = f"down for {down_s:.0f} s, gave up: {message}{after}"
                    return
                wait_s = min(wait_s * 2, self.probe_max_s)
        finally:
            # However the probing ends (back, given up, cancelled), the gate is not left shut.
            self._prober = None
            self._update()

    def _update(self) -> None:
        # A gate that gave up opens so that waiting sends wake, see `gave_up` and stop.
        if self.gave_up is not None or not (self.paused or self.down):
            self._open.set()
        else:
            self._open.clear()

    def _status(self, status: EndpointStatusKind, message: str | None) -> None:
        self.emit(EndpointStatus(time.time(), self.endpoint_id, status, message))


async def _ask(probe: Probe) -> tuple[bool, str]:
    try:
        return await probe()
    except Exception as error:  # a probe that cannot even ask is an unhealthy one
        return False, f"health check failed: {error}"


class ServerDeaths:
    """Subscribed to a run's events: the endpoints whose last word was ``down`` after they had
    passed their health check (a ``warmup`` or ``running`` status), with why."""

    def __init__(self) -> None:
        self._started: set[str] = set()
        self.died: dict[str, str] = {}

    def __call__(self, event: Event) -> None:
        if not isinstance(event, EndpointStatus):
            return
        if event.status in ("warmup", "running"):
            self._started.add(event.endpoint_id)
        if event.status in ("warmup", "running", "paused"):  # paused: back while paused
            self.died.pop(event.endpoint_id, None)
        elif event.status == "down" and event.endpoint_id in self._started:
            self.died[event.endpoint_id] = event.message or "down"

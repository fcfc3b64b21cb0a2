"""An endpoint that stops taking connections mid-run: hold its sends, probe until it is back.

Without this, a server that restarts (a crashed vLLM reloading its model takes minutes) turns
the rest of its plan into instant ``connect`` errors within a second. The gate records the
failure that revealed the outage, holds the endpoint's next sends, probes ``/health`` with a
growing interval, and opens again when the server answers; an outage longer than the give-up
time ends the endpoint's run with status ``down``. Other endpoints never wait on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from nvfp4_tui.core.events import EndpointStatus, EndpointStatusKind, Event, RequestFinished

Probe = Callable[[], Awaitable[tuple[bool, str]]]
PROBE_FIRST_S = 0.5
PROBE_MAX_S = 10.0


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
    ) -> None:
        self.endpoint_id = endpoint_id
        self.emit = emit
        self.probe_first_s = probe_first_s
        self.probe_max_s = probe_max_s
        self.give_up_s = give_up_s
        self.paused = False
        self.probe: Probe | None = None  # the endpoint's health check, set for its run
        # Why the endpoint's run ended, once an outage outlasted ``give_up_s``.
        self.gave_up: str | None = None
        self._prober: asyncio.Task | None = None
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
        """Close the gate when ``record`` shows the endpoint refusing connections."""
        if record.error_kind != "connect" or self.down or self.probe is None:
            return
        self._status("down", f"{record.error_message}; probing /health until it answers")
        self._prober = asyncio.create_task(self._probe_until_back(self.probe))
        self._update()

    async def close(self) -> None:
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
                try:
                    healthy, message = await probe()
                except Exception as error:  # a probe that cannot even ask is an unhealthy one
                    healthy, message = False, f"health check failed: {error}"
                down_s = time.perf_counter() - started
                if healthy:
                    back = f"back after {down_s:.1f} s"
                    self._status("paused" if self.paused else "running", back)
                    return
                if down_s >= self.give_up_s:
                    self.gave_up = f"down for {down_s:.0f} s, gave up: {message}"
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

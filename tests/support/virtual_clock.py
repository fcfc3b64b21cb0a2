"""An asyncio event loop on a virtual clock, for tests of schedules.

Time stands still while any callback is ready, and when every task waits on a timer it jumps
straight to the next one. A schedule is then kept to the float, whatever the machine's load, and
a test of seconds of sleeps takes milliseconds. Real I/O still works where it is ready at once
(the loop's own wake-up pipe); a loop that would wait on I/O with no timer pending raises
instead of hanging, since nothing on a virtual clock can end that wait.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _JumpingSelector(selectors.DefaultSelector):
    """A selector whose wait for a timeout moves the virtual clock instead of the process."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            raise RuntimeError("virtual clock: nothing is scheduled, so this wait would be forever")
        self.now += timeout
        return []


class VirtualClockLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self._clock = _JumpingSelector()
        super().__init__(self._clock)

    def time(self) -> float:
        return self._clock.now

    def stall(self, seconds: float) -> None:
        """As if the running callback blocked the loop for ``seconds`` (a stalled client)."""
        self._clock.now += seconds


def run_virtual(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a fresh virtual-clock loop."""
    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        return runner.run(coro)


def virtual_loop() -> VirtualClockLoop:
    """The running loop, which a test run by ``run_virtual`` knows to be virtual."""
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualClockLoop)
    return loop

"""An asyncio event loop whose timers fire on time, for the simulator's token schedule.

On Linux asyncio waits with ``epoll_wait``, which counts its timeout in whole milliseconds; Python
rounds the timeout up so as never to wake early. Every ``call_at`` therefore fires 0-1 ms late,
0.5 ms on average, and a simulated first token leaves that much after its schedule: an error the
fidelity benchmark would blame on the client. ``select()`` takes its timeout in microseconds, and
an epoll descriptor is itself readable while any file registered in it is ready, so waiting on the
epoll descriptor with ``select()`` and then collecting events with a zero timeout wakes on time
(within the kernel's 50 us timer slack) for one extra system call per wait. Other platforms'
default selectors (kqueue) already take sub-millisecond timeouts and are left as they are.
"""

from __future__ import annotations

import asyncio
import select
import selectors
import sys

# select() cannot watch a descriptor at or above FD_SETSIZE; the epoll descriptor is opened
# with the loop, among the first of the process, so this only guards against the unexpected.
_FD_SETSIZE = 1024


def new_punctual_loop() -> asyncio.AbstractEventLoop:
    """An event loop for a process that serves a schedule (``asyncio.Runner(loop_factory=)``)."""
    if sys.platform == "linux":
        return asyncio.SelectorEventLoop(_PunctualEpollSelector())
    return asyncio.new_event_loop()


if sys.platform == "linux":

    class _PunctualEpollSelector(selectors.EpollSelector):
        """``EpollSelector`` whose timeout has microsecond resolution instead of millisecond."""

        def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
            epoll_fd = self.fileno()
            if timeout is not None and timeout > 0 and epoll_fd < _FD_SETSIZE:
                select.select((epoll_fd,), (), (), timeout)
                timeout = 0
            return super().select(timeout)

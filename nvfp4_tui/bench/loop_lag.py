"""The runner's own event-loop lag: how late the loop runs what became ready, phase by phase.

Every timing the client takes is a ``perf_counter`` read inside a callback of this loop. When the
loop is busy (parsing a burst of chunks, scoring, writing a part, a box with more runners than
cores) a chunk that arrived on time is read late, and its TTFT or ITL reads that much long. A
probe that sleeps a fixed interval and notes how late it woke measures exactly that delay, for
every phase running at the time, at the cost of a few microseconds per wake.

A lag has two causes the probe cannot tell apart: the loop busy with work of its own, or the
loop's thread waiting for a CPU while other processes run (vLLM's CPU build beside the client on
a 2-core box kept it off the CPU 5 s of a 32 s run, in stalls of up to 0.7 s). Each window also
takes the thread's run-queue wait from the kernel (Linux' schedstat), so a report can say which.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

from nvfp4_tui.core.stats import QuantileSketch

# The probe's sleep. A stall of S seconds reads as at least S minus this (the probe may have been
# due up to one interval after the stall began), so it bounds how much a stall is under-read; at
# 100 wakes a second the probe costs well under 1% of a core.
PROBE_INTERVAL_S = 0.01
# Lags kept exactly per phase before they fold into the sketch's bounded histogram (0.5% error):
# 40 s of probes, 32 KiB; a phase of an hour costs no more.
EXACT_LAGS = 4096


# The calling thread's scheduler statistics: time on a CPU, time waiting for one (both ns), and
# timeslices run. Linux only; elsewhere the wait is not known.
SCHEDSTAT = Path("/proc/thread-self/schedstat")


def runqueue_wait_s() -> float | None:
    """Seconds the calling thread has waited for a CPU since it started, or None where the
    kernel does not say."""
    try:
        return int(SCHEDSTAT.read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


class LagWindow:
    """The probe's lags while one phase runs, and how long the loop's thread waited for a CPU
    meanwhile (``cpu_wait_s``, once the window is closed; None where it is not known)."""

    __slots__ = ("_lags", "_wait_from_s", "cpu_wait_s", "max_s")

    def __init__(self) -> None:
        self._lags = QuantileSketch(exact_cap=EXACT_LAGS)
        self.max_s: float | None = None
        self._wait_from_s = runqueue_wait_s()
        self.cpu_wait_s: float | None = None

    def close(self) -> None:
        now_s = runqueue_wait_s()
        if now_s is not None and self._wait_from_s is not None:
            self.cpu_wait_s = max(0.0, now_s - self._wait_from_s)

    def add(self, lag_s: float) -> None:
        self._lags.add(lag_s)
        if self.max_s is None or lag_s > self.max_s:
            self.max_s = lag_s

    @property
    def p99_s(self) -> float | None:
        return self._lags.quantile(99)


class LoopLagMonitor:
    """Probes the running loop's lag (``run``) and hands each sample to every open window."""

    def __init__(self, interval_s: float = PROBE_INTERVAL_S) -> None:
        self.interval_s = interval_s
        self._open: set[LagWindow] = set()

    @contextlib.contextmanager
    def window(self) -> Iterator[LagWindow]:
        """A window that collects lags until the ``with`` block ends; entered and left on the
        loop's thread, whose CPU wait it takes."""
        window = LagWindow()
        self._open.add(window)
        try:
            yield window
        finally:
            self._open.discard(window)
            window.close()

    async def run(self) -> None:
        """Probe until cancelled."""
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self.interval_s
            await asyncio.sleep(self.interval_s)
            # The loop may wake a timer up to its clock resolution early: never a negative lag.
            lag_s = max(loop.time() - due, 0.0)
            for window in self._open:
                window.add(lag_s)

"""The runner measures its own event-loop lag per phase and flags phases it could have distorted.

The probe is checked against stalls of a loop on a virtual clock (a long parse or a busy box
holding the loop, to the microsecond whatever the machine's load), then through a real run
against the simulator, where a subscriber that blocks on every finished request makes the
phase's timings doubtful.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from nvfp4_tui.bench.loop_lag import PROBE_INTERVAL_S, LagWindow, LoopLagMonitor, runqueue_wait_s
from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.core.events import Event, PhaseFinished, RequestFinished, decode, encode, to_dict
from nvfp4_tui.core.timing_doubt import (
    TIMING_DOUBT_LAG_S,
    describe_timing_doubt,
    timing_doubt,
)
from nvfp4_tui.launch.run import PhasePrinter
from nvfp4_tui.output.report import doubt_table
from nvfp4_tui.sim.process import SimProcess
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.runs import record_run, write_run_profile
from tests.support.factories import T0
from tests.support.virtual_clock import run_virtual, virtual_loop

STALL_S = 0.05
# The probe may have been due up to one interval after the stall began: it reads at least this.
STALL_READ_AT_LEAST_S = STALL_S - PROBE_INTERVAL_S
SETTLE_S = 3 * PROBE_INTERVAL_S  # a few probes before and after a stall
QUIET_S = 0.3
BLOCK_PER_REQUEST_S = 0.03
PHASE = PhaseFinished(T0, "e0", "english", 4, 0, 8, 0, 800, 4.0)


@contextlib.asynccontextmanager
async def probing() -> AsyncIterator[LoopLagMonitor]:
    monitor = LoopLagMonitor()
    task = asyncio.create_task(monitor.run())
    try:
        yield monitor
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


# Floats summed along a virtual clock may land a rounding error short of an exact bound.
EPSILON_S = 1e-9


async def _stall(window_monitor: LoopLagMonitor) -> LagWindow:
    with window_monitor.window() as window:
        await asyncio.sleep(SETTLE_S)
        virtual_loop().stall(STALL_S)  # the loop is blocked: nothing else runs meanwhile
        await asyncio.sleep(SETTLE_S)
    return window


def test_a_stall_on_the_loop_reads_as_lag() -> None:
    async def stalled() -> LagWindow:
        async with probing() as monitor:
            return await _stall(monitor)

    window = run_virtual(stalled())
    assert window.max_s is not None and window.max_s >= STALL_READ_AT_LEAST_S - EPSILON_S
    assert window.p99_s is not None and window.p99_s >= STALL_READ_AT_LEAST_S - EPSILON_S


def test_a_quiet_loop_reads_no_lag_and_a_stall_does() -> None:
    async def quiet_then_stalled() -> tuple[LagWindow, LagWindow]:
        async with probing() as monitor:
            with monitor.window() as quiet:
                await asyncio.sleep(QUIET_S)
            return quiet, await _stall(monitor)

    quiet, stalled = run_virtual(quiet_then_stalled())
    assert quiet.max_s == 0.0
    assert stalled.max_s is not None and stalled.max_s >= STALL_READ_AT_LEAST_S - EPSILON_S


def test_only_the_windows_open_during_a_stall_see_it() -> None:
    async def nested() -> tuple[LagWindow, LagWindow, LagWindow]:
        async with probing() as monitor:
            with monitor.window() as phase_a:
                with monitor.window() as phase_b:
                    await asyncio.sleep(SETTLE_S)
                stalled = await _stall(monitor)
            return phase_a, phase_b, stalled

    phase_a, phase_b, stalled = run_virtual(nested())
    assert phase_a.max_s is not None and phase_a.max_s >= STALL_READ_AT_LEAST_S - EPSILON_S
    assert phase_b.max_s == 0.0  # it closed before the stall
    assert (stalled.max_s or 0.0) >= STALL_READ_AT_LEAST_S - EPSILON_S


def test_the_doubt_is_the_lag_p99_above_the_threshold() -> None:
    assert timing_doubt(PHASE) is None  # recorded before the lag was measured
    assert timing_doubt(replace(PHASE, loop_lag_p99_s=TIMING_DOUBT_LAG_S)) is None
    doubtful = replace(PHASE, loop_lag_p99_s=0.023, loop_lag_max_s=0.081)
    assert timing_doubt(doubtful) == 0.023
    assert describe_timing_doubt(doubtful) == (
        "timings may be up to 23 ms late: event loop lag p99, max 81 ms"
    )
    assert describe_timing_doubt(replace(PHASE, loop_lag_p99_s=0.001)) is None


def test_a_doubt_the_box_explains_says_how_long_the_client_waited_for_a_cpu() -> None:
    busy_box = replace(PHASE, loop_lag_p99_s=0.023, loop_lag_max_s=0.7, cpu_wait_s=1.24)
    assert describe_timing_doubt(busy_box) == (
        "timings may be up to 23 ms late: event loop lag p99, max 700 ms; "
        "the client waited 1.2 s for a CPU (the box is busy)"
    )
    ordinary = replace(busy_box, cpu_wait_s=0.02)
    assert describe_timing_doubt(ordinary) == (
        "timings may be up to 23 ms late: event loop lag p99, max 700 ms"
    )
    table = doubt_table([busy_box, replace(ordinary, cpu_wait_s=None)], ())
    assert table is not None
    _, headers, rows = table
    assert headers[-2:] == ["CPU wait s", "% of phase"]
    assert [row[-2:] for row in rows] == [["1.2", "31"], ["—", "—"]]


# A spinner pinned to one CPU, ending by itself in case its test could not end it.
SPIN = "import os, time\nos.sched_setaffinity(0, {%d})\nend = time.time() + 20\nwhile time.time() < end: pass"
SPINNERS = 2
WORK_S = 0.6  # of work on the loop while the spinners share its CPU: about 0.4 s of waiting


@pytest.mark.skipif(
    runqueue_wait_s() is None or not hasattr(os, "sched_setaffinity"),
    reason="the kernel tells no run-queue wait here (Linux only)",
)
def test_a_loop_kept_off_its_cpu_reads_as_cpu_wait() -> None:
    """Two processes spinning on the one CPU the loop's thread may use: while the loop works
    the kernel runs it about a third of the time, and its window says how long it waited."""
    allowed = os.sched_getaffinity(0)
    cpu = min(allowed)
    spinners = [
        subprocess.Popen([sys.executable, "-c", SPIN % cpu], stdin=subprocess.DEVNULL)
        for _ in range(SPINNERS)
    ]

    async def work_while_crowded() -> LagWindow:
        async with probing() as monitor:
            await asyncio.sleep(0.3)  # the spinners started
            with monitor.window() as window:
                until = time.perf_counter() + WORK_S
                while time.perf_counter() < until:  # the loop's own work, on a crowded CPU
                    pass
            return window

    try:
        os.sched_setaffinity(0, {cpu})  # this thread only: the loop's
        window = asyncio.run(work_while_crowded())
    finally:
        os.sched_setaffinity(0, allowed)
        for spinner in spinners:
            spinner.kill()
            spinner.wait(timeout=10)
    assert window.cpu_wait_s is not None and window.cpu_wait_s >= 0.1


def test_the_headless_line_of_a_doubtful_phase_says_how_late() -> None:
    stream = io.StringIO()
    printer = PhasePrinter(stream)
    printer(replace(PHASE, loop_lag_p99_s=0.0004, loop_lag_max_s=0.002))
    printer(replace(PHASE, phase_index=1, loop_lag_p99_s=0.023, loop_lag_max_s=0.081))
    trusted, doubtful = stream.getvalue().splitlines()
    assert "late" not in trusted
    assert doubtful.endswith("timings may be up to 23 ms late: event loop lag p99, max 81 ms")


def test_phase_events_with_and_without_the_lag_decode() -> None:
    measured = replace(PHASE, loop_lag_p99_s=0.0125, loop_lag_max_s=0.04)
    assert decode(encode(measured)) == measured
    older = {
        k: v
        for k, v in to_dict(PHASE).items()
        if not k.startswith("loop_lag") and k != "cpu_wait_s"
    }
    decoded = decode(json.dumps(older))
    assert isinstance(decoded, PhaseFinished)
    assert decoded.loop_lag_p99_s is None and decoded.loop_lag_max_s is None
    assert decoded.cpu_wait_s is None


def test_a_run_records_each_phase_lag_and_flags_a_blocked_one(tmp_path: Path) -> None:
    requests = 4
    path = write_run_profile(
        tmp_path,
        [endpoint_toml("e0", 0, decode_tps=100.0, ttft_s=0.05)],
        requests=requests,
        concurrency=2,
        timeout_s=10.0,
    )

    def block(event: Event) -> None:
        if isinstance(event, RequestFinished):
            time.sleep(BLOCK_PER_REQUEST_S)  # a subscriber that holds the loop

    with SimProcess(path, port_base=0) as sim:
        live = with_urls(load_profile(path), sim.urls)
        _, quiet = asyncio.run(record_run(live, tmp_path / "quiet"))
        _, blocked = asyncio.run(record_run(live, tmp_path / "blocked", subscribers=[block]))

    (quiet_phase,) = [e for e in quiet.events() if isinstance(e, PhaseFinished)]
    assert quiet_phase.loop_lag_p99_s is not None and quiet_phase.loop_lag_max_s is not None
    if runqueue_wait_s() is not None:  # Linux: the kernel's run-queue wait, recorded
        assert quiet_phase.cpu_wait_s is not None and quiet_phase.cpu_wait_s >= 0
    assert 0 <= quiet_phase.loop_lag_p99_s <= quiet_phase.loop_lag_max_s
    (blocked_phase,) = [e for e in blocked.events() if isinstance(e, PhaseFinished)]
    assert blocked_phase.requests == requests
    # Each block reads as at least its length less one probe interval.
    assert (blocked_phase.loop_lag_max_s or 0.0) >= BLOCK_PER_REQUEST_S - PROBE_INTERVAL_S
    assert timing_doubt(blocked_phase) is not None

"""When a phase's timings cannot be trusted: the runner's event-loop lag against one threshold.

Pure, with no I/O and no aiohttp, so the state, the report and the views can all ask it. The lag
itself is measured by ``nvfp4_tui.bench.loop_lag`` and arrives on ``PhaseFinished``.
"""

from __future__ import annotations

from nvfp4_tui.core.events import PhaseFinished

# A phase is in doubt when its loop lag p99 exceeds this. The shortest interval the client times
# is one token's ITL: 7 ms at the fleet's fastest decode (144 tok/s), 20 ms at 50 tok/s; a lag of
# 5 ms is most of the first and a quarter of the second, so the phase's ITL and TTFT percentiles
# then describe the client as much as the server. It sits above what an undisturbed loop shows
# (the probe's own wake-up rounding is up to 1 ms; short simulated phases on a 2-core box read
# 2-3 ms at p99), so it fires on a stall, not on noise.
TIMING_DOUBT_LAG_S = 0.005

# Less CPU wait than this in a phase is a busy box's ordinary scheduling, not worth a word.
CPU_WAIT_SHOWN_S = 0.1

# What a run against a faster simulator (demo --time-scale) records, said once where it is shown:
# its times and speeds are the modelled GPU's (bench.model_time), and so is its loop lag, which
# makes a client that could not keep up with the faster clock a phase in timing doubt.
MODELLED_TIME = "times and speeds in modelled seconds"


def timing_doubt(phase: PhaseFinished) -> float | None:
    """How late the phase's timings may read (its loop lag p99, seconds), or None when they can
    be trusted or the phase was recorded without lag measurements."""
    return doubt_of_lag(phase.loop_lag_p99_s)


def doubt_of_lag(loop_lag_p99_s: float | None) -> float | None:
    """``timing_doubt`` of a phase whose loop lag p99 was ``loop_lag_p99_s``."""
    lag_s = loop_lag_p99_s
    return lag_s if lag_s is not None and lag_s > TIMING_DOUBT_LAG_S else None


def describe_timing_doubt(phase: PhaseFinished) -> str | None:
    """The doubt in words for a report line or a view, or None when there is none."""
    lag_s = timing_doubt(phase)
    if lag_s is None:
        return None
    worst = f", max {phase.loop_lag_max_s * 1000:.0f} ms" if phase.loop_lag_max_s else ""
    return f"timings may be up to {lag_s * 1000:.0f} ms late: event loop lag p99{worst}" + (
        cpu_wait_words(phase)
    )


def cpu_wait_words(phase: PhaseFinished) -> str:
    """``; the client waited 1.2 s for a CPU`` where the box kept the loop off the CPU for at
    least ``CPU_WAIT_SHOWN_S`` of the phase (other processes took the cores), else nothing."""
    wait_s = phase.cpu_wait_s
    if wait_s is None or wait_s < CPU_WAIT_SHOWN_S:
        return ""
    return f"; the client waited {wait_s:.1f} s for a CPU (the box is busy)"

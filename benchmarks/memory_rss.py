"""Memory: RSS of a process holding a live run session and a FleetState, over a long accelerated run.

The demo fleet is simulated in its own process at ``time_scale`` 20 (tokens come twenty times
faster than the schedule says), and this process runs what the UI and its worker hold between
them: a ``Session`` (runner, client, snapshot writer, telemetry samplers) whose every event is
also applied to a ``FleetState``. Concurrency 4 on every endpoint, the six suites one after
another, each phase bounded by time. RSS is sampled every few seconds; the slope over the second
half of the run (after the state's ring buffers have filled) says whether memory grows.

``--ladder 32k,128k`` runs the context ladder instead (issue 29): prompts of those lengths, each
built when sent and half a megabyte at 128K tokens, so RSS says whether the client holds more than
the requests in flight. Its result goes to ``results/memory_ladder.json``.

Usage: ``python benchmarks/memory_rss.py [--quick] [--ladder LENGTHS]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import harness
from harness import Target, fmt

from nvfp4_tui.bench.session import Session
from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile, with_overrides
from nvfp4_tui.core.events import Event, RequestFinished
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.telemetry.sampler import telemetry_for_run

NAME = "memory"
TARGET_SLOPE_MIB_PER_MIN = 1.0
MIN_VERDICT_MINUTES = 10.0
SETTLE_FRACTION = 0.5  # the slope is fitted on the samples after this share of the run
STOP_GRACE_S = 30.0


@dataclass(frozen=True)
class Settings:
    duration_s: float
    time_scale: float
    concurrency: int
    sample_s: float
    ladder: str | None = None  # --context-lengths of a ladder run


QUICK = Settings(duration_s=60.0, time_scale=20.0, concurrency=4, sample_s=2.0)
FULL = Settings(duration_s=1800.0, time_scale=20.0, concurrency=4, sample_s=5.0)


class Counting:
    """Applies every event to the state and counts what went by."""

    def __init__(self, state: FleetState) -> None:
        self.state = state
        self.events = 0
        self.requests = 0
        self.tokens = 0

    def __call__(self, event: Event) -> None:
        self.state.apply(event)
        self.events += 1
        if isinstance(event, RequestFinished):
            self.requests += 1
            self.tokens += event.tokens_out or 0


async def _sample_rss(samples: list[tuple[float, float]], started: float, every_s: float) -> None:
    while True:
        samples.append((time.perf_counter() - started, harness.rss_mib()))
        await asyncio.sleep(every_s)


async def _run_session(session: Session, settings: Settings) -> tuple[list, str]:
    samples: list[tuple[float, float]] = []
    started = time.perf_counter()
    sampler = asyncio.create_task(_sample_rss(samples, started, settings.sample_s))
    run = asyncio.create_task(session.run())
    try:
        # Phases end by themselves after duration_s / suites each; the grace bounds a slow close.
        done, _ = await asyncio.wait({run}, timeout=settings.duration_s + STOP_GRACE_S)
        if not done:
            run.cancel()
        result = await run
    finally:
        sampler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler
    return samples, result.status


def run(settings: Settings) -> dict[str, Any]:
    profile = load_profile(DEMO_PROFILE)
    if settings.ladder is not None:
        profile = with_overrides(profile, context_lengths=settings.ladder)
    suites_count = len(profile.run.suites)
    profile = with_overrides(
        profile,
        concurrency=(settings.concurrency,),
        duration_s=settings.duration_s / suites_count,
    )
    with (
        tempfile.TemporaryDirectory(prefix="nvfp4-memory-") as tmp,
        SimProcess(profile.path, time_scale=settings.time_scale) as sim,
    ):
        plan = plan_run(profile, gpu_telemetry="sim").with_urls(sim.urls)
        live, sources, _ = telemetry_for_run(plan)
        counter = Counting(FleetState())
        session = Session(
            live.profile, live.suites, Path(tmp), subscribers=[counter], gpu_sources=sources
        )
        session.open()
        rss_start = harness.rss_mib()
        samples, status = asyncio.run(_run_session(session, settings))
        # After close: the writer's compaction has read every part back (polars' arenas).
        rss_after_close = harness.rss_mib()
    elapsed_s = samples[-1][0] if samples else 0.0
    # Fitted while phases run: after duration_s the session closes the snapshot (compaction).
    settled = [
        (t, rss)
        for t, rss in samples
        if settings.duration_s * SETTLE_FRACTION <= t <= settings.duration_s
    ]
    slope = harness.slope_per_unit([t / 60 for t, _ in settled], [rss for _, rss in settled])
    return {
        "status": status,
        "elapsed_s": elapsed_s,
        "events": counter.events,
        "requests": counter.requests,
        "tokens": counter.tokens,
        "tokens_per_s": counter.tokens / elapsed_s if elapsed_s else None,
        "simulated_minutes": elapsed_s * settings.time_scale / 60,
        "rss_mib_before_run": rss_start,
        "rss_mib_first": samples[0][1],
        "rss_mib_at_settle": settled[0][1] if settled else None,
        "rss_mib_peak": max(rss for _, rss in samples),
        "rss_mib_last": samples[-1][1],
        "rss_mib_after_close": rss_after_close,
        "slope_mib_per_min_settled": slope,
        "slope_mib_per_min_whole": harness.slope_per_unit(
            [t / 60 for t, _ in samples], [rss for _, rss in samples]
        ),
        "samples": [[round(t, 2), round(rss, 2)] for t, rss in samples],
    }


def targets(numbers: dict[str, Any]) -> list[Target]:
    slope = numbers["slope_mib_per_min_settled"]
    minutes = numbers["elapsed_s"] / 60
    # A slope of 1 MiB/min hides in a few minutes of allocator noise: short runs give no verdict.
    decisive = slope is not None and minutes >= MIN_VERDICT_MINUTES
    return [
        Target(
            "flat RSS",
            f"|slope| <= {TARGET_SLOPE_MIB_PER_MIN:g} MiB/min after the first half "
            f"(runs of {MIN_VERDICT_MINUTES:g}+ min)",
            f"{fmt(slope, '+.2f')} MiB/min over {minutes:.1f} min",
            abs(slope) <= TARGET_SLOPE_MIB_PER_MIN if decisive and slope is not None else None,
        )
    ]


def report(numbers: dict[str, Any]) -> list[str]:
    rows = [
        [
            f"{numbers['elapsed_s'] / 60:.1f}",
            f"{numbers['simulated_minutes']:.0f}",
            f"{numbers['requests']:,}",
            f"{numbers['events']:,}",
            fmt(numbers["tokens_per_s"], ",.0f"),
            f"{numbers['rss_mib_first']:.0f}",
            fmt(numbers["rss_mib_at_settle"], ".0f"),
            f"{numbers['rss_mib_peak']:.0f}",
            f"{numbers['rss_mib_last']:.0f}",
            f"{numbers['rss_mib_after_close']:.0f}",
            fmt(numbers["slope_mib_per_min_settled"], "+.2f"),
            fmt(numbers["slope_mib_per_min_whole"], "+.2f"),
        ]
    ]
    return [
        harness.table(
            "Memory: Session + FleetState in one process, demo fleet at c=4, time scale "
            f"{numbers.get('time_scale', 20):g}"
            + (f", context ladder {numbers['ladder']}" if numbers.get("ladder") else ""),
            [
                "min",
                "sim min",
                "requests",
                "events",
                "tok/s",
                "RSS first MiB",
                "at half",
                "peak",
                "last",
                "after close",
                "slope 2nd half MiB/min",
                "slope whole",
            ],
            rows,
        )
    ]


NOTES = [
    "RSS is this process's resident memory (/proc/self/statm): runner, client, snapshot writer "
    "(polars), telemetry samplers and FleetState; the simulator and the code sandbox run in "
    "their own processes and are not counted.",
    "The session hands the C heap's free pages back every 10 s (nvfp4_tui.bench.heap): without it "
    "glibc keeps the holes that freed buffers leave in its main heap resident, and RSS climbs "
    "with every new suite while the memory in use stays flat.",
    "With time_scale 20 the simulated fleet asks for twenty times its token rate; on a small "
    "machine the simulator and this process saturate the CPU first, so tok/s is what was "
    "reached, not what was asked for.",
]


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, help="run this long instead (wall-clock minutes)")
    parser.add_argument("--ladder", metavar="LENGTHS", help="a context ladder run, e.g. 32k,128k")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    if args.minutes:
        settings = replace(settings, duration_s=args.minutes * 60)
    if args.ladder:
        settings = replace(settings, ladder=args.ladder)
    return harness.measure_and_publish(
        f"{NAME}_ladder" if args.ladder else NAME,
        args,
        settings,
        run=lambda s: {**run(s), "time_scale": s.time_scale, "ladder": s.ladder},
        targets=targets,
        report=report,
        notes=NOTES,
    )


if __name__ == "__main__":
    sys.exit(main())

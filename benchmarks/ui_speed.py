"""UI speed: how soon the demo's first frame is drawn, and how fast screens switch under load.

Start-up: ``nvfp4-tui demo`` under a pseudo-terminal (160 x 48), as a person starts it, timed
from the command's start to the frame that shows the last of the seven panes. Switches: the
monitor on a live demo run at concurrency 4 (its worker and simulator in their own processes,
as under the real tool: the loaded runner), run by Textual's Pilot and sent Enter (a GPU's
detail), Esc, ``l`` (the leaderboard), Esc. Each switch is timed from the key's event to the
first frame of the new screen: the compositor's output handed to the terminal driver, which
Pilot's headless driver then drops. (``Pilot.press`` itself also waits for the process to go
idle, up to a second, which under a live run measures the run, not the switch.)

Usage: ``python benchmarks/ui_speed.py [--quick]``.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness
from harness import Target, fmt
from rich.console import RenderableType
from textual.screen import Screen
from ui_cost import COLUMNS, ROWS, START_TIMEOUT_S, TerminalSession

from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile, with_overrides
from nvfp4_tui.core.stats import percentile
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.sources.live import LiveSource
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.screens.detail import DetailScreen
from nvfp4_tui.tui.screens.fleet import FleetScreen
from nvfp4_tui.tui.screens.leaderboard import LeaderboardScreen

NAME = "ui_speed"
SWITCH_TIMEOUT_S = 10.0
TARGET_SWITCH_P95_MS = 150.0
TARGET_FIRST_FRAME_S = 3.0
# The demo's last pane: once its label is on the terminal, the whole grid has been drawn.
LAST_PANE = b"Jiunsong"
SWITCHES = (
    ("enter", "detail", DetailScreen),
    ("escape", "grid", FleetScreen),
    ("l", "leaderboard", LeaderboardScreen),
    ("escape", "grid", FleetScreen),
)


@dataclass(frozen=True)
class Settings:
    startups: int
    rounds: int  # of the four switches
    warmup_s: float  # of the live run, before the first switch
    dwell_s: float  # on each screen, live events arriving, before the next key
    concurrency: int


QUICK = Settings(startups=3, rounds=8, warmup_s=8.0, dwell_s=0.5, concurrency=4)
FULL = Settings(startups=5, rounds=30, warmup_s=15.0, dwell_s=1.0, concurrency=4)


def _startup(workdir: Path) -> float:
    session = TerminalSession(["demo", "--out", str(workdir)], workdir.parent, markers=(LAST_PANE,))
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while LAST_PANE not in session.first_seen:
            if session.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"no grid drawn: {session.last_output()[-400:]!r}")
            time.sleep(0.05)
        return session.first_seen[LAST_PANE]
    finally:
        session.quit()


async def _until_requests_finish(app: FleetApp) -> None:
    """Until the run's first requests are in: the panes exist and have figures to show."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while not any(e.requests_done for e in app.state.endpoints.values()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no request finished in {START_TIMEOUT_S:g} s")
        await asyncio.sleep(0.1)


class FrameTimes:
    """When the app hands each frame to its driver, and of which screen."""

    def __init__(self, app: FleetApp) -> None:
        self.frames: list[tuple[float, object]] = []
        display = app._display

        def timed(screen: Screen, renderable: RenderableType | None) -> None:
            if renderable is not None:
                self.frames.append((time.perf_counter(), screen))
            display(screen, renderable)

        app._display = timed  # type: ignore[method-assign]

    async def first_of(self, screen_type: type[Screen], since: int) -> float:
        """When the first frame of a ``screen_type`` screen from frame ``since`` on was handed
        over."""
        deadline = time.monotonic() + SWITCH_TIMEOUT_S
        while time.monotonic() < deadline:
            for t, screen in self.frames[since:]:
                if isinstance(screen, screen_type):
                    return t
            await asyncio.sleep(0.002)
        raise RuntimeError(f"no frame of {screen_type.__name__} in {SWITCH_TIMEOUT_S:g} s")


async def _switch_times(settings: Settings, workdir: Path) -> dict[str, list[float]]:
    profile = with_overrides(
        load_profile(DEMO_PROFILE), concurrency=(settings.concurrency,), duration_s=3600.0
    )
    plan = plan_run(profile, gpu_telemetry="sim")
    times: dict[str, list[float]] = {name: [] for _, name, _ in SWITCHES}
    with SimProcess(profile.path) as sim:
        source = LiveSource(WorkerSpec.of(plan.with_urls(sim.urls, 1.0), workdir))
        app = FleetApp(source)
        try:
            async with app.run_test(size=(COLUMNS, ROWS)):
                frames = FrameTimes(app)
                await _until_requests_finish(app)
                await asyncio.sleep(settings.warmup_s)
                for _ in range(settings.rounds):
                    for key, name, screen in SWITCHES:
                        since, started = len(frames.frames), time.perf_counter()
                        app.simulate_key(key)
                        times[name].append(await frames.first_of(screen, since) - started)
                        await asyncio.sleep(settings.dwell_s)
        finally:
            await source.close()
    return times


def run(settings: Settings) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="nvfp4-ui-speed-") as tmp:
        workdir = Path(tmp)
        startups = [_startup(workdir / f"start{i}") for i in range(settings.startups)]
        switches = asyncio.run(_switch_times(settings, workdir / "switch"))
    every = [t for ts in switches.values() for t in ts]
    return {
        "terminal": f"{COLUMNS}x{ROWS}",
        "first_frame_s": startups,
        "switch_s": switches,
        "switch_p95_ms": 1000 * percentile(every, 95),
    }


def targets(numbers: dict[str, Any]) -> list[Target]:
    p95 = numbers["switch_p95_ms"]
    first = max(numbers["first_frame_s"])
    return [
        Target(
            "screen switch under load",
            f"p95 < {TARGET_SWITCH_P95_MS:g} ms at c=4",
            f"{p95:.0f} ms",
            p95 < TARGET_SWITCH_P95_MS,
        ),
        Target(
            "demo's first frame",
            f"< {TARGET_FIRST_FRAME_S:g} s after launch (slowest start)",
            f"{first:.1f} s",
            first < TARGET_FIRST_FRAME_S,
        ),
    ]


def report(numbers: dict[str, Any]) -> list[str]:
    rows = [
        [
            name,
            str(len(ts)),
            fmt(1000 * percentile(ts, 50), ".0f"),
            fmt(1000 * percentile(ts, 95), ".0f"),
            fmt(1000 * max(ts), ".0f"),
        ]
        for name, ts in numbers["switch_s"].items()
    ]
    starts = numbers["first_frame_s"]
    return [
        harness.table(
            f"Screen switches under a live demo at c=4 ({numbers['terminal']}, Pilot), ms",
            ["to", "n", "p50", "p95", "max"],
            rows,
        ),
        harness.table(
            "The demo's first frame (all seven panes drawn), s after launch",
            ["starts", "fastest", "slowest"],
            [[str(len(starts)), f"{min(starts):.2f}", f"{max(starts):.2f}"]],
        ),
    ]


NOTES = [
    "A switch is timed from the key's event to the first frame of the new screen handed to the "
    "terminal driver (mount, layout, styles and the render of every widget on it included).",
    "The first frame is timed from the command's start (Python's imports, the simulator's and "
    "the worker's start included) to the output that draws the seventh pane's label.",
]


def main(argv: list[str] | None = None) -> int:
    args = harness.parser(__doc__.splitlines()[0]).parse_args(argv)
    return harness.measure_and_publish(
        NAME,
        args,
        QUICK if args.quick else FULL,
        run=run,
        targets=targets,
        report=report,
        notes=NOTES,
    )


if __name__ == "__main__":
    sys.exit(main())

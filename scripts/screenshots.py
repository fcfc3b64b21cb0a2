"""Writes the README's screenshots, docs/*.svg, from a replay of the shipped sample snapshot.

    PYTHONPATH=. python scripts/screenshots.py [--out docs] [--size 160x48] [--at 0.4]

The pictures are what `nvfp4-tui replay snapshots/sample-demo` shows: the sample's recorded
events played up to a moment of the run (``--at``, a share of its length) for the fleet and
detail screens, and to its end for the leaderboard, each with the clock stopped there, so
running this again gives the same files unless the UI or the sample changed. (A replay has no
live token progress: its big numbers are the means of the last requests at each phase's level.)
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from nvfp4_tui.core.events import Event, RequestFinished, RunFinished, RunStarted
from nvfp4_tui.sources.base import Playback, SourceStatus
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.tui.app import FleetApp
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import settle

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "snapshots" / "sample-demo"
# (file name, whole run or up to --at, keys pressed once the events are in)
SHOTS: tuple[tuple[str, bool, tuple[str, ...]], ...] = (
    ("fleet", False, ()),
    ("detail", False, ("down", "down", "enter")),
    ("leaderboard", True, ("l",)),
)
DRAW_WAIT_S = 0.3


class PausedReplay(FixedSource):
    """The sample's events up to a moment, read out as a replay paused there."""

    def __init__(self, events: list[Event], start_t: float, at_t: float, end_t: float) -> None:
        super().__init__(events, kind="replay", linger=True)
        self.at_t = at_t
        self.playback = Playback(
            position_s=at_t - start_t,
            duration_s=end_t - start_t,
            speed_label="x1",
            paused=True,
            at_end=at_t >= end_t,
        )

    def clock(self) -> float:
        return self.at_t

    def status(self) -> SourceStatus:
        return SourceStatus(playback=self.playback)


def _arrived_t(event: Event) -> float:
    # A request row carries its send time; it reaches a replay when it ends.
    if isinstance(event, RequestFinished) and event.e2e_s is not None:
        return event.t + event.e2e_s
    return event.t


def replay_until(events: list[Event], share: float | None) -> PausedReplay:
    """A replay paused ``share`` of the way through the run (at its end with None)."""
    start = next(e.t for e in events if isinstance(e, RunStarted))
    end = max(_arrived_t(e) for e in events)
    cut = end if share is None else start + share * (end - start)
    shown = [
        e
        for e in events
        if _arrived_t(e) <= cut and (share is None or not isinstance(e, RunFinished))
    ]
    return PausedReplay(shown, start, cut, end)


async def shoot(
    name: str,
    events: list[Event],
    share: float | None,
    keys: tuple[str, ...],
    size: tuple[int, int],
    out: Path,
) -> Path:
    source = replay_until(events, share)
    app = FleetApp(source)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, source)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await pilot.pause(DRAW_WAIT_S)
        path = app.save_screenshot(filename=f"{name}.svg", path=str(out))
    return Path(path)


def _size(text: str) -> tuple[int, int]:
    width, _, height = text.partition("x")
    return int(width), int(height)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    parser.add_argument("--size", type=_size, default=(160, 48), help="terminal WIDTHxHEIGHT")
    parser.add_argument("--at", type=float, default=0.65, help="share of the run for fleet/detail")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    events = open_snapshot(SAMPLE).events()
    for name, whole, keys in SHOTS:
        share = None if whole else args.at
        print(asyncio.run(shoot(name, events, share, keys, args.size, args.out)))


if __name__ == "__main__":
    main()

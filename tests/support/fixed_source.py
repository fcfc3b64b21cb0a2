"""A source that plays a fixed list of events: for tests, snapshot SVGs and screenshots.

It yields the whole list as one batch, or paces it by the events' own timestamps at ``speed``
times real time, and records the commands it receives so tests can assert on them. With
``linger`` it stays open after the last event, as a live run does between events, until closed.
It offers what the source of its ``kind`` offers (``capabilities``); a test that needs more of
the contract (messages, a replay's status) sets or overrides it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Literal

from nvfp4_tui.core.events import Event
from nvfp4_tui.sources.base import Capabilities, SourceStatus
from nvfp4_tui.sources.follow import FollowSource
from nvfp4_tui.sources.live import LiveSource
from nvfp4_tui.sources.replay import ReplaySource

BATCH_WINDOW_S = 0.1  # paced events this close together (in run time) travel in one batch
Kind = Literal["live", "follow", "replay"]
CAPABILITIES: dict[Kind, Capabilities] = {
    "live": LiveSource.capabilities,
    "follow": FollowSource.capabilities,
    "replay": ReplaySource.capabilities,
}


class FixedSource:
    """Plays ``events`` once; ``speed=None`` yields them all at once."""

    def __init__(
        self,
        events: Sequence[Event],
        *,
        speed: float | None = None,
        kind: Kind = "live",
        linger: bool = False,
    ) -> None:
        if speed is not None and speed <= 0:
            raise ValueError(f"speed must be > 0, got {speed}")
        self.events = list(events)
        self.speed = speed
        self.capabilities = CAPABILITIES[kind]
        self.linger = linger
        self.commands: list[str] = []
        self.messages: list[str] = []
        self.warnings: list[str] = []
        self.snapshot_path: Path | None = None
        self.drained = asyncio.Event()  # set once every event has been yielded
        self._closed = asyncio.Event()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def clock(self) -> float:
        return time.time()

    def status(self) -> SourceStatus:
        return SourceStatus()

    async def batches(self) -> AsyncIterator[list[Event]]:
        async for batch in self._paced() if self.speed is not None else self._at_once():
            if self.closed:
                return
            yield batch
        self.drained.set()
        if self.linger:
            await self._closed.wait()

    async def _at_once(self) -> AsyncIterator[list[Event]]:
        if self.events:
            yield list(self.events)

    async def _paced(self) -> AsyncIterator[list[Event]]:
        assert self.speed is not None
        # A RequestFinished carries its send time, earlier than when it arrives, so the pace
        # follows the latest timestamp seen rather than each event's own.
        batch: list[Event] = []
        batch_t: float | None = None
        for event in self.events:
            if batch_t is None:
                batch_t = event.t
            if event.t > batch_t + BATCH_WINDOW_S:
                yield batch
                await self._sleep((event.t - batch_t) / self.speed)
                batch, batch_t = [], event.t
            batch.append(event)
        if batch:
            yield batch

    async def _sleep(self, seconds: float) -> None:
        # Woken early by close(), so a stopped source stops at once.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closed.wait(), seconds)

    async def command(self, name: str) -> None:
        self.commands.append(name)

    async def close(self) -> None:
        self._closed.set()

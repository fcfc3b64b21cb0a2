"""Following a snapshot that another process is writing (a detached run, or one left by SSH).

``FollowSource`` polls the snapshot with ``SnapshotTail`` and yields what was written since the
last poll, until the manifest says ``complete`` or ``aborted`` and every event is delivered.
Following only reads: any number of followers can watch the same run. A writer that died
without closing leaves the manifest ``running``; the follower then keeps polling, and
``quiet_s`` tells how long nothing new has arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from nvfp4_tui.core.events import Event
from nvfp4_tui.sources.base import Capabilities, SourceStatus, Watch
from nvfp4_tui.store.manifest import MANIFEST_NAME, SnapshotError, read_manifest
from nvfp4_tui.store.reader import SnapshotTail

DEFAULT_POLL_INTERVAL_S = 0.5


class FollowSource:
    """Yields the events another process writes to the snapshot at ``path``."""

    capabilities = Capabilities(ends_with_run=True)
    messages: Sequence[str] = ()  # the run's notes go to its own terminal or log, not the snapshot

    def __init__(
        self,
        path: Path,
        *,
        poll_interval_s: float = DEFAULT_POLL_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not poll_interval_s > 0:
            raise ValueError(f"poll_interval_s must be > 0, got {poll_interval_s!r}")
        self.path = Path(path)
        self.poll_interval_s = poll_interval_s
        self._tail = SnapshotTail(self.path)
        self._clock = clock
        self._last_new = clock()
        self._closed = False
        self._wake = asyncio.Event()
        self.events_delivered = 0

    @property
    def snapshot_path(self) -> Path:
        return self.path

    @property
    def run_status(self) -> str | None:
        """The manifest's status at the last poll (None before the first)."""
        manifest = self._tail.manifest
        return None if manifest is None else str(manifest["status"])

    @property
    def manifest(self) -> dict[str, Any] | None:
        return self._tail.manifest

    @property
    def finished(self) -> bool:
        """The writer closed the run and everything it wrote has been delivered."""
        return self._tail.finished

    @property
    def warnings(self) -> list[str]:
        """Parts that could not be read and were skipped, one line each."""
        return list(self._tail.warnings)

    @property
    def quiet_s(self) -> float:
        """Seconds since a poll last brought new events (or since the source was made)."""
        return self._clock() - self._last_new

    def clock(self) -> float:
        return time.time()

    def status(self) -> SourceStatus:
        return SourceStatus(watch=Watch(self.run_status, self.finished, self.quiet_s))

    async def batches(self) -> AsyncIterator[list[Event]]:
        while not self._closed:
            # Parquet reads block for milliseconds: keep them off the consumer's event loop.
            fresh = await asyncio.to_thread(self._tail.poll)
            if fresh:
                self._last_new = self._clock()
                self.events_delivered += len(fresh)
                yield fresh
            if self._tail.finished:
                return
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_interval_s)

    async def command(self, name: str) -> None:
        """Nothing to control: a follower never writes to the run it watches."""

    async def close(self) -> None:
        self._closed = True
        self._wake.set()


def _started_at(directory: Path, manifest: dict[str, Any]) -> float:
    text = manifest.get("started_at")
    if isinstance(text, str):
        try:
            return datetime.fromisoformat(text).timestamp()
        except ValueError:
            pass
    return (directory / MANIFEST_NAME).stat().st_mtime


def find_newest_running(root: Path) -> Path | None:
    """The snapshot under ``root`` marked ``running`` that started last, or None."""
    newest: tuple[float, Path] | None = None
    try:
        candidates = [p for p in Path(root).iterdir() if p.is_dir() and not p.name.startswith(".")]
    except (FileNotFoundError, NotADirectoryError):
        return None
    for directory in candidates:
        try:
            manifest = read_manifest(directory)
            if manifest["status"] != "running":
                continue
            started = _started_at(directory, manifest)
        except (SnapshotError, OSError):
            continue
        if newest is None or started > newest[0]:
            newest = (started, directory)
    return newest[1] if newest else None

"""FollowSource keeps up with a snapshot another writer is filling, and stops when it closes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nvfp4_tui.core.events import Event, to_dict
from nvfp4_tui.sources.follow import FollowSource, find_newest_running
from nvfp4_tui.store.manifest import read_manifest, write_manifest
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.store.writer import SnapshotWriter
from tests.support.factories import write_snapshot

from .builders import timeline_run


def canonical(events: list[Event]) -> list[str]:
    return sorted(json.dumps(to_dict(e), sort_keys=True) for e in events)


async def write_slowly(writer: SnapshotWriter, events: list[Event], status: str) -> None:
    for start in range(0, len(events), 10):
        for event in events[start : start + 10]:
            writer.add(event)
        await asyncio.to_thread(writer.flush)
        await asyncio.sleep(0.02)
    await asyncio.to_thread(writer.close, status)


async def collect(source: FollowSource) -> list[Event]:
    seen: list[Event] = []
    async for batch in source.batches():
        seen.extend(batch)
    return seen


@pytest.mark.parametrize("status", ["complete", "aborted"])
async def test_two_followers_see_every_event_and_the_end(tmp_path: Path, status: str) -> None:
    events = timeline_run(40)
    writer = SnapshotWriter(tmp_path, "run", {"profile": None})
    writer.open()
    followers = [FollowSource(writer.path, poll_interval_s=0.01) for _ in range(2)]
    async with asyncio.timeout(30):
        results = await asyncio.gather(
            write_slowly(writer, events, status), *(collect(f) for f in followers)
        )
    for follower, seen in zip(followers, results[1:], strict=True):
        assert canonical(seen) == canonical(events)
        assert follower.finished and follower.run_status == status
        assert follower.events_delivered == len(events)
    # Following never writes: the snapshot is what the writer left.
    assert canonical(open_snapshot(writer.path).events()) == canonical(events)


async def test_a_follower_of_a_finished_run_gets_it_whole_and_stops(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, "done", timeline_run(10))
    async with asyncio.timeout(10):
        seen = await collect(FollowSource(path))
    assert len(seen) == len(timeline_run(10))


async def test_a_follower_waits_while_the_writer_is_quiet_until_closed(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, "stuck", timeline_run(5), close=None)
    ticks = iter(range(1000))
    source = FollowSource(path, poll_interval_s=0.01, clock=lambda: float(next(ticks)))
    batches = source.batches()
    async with asyncio.timeout(10):
        first = await anext(batches)
        assert first and source.run_status == "running"
        waiting = asyncio.create_task(anext(batches))
        await asyncio.sleep(0.1)
        assert not waiting.done()
        assert source.quiet_s > 0
        await source.close()
        with pytest.raises(StopAsyncIteration):
            await waiting


def test_find_newest_running(tmp_path: Path) -> None:
    assert find_newest_running(tmp_path / "missing") is None
    write_snapshot(tmp_path, "finished", timeline_run(3))
    assert find_newest_running(tmp_path) is None
    older = write_snapshot(tmp_path, "older", timeline_run(3), close=None)
    newer = write_snapshot(tmp_path, "newer", timeline_run(3), close=None)
    for path, started in (
        (older, "2026-12-02T09:00:00.000+00:00"),
        (newer, "2026-12-02T10:00:00.000+00:00"),
    ):
        write_manifest(path, {**read_manifest(path), "started_at": started})
    (tmp_path / "not-a-snapshot").mkdir()
    (tmp_path / "a-file").write_text("x")
    assert find_newest_running(tmp_path) == newer

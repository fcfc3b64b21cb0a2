"""Every event source keeps the one contract the UI reads (``sources.base``): what it can be asked
to do, its status, its clock, its notes and where its snapshot is."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.sources.base import Capabilities, EventSource, Playback, SourceStatus, Watch
from nvfp4_tui.sources.follow import FollowSource
from nvfp4_tui.sources.live import LiveSource
from nvfp4_tui.sources.replay import ReplaySource
from tests.support.factories import T0, write_snapshot
from tests.support.fixed_source import FixedSource

from .builders import timeline_run

SECONDS = 30


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    return write_snapshot(tmp_path, "run", timeline_run(SECONDS))


def _live(out_root: Path) -> LiveSource:
    spec = WorkerSpec(plan={}, out_root=str(out_root))  # never started here
    return LiveSource(spec)


def _kept(source: EventSource) -> None:
    """The parts every source has, whatever it is."""
    assert isinstance(source.capabilities, Capabilities)
    assert isinstance(source.status(), SourceStatus)
    assert isinstance(source.clock(), float)
    assert all(isinstance(line, str) for line in (*source.messages, *source.warnings))


def test_a_live_run_can_be_paused_and_stopped_and_ends_with_its_run(tmp_path: Path) -> None:
    source = _live(tmp_path)
    _kept(source)
    assert source.capabilities == Capabilities(
        pause_sending=True, stops_run=True, ends_with_run=True
    )
    assert source.status() == SourceStatus()
    assert abs(source.clock() - time.time()) < 60
    assert source.snapshot_path is None  # until the worker names it


async def test_a_followed_run_is_watched_and_ends_with_its_run(snapshot: Path) -> None:
    source = FollowSource(snapshot, poll_interval_s=0.01, clock=lambda: 5.0)
    _kept(source)
    assert source.capabilities == Capabilities(ends_with_run=True)
    assert source.snapshot_path == snapshot
    assert source.status() == SourceStatus(watch=Watch(None, finished=False, quiet_s=0.0))
    async with asyncio.timeout(10):
        async for _ in source.batches():
            pass
    watch = source.status().watch
    assert watch is not None and (watch.run_status, watch.finished) == ("complete", True)
    assert source.status().playback is None


def test_a_replay_plays_back_and_ends_with_its_recording(snapshot: Path) -> None:
    source = ReplaySource(snapshot, speed=5.0, clock=lambda: 100.0)
    _kept(source)
    assert source.capabilities == Capabilities(playback=True)
    assert source.snapshot_path == snapshot
    source.control("pause")
    source.control("seek:10")
    assert source.status() == SourceStatus(
        playback=Playback(10.0, SECONDS, "x5", paused=True, at_end=False)
    )
    assert source.clock() == T0 + 10  # "now" is the position on the recorded run's clock


def test_the_test_source_keeps_the_contract() -> None:
    # Its capabilities are the real sources' own (tests/support/fixed_source.py takes them).
    for kind in ("live", "follow", "replay"):
        _kept(FixedSource([], kind=kind))


def test_the_monitor_imports_no_store_bench_or_concrete_source() -> None:
    # What a live UI costs to start: polars and the store come only with a replay or a follower.
    code = (
        "import sys, nvfp4_tui.tui.app; "
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] == 'polars' or "
        "m.startswith(('nvfp4_tui.store', 'nvfp4_tui.bench', 'nvfp4_tui.sources.')))))"
    )
    checkout = Path(__file__).resolve().parents[2]
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=checkout, capture_output=True, text=True, check=True
    ).stdout.split()
    assert loaded == ["nvfp4_tui.sources.base"]

"""ReplaySource without a UI: timeline, pause, speed steps, seeks with reset batches, home/end."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

from nvfp4_tui.core.events import GpuSample, RequestFinished, RunStarted
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.sources.base import Folded, ResetBatch
from nvfp4_tui.sources.replay import SPEED_STEPS, ReplaySource, parse_speed, timeline_t
from tests.support.digest import digest
from tests.support.factories import T0, write_snapshot

from .builders import timeline_run


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def snapshot(tmp_path):
    return write_snapshot(tmp_path, "timeline", timeline_run(60))


def started(snapshot, speed: float | None = 1.0) -> tuple[ReplaySource, FakeClock]:
    clock = FakeClock()
    source = ReplaySource(snapshot, speed=speed, clock=clock)
    source.start()
    return source, clock


def drain(source: ReplaySource) -> list[list[Folded]]:
    batches = []
    while (batch := source.take_due()) is not None:
        batches.append(batch)
    return batches


def whole_timeline(snapshot) -> list:
    """Every event of the snapshot in replay order, as a max-speed replay delivers them."""
    source, _ = started(snapshot, speed=None)
    return [event for batch in drain(source) for event in batch]


def test_requests_sit_on_the_timeline_when_they_ended(snapshot) -> None:
    source, _ = started(snapshot)
    assert source.duration_s == 60.0
    first = source.take_due()
    assert first is not None and not isinstance(first, ResetBatch)
    assert isinstance(first[0], RunStarted)
    events = [*first, *drain(source)]
    everything = whole_timeline(snapshot)
    keys = [timeline_t(e) for e in everything]
    assert keys == sorted(keys) and len(everything) == source.events_total
    request = next(e for e in everything if isinstance(e, RequestFinished))
    assert timeline_t(request) == request.t + 2.0
    assert len(events) == 2  # RunStarted and PhaseStarted at position 0, nothing else yet


def test_playback_follows_the_clock_at_each_speed(snapshot) -> None:
    source, clock = started(snapshot)
    drain(source)
    clock.advance(5.0)
    batch = source.take_due()
    assert batch is not None
    assert source.position_s == pytest.approx(5.0)
    assert max(timeline_t(e) for e in batch) == T0 + 5
    assert all(isinstance(e, GpuSample | RequestFinished) for e in batch)
    source.control("faster")
    assert source.speed_label == "x2"
    clock.advance(5.0)
    source.take_due()
    assert source.position_s == pytest.approx(15.0)
    due = [e for e in whole_timeline(snapshot) if timeline_t(e) <= T0 + 15]
    assert source.events_delivered == len(due)


def test_speed_steps_go_up_to_max_and_back(snapshot) -> None:
    source, _clock = started(snapshot)
    labels = []
    for _ in range(len(SPEED_STEPS) + 1):
        labels.append(source.speed_label)
        source.control("faster")
    assert labels == ["x1", "x2", "x5", "x10", "x60", "max", "max"]
    down = []
    for _ in range(len(SPEED_STEPS) + 1):
        source.control("slower")
        down.append(source.speed_label)
    assert down == ["x60", "x10", "x5", "x2", "x1", "x1", "x1"]
    source.control("speed:3")  # a speed given on the command line steps to its neighbours
    assert source.speed_label == "x3"
    source.control("faster")
    assert source.speed_label == "x5"
    source.control("speed:3")
    source.control("slower")
    assert source.speed_label == "x2"
    source.control("speed:max")
    assert source.speed is None


def test_pause_freezes_the_position_and_resume_continues(snapshot) -> None:
    source, clock = started(snapshot)
    clock.advance(10.0)
    drain(source)
    source.control("pause")
    assert source.paused
    delivered = source.events_delivered
    clock.advance(30.0)
    assert source.take_due() is None
    assert source.position_s == pytest.approx(10.0)
    assert source.wait_s() is None  # only a command can change anything now
    source.control("toggle")
    assert not source.paused
    clock.advance(1.0)
    assert source.take_due() is not None
    assert source.position_s == pytest.approx(11.0)
    assert source.events_delivered > delivered


def test_seek_forward_delivers_the_skipped_events_in_one_batch(snapshot) -> None:
    source, _clock = started(snapshot)
    drain(source)
    source.control("seek:+10")
    batch = source.take_due()
    assert batch is not None and not isinstance(batch, ResetBatch)
    assert source.position_s == pytest.approx(10.0)
    assert max(timeline_t(e) for e in batch) == T0 + 10
    assert source.take_due() is None


def test_seek_back_yields_a_reset_batch_that_rebuilds_the_state(snapshot) -> None:
    source, clock = started(snapshot)
    clock.advance(30.0)
    drain(source)
    source.control("seek:-10")
    assert source.position_s == pytest.approx(20.0)
    batch = source.take_due()
    assert isinstance(batch, ResetBatch)
    keys = [timeline_t(e) for e in whole_timeline(snapshot)]
    assert [timeline_t(e) for e in batch] == [t for t in keys if t <= T0 + 20]
    # A state rebuilt from the reset batch equals one that played straight to 20 s.
    rebuilt = FleetState()
    rebuilt.apply_all(batch)
    straight, straight_clock = started(snapshot)
    straight_clock.advance(20.0)
    direct = FleetState()
    for part in drain(straight):
        direct.apply_all(part)
    assert digest(rebuilt) == digest(direct)
    assert source.take_due() is None


def test_seek_clamps_and_home_end_jump(snapshot) -> None:
    source, _clock = started(snapshot, speed=10.0)
    source.control("seek:+1000")
    assert source.position_s == pytest.approx(60.0)
    drain(source)
    assert source.at_end
    source.control("home")
    assert source.position_s == 0.0
    batch = source.take_due()
    assert isinstance(batch, ResetBatch)
    assert [type(e).__name__ for e in batch] == ["RunStarted", "PhaseStarted"]
    source.control("seek:-5")
    assert source.position_s == 0.0
    source.control("seek:30")  # no sign: an absolute position
    assert source.position_s == pytest.approx(30.0)
    source.control("end")
    batch = source.take_due()
    assert batch is not None and not isinstance(batch, ResetBatch)
    assert source.at_end and source.position_s == pytest.approx(60.0)
    with pytest.raises(ValueError, match="seek"):
        source.control("seek:soon")
    source.control("no-such-command")  # ignored, as the EventSource protocol says


def test_the_position_holds_until_playback_starts(snapshot) -> None:
    clock = FakeClock()
    source = ReplaySource(snapshot, clock=clock)
    clock.advance(20.0)
    assert source.position_s == 0.0
    source.start()
    clock.advance(3.0)
    assert source.position_s == pytest.approx(3.0)


def test_parse_speed() -> None:
    assert parse_speed("max") is None
    assert parse_speed("x5") == 5.0
    assert parse_speed("0.5") == 0.5
    for bad in ("0", "-2", "fast", "inf"):
        with pytest.raises(ValueError, match="speed"):
            parse_speed(bad)


async def test_max_speed_plays_everything_then_ends_without_hold(snapshot) -> None:
    source = ReplaySource(snapshot, speed=None, hold_at_end=False)
    state = FleetState()
    async with asyncio.timeout(10):
        async for batch in source.batches():
            assert not isinstance(batch, ResetBatch)
            state.apply_all(batch)
    assert source.at_end
    assert state.status == "complete"
    assert state.requests_done == 59


async def test_held_replay_seeks_back_after_the_end(snapshot) -> None:
    source = ReplaySource(snapshot, speed=None, hold_at_end=True)
    seen: list[list[Folded]] = []

    async def consume() -> None:
        async for batch in source.batches():
            seen.append(batch)

    async with asyncio.timeout(10):
        task = asyncio.create_task(consume())
        while not source.at_end:
            await asyncio.sleep(0.01)
        await source.command("pause")
        await source.command("seek:-30")
        while not isinstance(seen[-1], ResetBatch):
            await asyncio.sleep(0.01)
        await source.close()
        await task
    assert source.position_s == pytest.approx(30.0)
    assert isinstance(seen[-1], ResetBatch) and len(seen[-1]) == source.events_delivered


async def test_finite_speed_paces_batches(snapshot) -> None:
    # x60 plays the 60 s run in about a second; check order and completeness, not wall time.
    source = ReplaySource(snapshot, speed=60.0, hold_at_end=False)
    count = 0
    last_key = 0.0
    async with asyncio.timeout(20):
        async for batch in source.batches():
            keys = [timeline_t(e) for e in batch]
            assert keys[0] >= last_key
            last_key = keys[-1]
            count += len(batch)
    assert count == source.events_total


@pytest.mark.parametrize("speed", [None, 60.0])
async def test_rows_with_a_nan_or_infinite_time_play_at_the_end(tmp_path: Path, speed) -> None:
    events = timeline_run(10)
    events.append(GpuSample(math.nan, 0, vram_used_mib=5.0, source="sim"))
    events.append(GpuSample(math.inf, 0, vram_used_mib=6.0, source="sim"))
    source = ReplaySource(
        write_snapshot(tmp_path, "nan-times", events), speed=speed, hold_at_end=False
    )
    assert (source.start_t, source.end_t) == (T0, T0 + 10)
    delivered = 0
    async with asyncio.timeout(10):
        async for batch in source.batches():
            delivered += len(batch)
    assert delivered == source.events_total == len(events) and source.at_end

"""FixedSource: all at once or paced by the events' timestamps, commands recorded, close obeyed."""

from __future__ import annotations

import asyncio

import pytest

from nvfp4_tui.core.events import GpuSample
from tests.support.factories import T0, request
from tests.support.fixed_source import FixedSource


def _samples(count: int, step_s: float) -> list[GpuSample]:
    return [GpuSample(t=T0 + i * step_s, gpu=0, power_w=float(i)) for i in range(count)]


async def _collect(source: FixedSource) -> list[list]:
    return [batch async for batch in source.batches()]


async def test_all_at_once() -> None:
    events = _samples(50, 0.5)
    source = FixedSource(events)
    batches = await asyncio.wait_for(_collect(source), 5)
    assert batches == [events]
    assert source.drained.is_set()


async def test_paced_keeps_order_and_splits_by_time() -> None:
    events = _samples(20, 0.5)  # 10 s of run time, played at 100x: 0.1 s
    source = FixedSource(events, speed=100)
    batches = await asyncio.wait_for(_collect(source), 5)
    assert [e for batch in batches for e in batch] == events
    assert len(batches) == 20  # 0.5 s apart is more than one batch window


async def test_paced_follows_latest_timestamp() -> None:
    # A request's event carries its send time, earlier than the sample before it.
    late = request(t=T0, suite="s", prompt_id="p", e2e_s=0.9)
    events = [*_samples(2, 0.9), late, *_samples(3, 0.9)[2:]]
    source = FixedSource(events, speed=100)
    batches = await asyncio.wait_for(_collect(source), 5)
    assert [e for batch in batches for e in batch] == events
    assert late in batches[1]


async def test_commands_are_recorded() -> None:
    source = FixedSource([])
    await source.command("pause")
    await source.command("resume")
    assert source.commands == ["pause", "resume"]


async def test_lingers_until_closed() -> None:
    source = FixedSource(_samples(3, 1.0), linger=True)
    task = asyncio.create_task(_collect(source))
    await asyncio.wait_for(source.drained.wait(), 5)
    await asyncio.sleep(0.05)
    assert not task.done()
    await source.close()
    assert await asyncio.wait_for(task, 5) == [_samples(3, 1.0)]


async def test_close_stops_a_paced_source_at_once() -> None:
    source = FixedSource(_samples(3, 3600.0), speed=1)  # an hour between events
    task = asyncio.create_task(_collect(source))
    await asyncio.sleep(0.05)
    await source.close()
    batches = await asyncio.wait_for(task, 5)
    assert len(batches) == 1


def test_speed_must_be_positive() -> None:
    with pytest.raises(ValueError, match="speed"):
        FixedSource([], speed=0)

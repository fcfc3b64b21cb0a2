"""The report's VRAM table: each GPU before and after the run, the change and the peak."""

from __future__ import annotations

import math
from pathlib import Path

from nvfp4_tui.core.events import Event, GpuSample, RunFinished, RunStarted
from nvfp4_tui.output.report import render
from tests.replay.builders import timeline_run
from tests.support.factories import T0, endpoint_info, write_snapshot


def test_vram_before_after_change_and_peak(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path, "vram", timeline_run(seconds=30))  # 1001 .. 1030 MiB
    lines = render(snapshot).splitlines()
    start = lines.index("VRAM used (MiB)")
    header, _, row = lines[start + 1 : start + 4]
    assert header.split() == ["GPU", "endpoint", "class", "before", "after", "change", "peak"]
    assert row.split() == ["0", "A", "moe", "1,001", "1,030", "+29", "1,030"]


def test_a_nan_reading_is_not_a_reading(tmp_path: Path) -> None:
    events = timeline_run(seconds=30)
    events.append(GpuSample(events[-1].t + 1, 0, vram_used_mib=math.nan, source="dcgm"))
    lines = render(write_snapshot(tmp_path, "nan", events)).splitlines()
    start = lines.index("VRAM used (MiB)")
    assert lines[start + 3].split()[3:] == ["1,001", "1,030", "+29", "1,030"]


def test_each_node_has_its_own_rows(tmp_path: Path) -> None:
    endpoints = (endpoint_info("a", 0, node="node-a"), endpoint_info("b", 0, node="node-b"))
    events: list[Event] = [RunStarted(T0, "nodes", "nodes", endpoints, ())]
    for step, (host, mib) in enumerate([("node-a", 100.0), ("node-b", 500.0)] * 2):
        events.append(GpuSample(T0 + step, 0, vram_used_mib=mib + step, host=host))
    events.append(RunFinished(T0 + 5, "complete"))
    lines = render(write_snapshot(tmp_path, "nodes", events)).splitlines()
    start = lines.index("VRAM used (MiB)")
    rows = [line.split() for line in lines[start + 3 : start + 5]]
    assert rows == [
        ["node-a", "0", "A", "moe", "100", "102", "+2", "102"],
        ["node-b", "0", "B", "moe", "501", "503", "+2", "503"],
    ]

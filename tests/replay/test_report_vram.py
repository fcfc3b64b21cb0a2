"""The report's VRAM table: each GPU before and after the run, the change and the peak."""

from __future__ import annotations

import math
from pathlib import Path

from nvfp4_tui.core.events import GpuSample
from nvfp4_tui.output.report import render
from tests.replay.builders import timeline_run
from tests.support.factories import write_snapshot


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

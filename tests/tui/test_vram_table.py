"""VRAM per GPU before and after the run: the read-out, and the leaderboard's table of it."""

from __future__ import annotations

import pytest

from nvfp4_tui.core.events import GpuSample, PhasePlan, RunFinished, RunStarted
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui.palette import cell_styles
from nvfp4_tui.tui.widgets.vram_table import VramRow, VramTable, vram_rows
from tests.support.factories import T0, endpoint_info
from tests.support.sample_app import sample_app, settle
from tests.support.sample_events import FLEET, sample_events


def _state() -> FleetState:
    infos = (
        endpoint_info("a", 0),
        endpoint_info("b", 0, model_class="dense"),
        endpoint_info("c", 2, model_class="dense"),
    )
    state = FleetState()
    state.apply(
        RunStarted(T0, "r", "run", infos, tuple(PhasePlan(i.id, "math", 1, 1) for i in infos))
    )
    return state


def _sample(state: FleetState, t: float, gpu: int, used_mib: float | None) -> None:
    state.apply(GpuSample(t, gpu, vram_used_mib=used_mib, vram_total_mib=1000.0))


def test_before_and_after_go_by_sample_time() -> None:
    state = _state()
    _sample(state, T0 + 2, 0, 700.0)
    _sample(state, T0 + 1, 0, 600.0)  # arrives late, but is the first of the run
    _sample(state, T0 + 3, 0, None)  # a failed query leaves the last value standing
    _sample(state, T0 + 1, 2, 500.0)
    _sample(state, T0 + 1, 5, 100.0)  # a GPU that no endpoint names
    rows = vram_rows(state)
    assert [r.gpu for r in rows] == [0, 2, 5]
    shared, alone, other = rows
    assert shared == VramRow(0, "", ("a", "b"), None, 600.0, 700.0, 1000.0)
    assert shared.change_mib == pytest.approx(100.0)
    assert shared.used_pct == pytest.approx(70.0)
    assert alone.endpoint_ids == ("c",) and alone.model_class == "dense"
    assert alone.change_mib == 0.0
    assert other.endpoint_ids == ()


def test_no_vram_reading_gives_no_change() -> None:
    state = _state()
    _sample(state, T0, 2, None)
    row = vram_rows(state)[1]
    assert row.gpu == 2
    assert row.before_mib is None and row.change_mib is None and row.used_pct is None


async def test_leaderboard_shows_vram_per_gpu_before_and_after() -> None:
    app, source = sample_app(complete=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("l")
        await pilot.pause()
        table = app.screen.query_one(VramTable)
        assert table.display and table.row_count == len(FLEET)
        assert [str(c.label) for c in table.columns.values()][3:5] == ["before", "after"]
        qwen = [str(cell) for cell in table.get_row_at(0)]
        # The demo's GPU 0 as the seed's table listed it: 92,316 MiB with nothing in flight.
        assert qwen[:5] == ["0", "Qwen3.6", "MoE", "92,316", "92,316"]


async def test_a_running_run_says_now_and_no_telemetry_hides_the_table() -> None:
    app, source = sample_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("l")
        await pilot.pause()
        table = app.screen.query_one(VramTable)
        assert [str(c.label) for c in table.columns.values()][4] == "now"
        state = FleetState()
        state.apply_all([e for e in sample_events() if not isinstance(e, GpuSample)])
        state.apply(RunFinished(T0 + 1000, "complete"))
        table.show(state, {}, cell_styles(app))
        assert not table.display

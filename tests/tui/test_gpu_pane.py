"""What a pane says about missing, stale and fresh telemetry, and the header's run modes."""

from __future__ import annotations

from nvfp4_tui.core.events import (
    EndpointStatus,
    GpuSample,
    PhasePlan,
    RunFinished,
    RunStarted,
    ServerSample,
)
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui.widgets.gpu_pane import VramLine, _gpu, _server, pane_readout
from nvfp4_tui.tui.widgets.on_change import OnChange
from nvfp4_tui.tui.widgets.run_header import run_readout
from tests.support.factories import T0, endpoint_info


def _state(*events) -> FleetState:
    info = endpoint_info("e", 0)
    state = FleetState()
    state.apply(RunStarted(T0, "r", "run", (info,), (PhasePlan("e", "math", 1, 6),)))
    state.apply_all(events)
    return state


def test_no_telemetry_reads_as_a_dash() -> None:
    state = _state()
    readout = pane_readout(state.endpoints["e"], T0 + 1)
    assert readout.gpu.freshness == "none" and readout.server.freshness == "none"
    assert readout.vram.freshness == "none"
    assert [w.plain for w in _gpu(readout.gpu)] == ["GPU —  no telemetry"]
    assert "no server metrics" in _server(readout.server)[0].plain


def test_fresh_then_stale_telemetry() -> None:
    sample = GpuSample(
        T0 + 1,
        0,
        vram_used_mib=92316,
        vram_total_mib=97887,
        util_gpu_pct=97,
        power_w=412,
        temperature_c=68,
    )
    server = ServerSample(T0 + 1, "e", requests_waiting=2, kv_cache_pct=1.5)
    state = _state(sample, server)
    fresh = pane_readout(state.endpoints["e"], T0 + 2)
    assert fresh.gpu.freshness == "ok" and fresh.server.freshness == "ok"
    assert fresh.vram == VramLine(92316, 97887, "ok")
    assert _gpu(fresh.gpu)[0].plain == "GPU util  97%   412 W   68 °C"
    assert _server(fresh.server)[0].plain == "KV cache  1.5%  running —  waiting 2"
    stale = pane_readout(state.endpoints["e"], T0 + 60)
    assert stale.gpu.freshness == "stale" and stale.server.freshness == "stale"
    assert stale.vram.freshness == "stale"
    assert all(w.plain.endswith("STALE") for w in _gpu(stale.gpu))
    assert _server(stale.server)[0].plain.endswith("STALE")


def test_on_change_paints_the_first_value_and_then_only_new_ones() -> None:
    painted: list[int | None] = []
    line = OnChange(painted.append)
    for value in (None, None, 1, 1, 2, None):
        line.show(value)
    assert painted == [None, 1, 2, None]


def test_a_sample_changes_only_the_lines_it_feeds() -> None:
    state = _state(ServerSample(T0 + 1, "e", requests_waiting=2, kv_cache_pct=1.5))
    before = pane_readout(state.endpoints["e"], T0 + 2)
    state.apply(GpuSample(T0 + 2, 0, vram_used_mib=1000, util_gpu_pct=50))
    after = pane_readout(state.endpoints["e"], T0 + 2)
    assert after.gpu != before.gpu and after.vram != before.vram
    assert after.timing == before.timing and after.server == before.server
    assert after.slo == before.slo and after.errors == before.errors
    assert (after.status, after.spark, after.quality) == (
        before.status,
        before.spark,
        before.quality,
    )


def test_down_endpoint_shows_why() -> None:
    state = _state(EndpointStatus(T0 + 1, "e", "down", "connect: refused\nport 8016"))
    readout = pane_readout(state.endpoints["e"], T0 + 2)
    assert readout.status == "down"
    assert readout.errors.last == "connect: refused port 8016"


def test_header_modes() -> None:
    state = _state()
    now = T0 + 5
    assert run_readout(state, now, paused=False, source_ended=False).mode == "live"
    assert run_readout(state, now, paused=True, source_ended=False).mode == "paused"
    assert run_readout(state, now, paused=False, source_ended=True).mode == "ended"
    state.apply(RunFinished(T0 + 6, "aborted", "cancelled"))
    assert run_readout(state, now, paused=False, source_ended=True).mode == "aborted"
    assert run_readout(FleetState(), now, paused=False, source_ended=False).mode == "waiting"

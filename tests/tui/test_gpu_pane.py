"""What a pane says about missing, stale and fresh telemetry, and the header's run modes."""

from __future__ import annotations

import pytest

from nvfp4_tui.core.events import (
    EndpointStatus,
    GpuSample,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RunFinished,
    RunStarted,
    ServerSample,
)
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui.widgets.gpu_pane import VramLine, _gpu, _server, _timing, pane_readout
from nvfp4_tui.tui.widgets.on_change import OnChange
from nvfp4_tui.tui.widgets.run_header import run_readout
from tests.state.builders import request
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


def _finished_run(*telemetry) -> FleetState:
    """c=1 then c=4, each over: at c=1 one burst answer among steady ones (llama.cpp sent 256
    tokens in 54 ms after 4.5 s of silence); at c=4 every request queued 1.7 s."""
    info = endpoint_info("e", 0)
    state = FleetState()
    plans = (PhasePlan("e", "math", 1, 3), PhasePlan("e", "math", 4, 3))
    state.apply(RunStarted(T0, "r", "run", (info,), plans))
    state.apply_all(telemetry)
    state.apply(PhaseStarted(T0, "e", "math", 1, 0))
    for i, (ttft_s, e2e_s) in enumerate(((0.013, 2.25), (4.5, 4.554), (0.012, 1.8))):
        rate = 255 / (e2e_s - ttft_s)
        state.apply(request("e", request_index=i, ttft_s=ttft_s, e2e_s=e2e_s, decode_tps=rate))
    state.apply(PhaseFinished(T0 + 10, "e", "math", 1, 0, 3, 0, 768, 9.0))
    state.apply(PhaseStarted(T0 + 10, "e", "math", 4, 1))
    for i in range(3):
        state.apply(
            request(
                "e",
                t=T0 + 10,
                request_index=10 + i,
                concurrency=4,
                phase_index=1,
                ttft_s=1.735,
                e2e_s=3.735,
                decode_tps=100.0,
            )
        )
    state.apply(PhaseFinished(T0 + 14, "e", "math", 4, 1, 3, 0, 768, 4.0))
    return state


def test_one_burst_request_does_not_set_the_finished_headline() -> None:
    readout = pane_readout(_finished_run().endpoints["e"], T0 + 15)
    # The mean of the per-request rates (114, 4722, 143) would read 1660.
    assert readout.decode_tps == pytest.approx(3 * 255 / (2.237 + 0.054 + 1.788))
    assert readout.decode_words[0] == "tok/s pooled c=1 · request p50 143 · c=4 100.0"
    assert readout.decode_words[1] == "pooled c=1 · p50 143 · c=4 100.0"


def test_a_done_pane_shows_each_level_s_ttft_median() -> None:
    readout = pane_readout(_finished_run().endpoints["e"], T0 + 15)
    assert readout.timing.level == "c=1" and readout.timing.ttft_p50_s == 0.013
    assert _timing(readout.timing)[0].plain == "TTFT p50 c=1 13 ms · c=4 1735 ms"


def test_while_a_level_runs_its_ttft_median_is_that_level_s() -> None:
    state = _finished_run()
    state.apply(PhaseStarted(T0 + 15, "e", "math", 4, 1))  # c=4 again: a phase runs
    readout = pane_readout(state.endpoints["e"], T0 + 16)
    assert readout.timing.level == "c=4" and readout.timing.ttft_p50_s == 1.735
    assert _timing(readout.timing)[0].plain == "TTFT p50 c=4 1735 ms   in flight —/4"


def test_a_done_pane_shows_the_run_s_server_peaks_and_no_busy_gpu() -> None:
    busy = GpuSample(T0 + 13, 0, util_gpu_pct=94, power_w=385, temperature_c=70)
    peak = ServerSample(T0 + 12, "e", requests_running=4, requests_waiting=2, kv_cache_pct=34.1)
    last = ServerSample(T0 + 13.5, "e", requests_running=1, requests_waiting=0, kv_cache_pct=3.0)
    state = _finished_run(busy, peak, last)
    readout = pane_readout(state.endpoints["e"], T0 + 15)
    assert _server(readout.server)[0].plain == "peak KV cache 34.1%  running 4  waiting 2"
    # The card's last sample was taken while the endpoint ran: it is not shown as its state.
    assert readout.gpu.freshness == "before_done"
    assert _gpu(readout.gpu)[0].plain == "GPU —  no sample since done"
    state.apply(GpuSample(T0 + 14.5, 0, util_gpu_pct=0, power_w=40, temperature_c=60))
    idle = pane_readout(state.endpoints["e"], T0 + 15)
    assert idle.gpu.freshness == "ok" and _gpu(idle.gpu)[0].plain.startswith("GPU util   0%")

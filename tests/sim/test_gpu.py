"""The simulated GPU follows its endpoint's load; SimGpuSource reads it over HTTP."""

from __future__ import annotations

import asyncio

import aiohttp

from nvfp4_tui.core.events import GpuSample
from nvfp4_tui.sim.gpu import SimGpu, gpu_uuid
from nvfp4_tui.telemetry.simulated import SimGpuSource
from tests.sim.conftest import FleetFactory
from tests.sim.simclient import chat_body, faults, make_endpoint, make_spec, read_sse


class FakeLoad:
    """A clock and load integrals the test advances by hand."""

    def __init__(self) -> None:
        self.now = 0.0
        self.running = 0
        self.busy_s = 0.0
        self.running_s = 0.0

    def run(self, seconds: float, running: int) -> None:
        self.now += seconds
        self.running = running
        self.busy_s += seconds if running else 0.0
        self.running_s += seconds * running

    def integrals(self) -> tuple[float, float]:
        return self.busy_s, self.running_s


def test_idle_card_draws_little_and_a_busy_one_heats_up_with_lag() -> None:
    load = FakeLoad()
    spec = make_spec(power_limit_w=600.0, vram_used_mib=92_316.0)
    gpu = SimGpu(spec, 3, load.integrals, lambda: load.now, lambda: load.running)
    load.run(5.0, 0)
    idle = gpu.sample()
    assert idle["util_gpu_pct"] == 0 and 30 <= idle["power_w"] <= 60
    assert idle["gpu"] == 3 and idle["source"] == "sim" and idle["uuid"].startswith("GPU-")
    assert idle["vram_used_mib"] == 92_316.0 and idle["vram_total_mib"] == spec.vram_total_mib
    assert GpuSample(t=0.0, **idle).power_limit_w == 600.0  # exactly the event's fields
    samples = []
    for _ in range(30):
        load.run(1.0, 4)
        samples.append(gpu.sample())
    assert all(s["util_gpu_pct"] >= 90 for s in samples)
    assert samples[2]["power_w"] > 300 and samples[-1]["power_w"] <= 600
    # power settles within seconds; temperature is still climbing half a minute in
    assert abs(samples[-1]["power_w"] - samples[5]["power_w"]) < 10
    temperatures = [s["temperature_c"] for s in samples]
    assert temperatures == sorted(temperatures) and temperatures[-1] - temperatures[5] > 5
    assert samples[-1]["sm_clock_mhz"] > idle["sm_clock_mhz"]
    load.run(120.0, 0)
    assert gpu.sample()["util_gpu_pct"] == 0


def test_a_card_with_nothing_in_flight_reads_idle_at_once() -> None:
    # Its endpoint finished a moment ago: the window still holds busy seconds, but the card
    # draws idle power now, and a run's last sample must not show it busy beside "done".
    load = FakeLoad()
    gpu = SimGpu(make_spec(), 0, load.integrals, lambda: load.now, lambda: load.running)
    for _ in range(10):
        load.run(1.0, 4)
        busy = gpu.sample()
    load.run(0.05, 0)
    idle = gpu.sample()
    assert busy["util_gpu_pct"] >= 90 and busy["power_w"] > 300
    assert idle["util_gpu_pct"] == 0 and idle["util_mem_pct"] == 0
    assert idle["power_w"] <= gpu.idle_power_w + 2.0
    assert idle["sm_clock_mhz"] < busy["sm_clock_mhz"]


def test_time_scale_speeds_the_thermal_response() -> None:
    def temperature_after(scale: float) -> float:
        load = FakeLoad()
        gpu = SimGpu(
            make_spec(), 0, load.integrals, lambda: load.now, lambda: load.running, time_scale=scale
        )
        load.run(1.0, 2)
        return gpu.sample()["temperature_c"]

    assert temperature_after(20.0) > temperature_after(1.0) + 5


def test_uuid_is_stable_and_distinct_per_card() -> None:
    assert gpu_uuid("X", 0, 1) == gpu_uuid("X", 0, 1) != gpu_uuid("X", 1, 1)
    assert len(gpu_uuid("X", 0, 1)) == len("GPU-") + 36


async def test_source_polls_sim_gpu_and_skips_unreachable_endpoints(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(
        make_endpoint("a", gpu=0), make_endpoint("b", gpu=5, seed=9), time_scale=50.0
    )
    down = await fleet_of(make_endpoint("c", gpu=2, faults=faults(down=True)))
    source = SimGpuSource.for_endpoints([*fleet.endpoints, *down.endpoints], timeout_s=1.0)
    # b serves one request while the source samples: the card's load integrates over the
    # window, so how long the request took to arrive on a busy machine does not matter.
    request = asyncio.create_task(read_sse(session, fleet.urls["b"], chat_body(max_tokens=2000)))
    for _ in range(200):  # until b runs it (bounded: 2 s)
        if (await asyncio.to_thread(source.sample, 0.0))[1].util_gpu_pct:
            break
        await asyncio.sleep(0.01)
    samples = await asyncio.to_thread(source.sample, 1234.5)
    await request
    source.close()
    assert sorted(s.gpu for s in samples) == [0, 5]
    by_gpu = {s.gpu: s for s in samples}
    assert all(s.t == 1234.5 and s.source == "sim" for s in samples)
    assert by_gpu[5].util_gpu_pct > by_gpu[0].util_gpu_pct
    assert by_gpu[0].uuid != by_gpu[5].uuid

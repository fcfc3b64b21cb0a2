"""Telemetry through a Prometheus server's query API: DCGM and vLLM series matched to endpoints
by node and GPU, over real HTTP to a fixture that answers in Prometheus' JSON shapes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.core.events import Event, GpuSample, RunStarted, ServerSample
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.telemetry.prometheus_query import (
    DCGM_QUERY,
    VLLM_QUERY,
    PrometheusQuerySource,
    PrometheusUnavailable,
    parse_vector,
)
from nvfp4_tui.telemetry.sampler import GpuSampler, plan_gpu_telemetry, telemetry_for_run
from nvfp4_tui.tui.widgets.gpu_pane import pane_readout
from tests.telemetry.prom_query_server import PromQueryServer, dcgm_series, vllm_series

WAIT_S = 20.0
UUID_A = "GPU-5d1f0c7e-0000-4000-8000-00000000000a"
UUID_B = "GPU-5d1f0c7e-0000-4000-8000-00000000000b"

PROFILE = """
[run]
name = "prom"
suites = ["english"]

[[endpoint]]
id = "a"
url = "http://10.0.0.1:8000"
node = "gpu-node-a"
model = "current"
gpu = 0
telemetry = "prometheus:{prom}"

[[endpoint]]
id = "b"
url = "http://gpu-node-b:8001"
model = "current"
gpu = {gpu_b}
telemetry = "prometheus:{prom}"
"""


def _fleet() -> list:
    # Cards with the same index on other nodes, and a card on a node no endpoint is on.
    return [
        *dcgm_series("gpu-node-a", 0, UUID_A, GPU_UTIL=97, FB_USED=92316, FB_FREE=5042,
                     FB_RESERVED=529, POWER_USAGE=452.25, GPU_TEMP=66),
        *dcgm_series("gpu-node-b", 1, UUID_B, GPU_UTIL=12, FB_USED=4000, FB_FREE=93358,
                     FB_RESERVED=529, POWER_USAGE=88.5, GPU_TEMP=41),
        *dcgm_series("gpu-node-b", 0, "GPU-b0", GPU_UTIL=33, FB_USED=2, FB_FREE=2,
                     POWER_USAGE=2, GPU_TEMP=2),
        *dcgm_series("gpu-node-c", 0, "GPU-other", GPU_UTIL=50, FB_USED=1, FB_FREE=1,
                     POWER_USAGE=1, GPU_TEMP=1),
        # vLLM scraped by address on node a (the endpoint's URL), by host name on node b.
        *vllm_series("10.0.0.1:8000", num_requests_running=4, num_requests_waiting=2,
                     kv_cache_usage_perc=0.25, num_preemptions_total=3),
        *vllm_series("gpu-node-b:8001", num_requests_running=1, num_requests_waiting=0,
                     gpu_cache_usage_perc=0.5),
        *vllm_series("gpu-node-b:9999", num_requests_running=100),  # another server there
    ]  # fmt: skip


@pytest.fixture
async def prom() -> AsyncIterator[tuple[PromQueryServer, str]]:
    server = PromQueryServer(_fleet())
    runner, url = await server.start()
    try:
        yield server, url
    finally:
        await runner.cleanup()


def _profile(tmp_path: Path, url: str, gpu_b: str = f'"{UUID_B}"'):
    path = tmp_path / "p.toml"
    path.write_text(PROFILE.format(prom=url, gpu_b=gpu_b))
    return load_profile(path)


async def test_series_are_matched_by_node_and_gpu(
    tmp_path: Path, prom: tuple[PromQueryServer, str]
) -> None:
    server, url = prom
    profile = _profile(tmp_path, url)
    (source,) = plan_gpu_telemetry(profile).sources
    assert isinstance(source, PrometheusQuerySource)
    gpus = await asyncio.to_thread(source.sample, 5.0)
    assert [(s.host, s.gpu, s.uuid, s.source) for s in gpus] == [
        ("gpu-node-a", 0, UUID_A, "prometheus"),
        ("gpu-node-b", 1, UUID_B, "prometheus"),  # found by its UUID: its index comes along
    ]
    a = gpus[0]
    assert (a.util_gpu_pct, a.vram_used_mib, a.power_w, a.temperature_c) == (97, 92316, 452.25, 66)
    assert a.vram_total_mib == 92316 + 5042 + 529
    servers = await asyncio.to_thread(source.server_samples, 5.0)
    assert [(s.endpoint_id, s.requests_running, s.requests_waiting) for s in servers] == [
        ("a", 4, 2),
        ("b", 1, 0),
    ]
    assert (servers[0].kv_cache_pct, servers[0].preemptions_total) == (25.0, 3)
    assert servers[1].kv_cache_pct == 50.0  # vLLM V0's name for it
    # The plan asked once where b's UUID is; then one query per kind of series.
    assert server.queries == [DCGM_QUERY, DCGM_QUERY, VLLM_QUERY]


async def test_prometheus_telemetry_fills_the_panes(
    tmp_path: Path, prom: tuple[PromQueryServer, str]
) -> None:
    _, url = prom
    profile = _profile(tmp_path, url, gpu_b="0")  # each node has a GPU 0
    state = FleetState()
    state.apply(RunStarted(time.time(), "r", "prom", tuple(e.info for e in profile.endpoints), ()))
    arrived: list[Event] = []
    sampler = GpuSampler(
        plan_gpu_telemetry(profile).sources, on_samples=arrived.extend, rate_hz=20.0
    )
    sampler.start()
    try:
        deadline = time.monotonic() + WAIT_S
        while not any(isinstance(e, ServerSample) for e in arrived):
            assert time.monotonic() < deadline, "no sample from the Prometheus source"
            await asyncio.sleep(0.05)
    finally:
        sampler.stop()
    assert {type(e) for e in arrived} == {GpuSample, ServerSample}
    state.apply_all(arrived)
    pane = pane_readout(state.endpoints["a"], time.time())
    assert (pane.gpu.util_pct, pane.gpu.power_w, pane.gpu.temperature_c) == (97, 452.25, 66)
    assert (pane.vram.used_mib, pane.vram.total_mib) == (92316, 92316 + 5042 + 529)
    assert pane.gpu.freshness == pane.vram.freshness == "ok"
    assert pane.server.gauges is not None
    assert (pane.server.gauges.kv_cache_pct, pane.server.gauges.waiting) == (25.0, 2)
    b = pane_readout(state.endpoints["b"], time.time())
    assert (b.gpu.util_pct, b.gpu.power_w, b.vram.used_mib) == (33, 2, 2)


@pytest.mark.parametrize(
    ("status", "kind", "error"),
    [
        (503, "unavailable", "TSDB not ready"),
        (422, "execution", "query timed out in expression evaluation"),
        (400, "bad_data", 'invalid parameter "query"\x1b[31m'),
    ],
)
async def test_error_replies_become_one_line(
    tmp_path: Path, prom: tuple[PromQueryServer, str], status: int, kind: str, error: str
) -> None:
    server, url = prom
    server.fail_with = (status, kind, error)
    (source,) = plan_gpu_telemetry(_profile(tmp_path, url)).sources
    with pytest.raises(PrometheusUnavailable) as raised:
        await asyncio.to_thread(source.sample, 0.0)
    message = str(raised.value)
    assert message.startswith(f"Prometheus {url}: HTTP {status}: {kind}: ")
    assert "\x1b" not in message and "\n" not in message


def test_unreachable_server_is_one_line() -> None:
    source = PrometheusQuerySource("http://127.0.0.1:9", [], timeout_s=1.0)
    with pytest.raises(PrometheusUnavailable, match=r"^Prometheus http://127.0.0.1:9: "):
        source.sample(0.0)


def test_a_reply_that_is_not_a_vector_is_refused() -> None:
    matrix = {"status": "success", "data": {"resultType": "matrix", "result": []}}
    with pytest.raises(PrometheusUnavailable, match="expected an instant vector"):
        parse_vector(matrix, "Prometheus x")
    nan_and_junk = {
        "status": "success",
        "data": {
            "resultType": "vector",
            "result": [
                {"metric": {"__name__": "m"}, "value": [1, "NaN"]},
                {"metric": {"__name__": "m"}, "value": [1]},
                {"metric": {"__name__": "m"}, "value": [1, "2.5"]},
            ],
        },
    }
    assert [s.value for s in parse_vector(nan_and_junk, "x")] == [2.5]


async def test_a_card_named_by_uuid_is_found_on_its_node(
    tmp_path: Path, prom: tuple[PromQueryServer, str]
) -> None:
    _, url = prom
    plan = plan_run(_profile(tmp_path, url))  # endpoint b: gpu = UUID_B
    plan, sources, messages = await asyncio.to_thread(telemetry_for_run, plan)
    assert messages == []
    assert [e.gpu for e in plan.profile.endpoints] == [0, 1]  # b's card is GPU 1 of node b
    state = FleetState()
    state.apply(
        RunStarted(time.time(), "r", "prom", tuple(e.info for e in plan.profile.endpoints), ())
    )
    (source,) = sources
    state.apply_all(await asyncio.to_thread(source.sample, time.time()))
    b = pane_readout(state.endpoints["b"], time.time())
    assert (b.gpu.util_pct, b.gpu.power_w, b.vram.used_mib) == (12, 88.5, 4000)


async def test_a_uuid_prometheus_does_not_know_is_said_once(
    tmp_path: Path, prom: tuple[PromQueryServer, str]
) -> None:
    _, url = prom
    plan = plan_run(_profile(tmp_path, url, gpu_b='"GPU-nowhere"'))
    _, _, messages = await asyncio.to_thread(telemetry_for_run, plan)
    assert messages == [
        f"endpoint b: gpu = 'GPU-nowhere': no DCGM series in PrometheusQuerySource('{url}') "
        "with that UUID on node 'gpu-node-b'"
    ]

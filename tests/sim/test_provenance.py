"""The simulator answers like vLLM where a run's configuration is read, and the probe reads it."""

from __future__ import annotations

import aiohttp

from nvfp4_tui.provenance import probe_servers
from nvfp4_tui.sim.server import MAX_MODEL_LEN, SIM_SERVER_VERSION
from nvfp4_tui.telemetry.prometheus import CACHE_CONFIG_INFO, info_labels
from tests.sim.conftest import FleetFactory
from tests.sim.simclient import MODEL, make_endpoint

# Shaped as vLLM serves it: an info-style gauge, the cache's settings as labels.
VLLM_CACHE_CONFIG = """\
# HELP vllm:cache_config_info The cache configuration.
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",cache_dtype="fp8",enable_prefix_caching="True",\
gpu_memory_utilization="0.9",num_gpu_blocks="27000"} 1.0
# HELP vllm:num_requests_running Requests running.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="current"} 0.0
"""


def test_cache_config_labels_are_read_from_vllm_text() -> None:
    labels = info_labels(VLLM_CACHE_CONFIG, CACHE_CONFIG_INFO)
    assert labels is not None
    assert (labels["cache_dtype"], labels["block_size"]) == ("fp8", "16")
    assert labels["gpu_memory_utilization"] == "0.9"
    without = "\n".join(VLLM_CACHE_CONFIG.splitlines()[3:])
    assert info_labels(without, CACHE_CONFIG_INFO) is None


async def test_sim_serves_version_models_and_cache_config(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fp8, default = make_endpoint("fp8", kv_cache_dtype="fp8"), make_endpoint("auto", gpu=1)
    fleet = await fleet_of(fp8, default)
    async with session.get(f"{fleet.urls['fp8']}/version") as reply:
        assert await reply.json() == {"version": SIM_SERVER_VERSION}
    endpoints = [e.with_url(fleet.urls[e.id]) for e in (fp8, default)]
    probed = await probe_servers(endpoints, session, timeout_s=5.0)
    assert probed["fp8"]["server_version"] == SIM_SERVER_VERSION
    assert (probed["fp8"]["model_root"], probed["fp8"]["max_model_len"]) == (MODEL, MAX_MODEL_LEN)
    assert probed["fp8"]["cache_config"]["cache_dtype"] == "fp8"
    assert probed["auto"]["cache_config"]["cache_dtype"] == "auto"
    assert probed["auto"]["cache_config"]["block_size"] == "16"

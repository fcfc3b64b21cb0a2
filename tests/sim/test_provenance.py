"""The simulator answers like vLLM where a run's configuration is read, and the probe reads it."""

from __future__ import annotations

import aiohttp
from aiohttp import web

from nvfp4_tui.bench.provenance import probe_servers
from nvfp4_tui.sim.server import MAX_MODEL_LEN, SIM_SERVER_VERSION
from nvfp4_tui.telemetry.prometheus import CACHE_CONFIG_INFO, info_labels
from tests.bench.scripted_server import serve
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


async def test_odd_and_hostile_replies_leave_nulls_and_never_raise(
    session: aiohttp.ClientSession,
) -> None:
    # A page with no charset, a charset that is no text encoding, JSON nested 100,000 deep:
    # each once made the probe raise, and with it the run it describes.
    async def models(_: web.Request) -> web.Response:
        return web.Response(body=b"<html>not here</html>", headers={"Content-Type": "text/html"})

    async def version(_: web.Request) -> web.Response:
        return web.Response(body=b"[" * 100_000, content_type="application/json")

    async def metrics(_: web.Request) -> web.Response:
        body = b'vllm:cache_config_info{cache_dtype="fp8\xe2\x80\xae"} 1\n'
        return web.Response(body=body, headers={"Content-Type": "text/plain; charset=base64"})

    routes = {"/v1/models": models, "/version": version, "/metrics": metrics}
    async with serve(models, routes) as server:  # no chat is asked for
        endpoint = make_endpoint("odd").with_url(server.url)
        probed = await probe_servers([endpoint], session, timeout_s=5.0)
    entry = probed["odd"]
    assert entry["server_version"] is None and entry["model_root"] is None
    # The label is kept, its bidi override dropped.
    assert entry["cache_config"]["cache_dtype"] == "fp8"

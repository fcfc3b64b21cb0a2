"""``init`` by probing: against the simulator on OS-picked loopback ports, the written profile
loads and runs unchanged; GPUs come from NVML and the listening port's owner."""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from pathlib import Path

import pytest
from aiohttp import web

from nvfp4_tui.bench.session import Session
from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.profile_init import init_profile
from nvfp4_tui.profile_init.probe import addresses, parse_ports, probe
from nvfp4_tui.sim.fleet import SimFleet
from tests.bench.scripted_server import serve
from tests.telemetry.fakes import FakeGpu, install_fake_nvml

# A model id as hostile as a server could send: a quote, a table header, a newline, a colour
# sequence and a bidi override.
HOSTILE_MODEL = 'evil"\n[judge]\x1b[31m\u202e'


async def test_init_against_the_simulator_writes_a_profile_that_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = load_profile(DEMO_PROFILE)
    served = (
        demo.endpoints[0],
        replace(demo.endpoints[1], model="qwen3.5-27b"),
        replace(demo.endpoints[2], model=HOSTILE_MODEL),
    )
    # This test process owns the simulator's sockets: on GPU 1 it is the serving process.
    gpus = [FakeGpu(uuid=f"GPU-{i}") for i in range(3)]
    gpus[1] = FakeGpu(uuid="GPU-1", compute=[(os.getpid(), 1 << 30)])
    install_fake_nvml(monkeypatch, gpus)
    out = tmp_path / "fleet.toml"
    async with SimFleet(served, time_scale=20.0) as fleet:
        ports = ",".join(url.rsplit(":", 1)[1] for url in fleet.urls.values())
        # init runs its own event loop, as from the command line; the fleet serves on this one.
        written = await asyncio.to_thread(init_profile, out, force=False, ports=ports)
        hostile_url = fleet.urls[served[2].id]
        assert [d.url for d in written.endpoints] == list(fleet.urls.values())[:2]
        # Written scrubbed it would name no model on the server; exactly, it is not shown.
        assert written.left_out == (
            f"{hostile_url}: left out; its model id 'evil\" [judge]' holds control, escape or "
            "format characters (or is over 200 long)",
        )
        profile = load_profile(out)
        first, second = profile.endpoints
        assert (first.model, first.gpu) == ("current", 1)
        # Both ports belong to this one process, so the second cannot have GPU 1 too.
        assert second.gpu == "auto" and "shares GPU 1" in out.read_text()
        assert (second.id, second.model) == ("qwen3.5-27b", "qwen3.5-27b")
        text = out.read_text()
        assert "max_model_len" in text
        # "current" tells nothing of the model; "qwen3.5-27b" tells a size and no experts.
        assert '# class = "moe"  # or "dense"' in text
        assert (second.model_class, second.active_params_b) == ("dense", 27.0)
        assert '# A guess from the name "qwen3.5-27b"' in text

        run = replace(profile.run, suites=("english",), concurrency=(1,), requests=1)
        run = replace(run, max_tokens=32, warmup=False)
        profile = replace(profile, run=run)
        suites = load_suites(profile.suite_dirs, run.suites)
        session = Session(profile, suites, tmp_path / "snapshots", run_id="init")
        session.open()
        result = await asyncio.wait_for(session.run(), 60)
    assert result.status == "complete"
    assert not result.down


async def test_without_nvml_every_endpoint_is_auto(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_fake_nvml(monkeypatch, [], init_error=9)  # NVML_ERROR_DRIVER_NOT_LOADED
    demo = load_profile(DEMO_PROFILE)
    async with SimFleet(demo.endpoints[:1]) as fleet:
        (url,) = fleet.urls.values()
        written = await asyncio.to_thread(
            init_profile,
            tmp_path / "p.toml",
            force=False,
            urls=[url + "/v1"],
            ports=url.rsplit(":", 1)[1],
        )
    assert [(d.url, d.gpu) for d in written.endpoints] == [(url, "auto")]
    assert "gpu not found (NVML: NVML init failed" in (tmp_path / "p.toml").read_text()


def test_ports_and_addresses() -> None:
    assert parse_ports("8000-8002,8001,9000") == [8000, 8001, 8002, 9000]
    assert addresses(["127.0.0.1", "::1"], [8000], ["http://h:1/v1/"]) == [
        "http://127.0.0.1:8000",
        "http://[::1]:8000",
        "http://h:1",
    ]
    for bad in ("80-70", "x", "0", "1-65535", "²", "9" * 5000):
        with pytest.raises(ConfigError, match="--ports"):
            parse_ports(bad)
    with pytest.raises(ConfigError, match="expected an http"):
        addresses([], [], ["ftp://h"])
    with pytest.raises(ConfigError, match="without user:password@") as refused:
        addresses([], [], ["http://me:hunter2@h:1"])
    assert "hunter2" not in str(refused.value)


async def test_a_model_list_arriving_in_pieces_is_read_whole() -> None:
    # A proxy that chunks, or a list over one read's worth: the body comes in two writes.
    async def models(request: web.Request) -> web.StreamResponse:
        reply = web.StreamResponse(headers={"Content-Type": "application/json"})
        await reply.prepare(request)
        await reply.write(b'{"object": "list", "data": [{"id": "cur')
        await asyncio.sleep(0.05)
        await reply.write(b'rent", "max_model_len": 4096}]}')
        await reply.write_eof()
        return reply

    async with serve(models, {"/v1/models": models}) as server:  # no chat is asked for
        (found,) = await probe([server.url])
    assert [model.id for model in found.models] == ["current"]

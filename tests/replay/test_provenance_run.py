"""Every result says what it measured: a short simulated run records each endpoint's server,
model, KV cache and GPU in its manifest; report and compare show them; a probe that fails
leaves its field null and the run goes on."""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from nvfp4_tui.bench.provenance import config_differences, profile_sha256
from nvfp4_tui.bench.session import Session, resolved_profile
from nvfp4_tui.cli import main
from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.profile import Profile, load_profile, with_urls
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.output.report import provenance_table
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.sim.server import MAX_MODEL_LEN, SIM_SERVER_VERSION, SimEndpoint
from nvfp4_tui.store.manifest import read_manifest
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.telemetry.simulated import SimGpuSource


def short_profile(kv_cache_dtype: str) -> Profile:
    """Two of the demo's endpoints, one tiny phase; the second's KV cache in ``kv_cache_dtype``."""
    profile = load_profile(DEMO_PROFILE)
    run = replace(
        profile.run, suites=("english",), concurrency=(1,), requests=1, max_tokens=16, warmup=False
    )
    first, second = profile.endpoints[:2]
    assert second.sim is not None
    second = replace(second, sim=replace(second.sim, kv_cache_dtype=kv_cache_dtype))
    return replace(profile, run=run, endpoints=(first, second))


async def run_once(profile: Profile, out: Path, run_id: str) -> dict[str, Any]:
    suites = load_suites(profile.suite_dirs, profile.run.suites)
    async with SimFleet(profile.endpoints, time_scale=50.0) as fleet:
        session = Session(
            with_urls(profile, fleet.urls),
            suites,
            out,
            gpu_sources=[SimGpuSource(fleet.urls.values())],
            run_id=run_id,
        )
        session.open()
        result = await asyncio.wait_for(session.run(), 60)
    assert result.status == "complete"
    return read_manifest(result.snapshot)


async def test_manifest_says_what_each_endpoint_ran(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fp8 = await run_once(short_profile("fp8"), tmp_path, "fp8")
    auto = await run_once(short_profile("auto"), tmp_path, "auto")

    first, second = (e["id"] for e in fp8["profile"]["endpoints"][:2])
    entry = fp8["configuration"][second]
    assert entry["server_version"] == SIM_SERVER_VERSION
    assert entry["model_root"] == fp8["profile"]["endpoints"][1]["model"]
    assert entry["max_model_len"] == MAX_MODEL_LEN
    assert entry["cache_config"]["cache_dtype"] == "fp8"
    assert fp8["configuration"][first]["cache_config"]["cache_dtype"] == "fp8"  # the demo's
    gpu = entry["gpu_identity"]
    assert gpu["name"].startswith("NVIDIA RTX PRO 6000") and gpu["uuid"].startswith("GPU-")
    assert gpu["power_limit_w"] > 0
    assert gpu["driver_version"] is None  # a simulated card has no driver to name
    # The client: where, with what, and which profile exactly.
    assert fp8["host"] and fp8["versions"]["python"] and fp8["versions"]["nvfp4_tui"]
    text = json.dumps(fp8["profile"], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert fp8["profile_sha256"] == hashlib.sha256(text.encode()).hexdigest()

    # compare names the change before any figure; nothing else in the setup differs but the
    # cache's capacity, which its dtype sets.
    where = f"GPU {entry['gpu']} ({entry['label']})"
    changed = [
        f"kv_cache_dtype: fp8 → auto on {where}",
        f"num_gpu_blocks: 32768 → 16384 on {where}",
    ]
    assert config_differences(fp8, auto) == changed
    assert config_differences(auto, auto) == []
    assert main(["compare", str(tmp_path / "fp8"), str(tmp_path / "auto")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Configuration changed:\n" + "".join(f"  {c}\n" for c in changed))
    assert main(["compare", str(tmp_path / "auto"), str(tmp_path / "auto")]) == 0
    assert "Configuration changed" not in capsys.readouterr().out
    # For scripts the change is a key, and the output stays one JSON object.
    assert main(["compare", str(tmp_path / "fp8"), str(tmp_path / "auto"), "--format", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["configuration_changes"] == changed
    assert main(["report", str(tmp_path / "fp8")]) == 0
    assert "Configuration" in capsys.readouterr().out

    # A live run has no manifest at hand: RunStarted carries the configuration to the views.
    state = FleetState()
    state.apply_all(open_snapshot(tmp_path / "auto").run_events())
    seen = state.configuration[second]
    assert (seen.server_version, seen.kv_cache_dtype) == (SIM_SERVER_VERSION, "auto")
    assert seen.gpu_name == gpu["name"] and seen.max_model_len == MAX_MODEL_LEN
    assert state.configuration[first].kv_cache_dtype == "fp8"

    table = provenance_table(auto)
    assert table is not None
    title, headers, rows = table
    assert title == "Configuration" and len(rows) == 2
    kv = headers.index("KV cache")
    assert [row[kv] for row in rows] == ["fp8", "auto"]
    assert rows[0][headers.index("server")] == SIM_SERVER_VERSION


async def test_a_failing_version_leaves_null_and_the_run_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: SimEndpoint, _: web.Request) -> web.Response:
        return web.Response(status=500, text="\x1b]0;owned\x07boom")

    monkeypatch.setattr(SimEndpoint, "_version", broken)
    manifest = await run_once(short_profile("auto"), tmp_path, "broken")
    for entry in manifest["configuration"].values():
        assert entry["server_version"] is None
        assert entry["max_model_len"] == MAX_MODEL_LEN  # the other probes still answered


def test_old_manifests_have_nothing_to_say() -> None:
    old = {"run_id": "old", "versions": {"python": "3.11.9"}, "profile": {}}
    assert provenance_table(old) is None
    assert config_differences(old, {**old, "versions": {"python": "3.12.1"}}) == [
        "python: 3.11.9 → 3.12.1 (client)"
    ]
    assert config_differences({}, {"configuration": {"x": {"server_version": "0.11.0"}}}) == []


def test_hostile_manifest_values_are_shown_as_one_plain_line() -> None:
    def manifest(dtype: object) -> dict[str, Any]:
        entry = {"label": "a\x1b[31mb", "gpu": 3, "cache_config": {"cache_dtype": dtype}}
        return {"configuration": {"e": entry}}

    assert config_differences(manifest("fp8\x1b]0;t\x07\nx"), manifest("auto")) == [
        "kv_cache_dtype: fp8 x → auto on GPU 3 (ab)"
    ]
    assert config_differences(manifest(["fp8"]), manifest("auto")) == []  # not a setting


def test_a_change_on_several_endpoints_is_one_line() -> None:
    def manifest(dtype: str, c_dtype: str) -> dict[str, Any]:
        entries = {
            # The manifest keeps the endpoints in the profile's order; the line reads by GPU.
            "b": {"label": "B", "gpu": 2, "cache_config": {"cache_dtype": dtype}},
            "a": {"label": "A", "gpu": 0, "cache_config": {"cache_dtype": dtype}},
            "c": {"label": "C", "gpu": None, "cache_config": {"cache_dtype": c_dtype}},
        }
        return {"configuration": entries}

    assert config_differences(manifest("fp8", "fp8"), manifest("auto", "auto")) == [
        "kv_cache_dtype: fp8 → auto on GPU 0,2, C"
    ]
    assert config_differences(manifest("fp8", "fp8"), manifest("fp8", "auto")) == [
        "kv_cache_dtype: fp8 → auto on C"
    ]


def test_profile_hash_follows_the_profile() -> None:
    def digest(kv_cache_dtype: str) -> str:
        return profile_sha256(resolved_profile(short_profile(kv_cache_dtype)))

    assert digest("fp8") == digest("fp8") != digest("auto")

"""A planted API key never reaches a snapshot, a log, an error message or the screen.

The key comes from the environment variable a profile names. The endpoints it is sent to include
servers that echo the request's headers back: in a 400 body, in the answer text, in an error
chunk of the stream and on /metrics. A headless run and a detached run are recorded; every
artefact is searched for the key: the snapshot's files as bytes and as decoded tables, the
manifest, run.log, the command's stdout and stderr, and screenshots of the monitor.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import time
from pathlib import Path

import polars as pl

from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.store.manifest import read_manifest
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.store.schema import TABLES
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.screens.detail import DetailScreen
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.hostile_servers import serve
from tests.reliability.runs import hostile_endpoint_toml, rows_of, write_run_profile
from tests.support.commands import cli_command
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import settle, wait_until

KEY_ENV = "NVFP4_RELIABILITY_KEY"
KEY = "sk-planted-5e3c7a91d2-do-not-leak"
ECHOES = ["echo_headers_400", "echo_headers_in_answer", "echo_headers_error_chunk"]
RUN_TIMEOUT_S = 90.0


async def _command(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    return await cli_command(*args, env=env, timeout_s=RUN_TIMEOUT_S)


async def _wait_until_finished(snapshot: Path) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while read_manifest(snapshot)["status"] == "running":
        assert time.monotonic() < deadline, f"{snapshot} did not finish"
        await asyncio.sleep(0.2)


def _profile(directory: Path, urls: dict[str, str], sim_url: str) -> Path:
    endpoints = [hostile_endpoint_toml(name, urls[name], api_key_env=KEY_ENV) for name in ECHOES]
    sim = endpoint_toml("sim_auth", 0, decode_tps=400.0, ttft_s=0.02)
    sim = sim.replace('model = "current"', f'model = "current"\napi_key_env = "{KEY_ENV}"')
    endpoints.append(sim.replace("http://127.0.0.1:18000", sim_url))
    return write_run_profile(directory, endpoints, requests=1, timeout_s=5.0)


def _decoded_text(snapshot_dir: Path) -> str:
    snapshot = open_snapshot(snapshot_dir)
    tables = [snapshot.table(name).write_csv() for name in TABLES]
    return "\n".join([*tables, json.dumps(snapshot.manifest)])


def _files_under(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


async def _screenshots(snapshot_dir: Path) -> str:
    events = open_snapshot(snapshot_dir).events()
    source = FixedSource(events, kind="live")
    app = FleetApp(source, clock=lambda: events[-1].t)
    shots = []
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot, source)
        shots.append(app.export_screenshot())
        for endpoint_id in ECHOES:
            app.open_detail(endpoint_id)
            await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen), "a detail screen")
            app.redraw()
            await pilot.pause()
            shots.append(app.export_screenshot())
            await pilot.press("escape")
    return html.unescape("\n".join(shots))


async def test_a_planted_key_is_in_no_artefact_of_a_run(tmp_path: Path) -> None:
    env = {**os.environ, KEY_ENV: KEY}
    out = tmp_path / "out"
    async with serve(ECHOES) as urls:
        probe = write_run_profile(tmp_path / "probe", [endpoint_toml("sim_auth", 0)], requests=1)
        async with SimFleet(load_profile(probe).endpoints) as fleet:
            path = _profile(tmp_path, urls, fleet.urls["sim_auth"])
            code, stdout, stderr = await _command(
                "run", str(path), "--headless", "--out", str(out), env=env
            )
            assert code == 0, stderr
            detach_code, detach_out, detach_err = await _command(
                "run", str(path), "--detach", "--out", str(out), env=env
            )
            assert detach_code == 0, detach_err
            snapshots = [p for p in out.iterdir() if p.is_dir()]
            assert len(snapshots) == 2
            for snapshot in snapshots:
                await _wait_until_finished(snapshot)

    # The key did travel to the servers: the echoes came back, and were scrubbed on the way in.
    headless = next(p for p in snapshots if not (p / "run.log").exists())
    rows = rows_of(open_snapshot(headless))
    assert "Bearer ***" in rows["echo_headers_400"].get_column("error_message")[0]
    assert "Bearer ***" in rows["echo_headers_in_answer"].get_column("answer_text")[0]
    assert "Bearer ***" in rows["echo_headers_error_chunk"].get_column("error_message")[0]
    assert "no server metrics" in stderr  # the /metrics echo was parsed, and failed, and said so

    leaks: list[str] = []
    for path in _files_under(out):
        if KEY.encode() in path.read_bytes():
            leaks.append(str(path))
    for snapshot in snapshots:
        if KEY in _decoded_text(snapshot):
            leaks.append(f"{snapshot} (decoded)")
    screens = await _screenshots(headless)  # the detached run recorded the same
    assert "Bearer" in screens  # the echoes are on screen, scrubbed
    if KEY in screens:
        leaks.append(f"{headless} (screen)")
    assert any((p / "run.log").is_file() for p in snapshots)
    for name, text in (
        ("stdout", stdout),
        ("stderr", stderr),
        ("detach stdout", detach_out),
        ("detach stderr", detach_err),
    ):
        if KEY in text:
            leaks.append(name)
    assert leaks == []
    manifest = read_manifest(headless)
    assert all(e["api_key_env"] == KEY_ENV for e in manifest["profile"]["endpoints"])
    assert pl.read_parquet(headless / "requests.parquet").height == len(ECHOES) + 1

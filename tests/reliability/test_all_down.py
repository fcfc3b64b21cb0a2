"""A run whose endpoints are down says so: rows, an exit code, a manifest that is not complete.

Endpoints that refuse connections are ports the OS handed out and nobody listens on. The run
records each down endpoint's first planned request as a ``connect`` error row, ends ``aborted``
when every endpoint is down, and exits ``exit_codes.ALL_DOWN`` headless and under the UI; with
one endpoint up it completes and exits 0, naming the one that was down. A ``--out`` that cannot
be written is bad input: exit 2, before anything runs.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest

from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.cli import main
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.events import PhaseFinished
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.sources.live import LiveSource
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.tui.app import FleetApp
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.runs import hostile_endpoint_toml, pointed_at, rows_of, write_run_profile

DOWN = ("down_a", "down_b", "down_c")
REQUESTS = 3
CONCURRENCY = 2
WORKER_START_POLLS = 200
WORKER_END_TIMEOUT_S = 60.0


def refusing_url() -> str:
    """A loopback URL that refuses connections: a port the OS picked, bound, then let go."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def down_profile(directory: Path, extra: str = "") -> Path:
    endpoints = [hostile_endpoint_toml(eid, refusing_url()) for eid in DOWN]
    return write_run_profile(
        directory, [*endpoints, extra], requests=REQUESTS, concurrency=CONCURRENCY
    )


def only_snapshot(out: Path) -> Path:
    (snapshot,) = (p for p in out.iterdir() if p.is_dir())
    return snapshot


def test_a_headless_run_with_every_endpoint_down_fails_with_its_own_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = down_profile(tmp_path)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--headless"]) == exit_codes.ALL_DOWN
    assert exit_codes.ALL_DOWN not in (exit_codes.OK, exit_codes.USAGE, exit_codes.STOPPED)
    printed = capsys.readouterr().out
    assert "run aborted" in printed and "every endpoint was down" in printed
    for endpoint_id in DOWN:
        assert f"{endpoint_id:<16} was down: connect: connection refused" in printed

    snapshot = open_snapshot(only_snapshot(out))
    assert snapshot.status == "aborted"
    manifest = json.loads((snapshot.path / "manifest.json").read_text())
    assert manifest["status"] == "aborted"
    rows = rows_of(snapshot)
    assert set(rows) == set(DOWN)
    for frame in rows.values():
        # The first request of the plan, tried once: not one row per planned request.
        assert frame.get_column("status").to_list() == ["error"]
        assert frame.get_column("error_kind").to_list() == ["connect"]
        assert frame.get_column("request_index").to_list() == [0]
        assert "connection refused" in frame.get_column("error_message")[0]
    phases = [e for e in snapshot.events() if isinstance(e, PhaseFinished)]
    assert sorted(p.endpoint_id for p in phases) == sorted(DOWN)
    assert {(p.requests, p.errors, p.limit) for p in phases} == {(1, 1, "endpoint_down")}


def test_one_endpoint_up_completes_and_names_the_ones_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = down_profile(tmp_path, endpoint_toml("up", 0, decode_tps=200.0, ttft_s=0.02))
    out = tmp_path / "out"
    with SimProcess(path, port_base=0) as sim:
        live = pointed_at(path, sim.urls)
        assert main(["run", str(live), "--out", str(out), "--headless"]) == exit_codes.OK
    printed = capsys.readouterr().out
    assert "run complete" in printed
    for endpoint_id in DOWN:
        assert f"{endpoint_id:<16} was down:" in printed
    assert "up               was down" not in printed
    snapshot = open_snapshot(only_snapshot(out))
    assert snapshot.status == "complete"
    assert rows_of(snapshot)["up"].height == REQUESTS


async def test_under_the_ui_the_worker_exits_with_the_same_code(tmp_path: Path) -> None:
    plan = plan_run(load_profile(down_profile(tmp_path)))
    source = LiveSource(WorkerSpec.of(plan, tmp_path / "out", run_id="all-down"))
    app = FleetApp(source)
    try:
        async with app.run_test() as pilot:
            for _ in range(WORKER_START_POLLS):  # the app starts the worker once it is running
                if source.process is not None:
                    break
                await pilot.pause(0.05)
            code = await asyncio.wait_for(source.wait(), WORKER_END_TIMEOUT_S)
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert code == exit_codes.ALL_DOWN
            assert app.state.status == "aborted"
            assert "every endpoint was down" in (app.state.finish_message or "")
    finally:
        await source.close()
    assert open_snapshot(tmp_path / "out" / "all-down").status == "aborted"


def test_an_unwritable_out_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = down_profile(tmp_path)
    # Tests run as root, which ignores permission bits: a directory under a regular file fails
    # with ENOTDIR for every user.
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    for mode in ([], ["--headless"]):
        code = main(["run", str(path), "--out", str(blocker / "out"), *mode])
        assert code == exit_codes.USAGE == 2
        message = capsys.readouterr().err
        assert (
            message.strip()
            == f"cannot write snapshots to {blocker}/out: [Errno 20] Not a directory"
        )

"""An SSH drop (SIGHUP) during a foreground run stops it cleanly: finished, compacted, ``aborted``.

Three shapes of foreground run: ``run --headless`` (SIGHUP reaches it), the worker itself, and the
live UI in a terminal: SIGHUP kills the UI, whose worker lives in a session of its own; the
worker sees its command pipe close and stops the same way. A run that must survive the drop is
started with ``--detach`` (tests/replay/test_detach.py).
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.core.events import RunFinished
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.store.manifest import read_manifest
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.store.writer import list_parts
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.forked_worker import WorkerForker
from tests.reliability.runs import pointed_at, wait_for_rows, write_run_profile

WAIT_S = 60.0


def _profile(tmp_path: Path) -> Path:
    endpoints = [endpoint_toml(f"e{i}", i, decode_tps=300.0, ttft_s=0.02) for i in range(2)]
    return write_run_profile(tmp_path, endpoints, requests=500, concurrency=2)


def _assert_finished_aborted(snapshot_dir: Path, reason: str | None = None) -> None:
    assert read_manifest(snapshot_dir)["status"] == "aborted"
    assert (snapshot_dir / "requests.parquet").is_file()  # compacted
    assert not list_parts(snapshot_dir / "requests")
    snapshot = open_snapshot(snapshot_dir)
    assert snapshot.warnings == [] and snapshot.requests().height > 0
    finished = [e for e in snapshot.events() if isinstance(e, RunFinished)]
    assert [e.status for e in finished] == ["aborted"]
    if reason is not None:
        assert reason in (finished[0].message or "")


def test_sighup_stops_a_headless_run_cleanly(tmp_path: Path) -> None:
    path = _profile(tmp_path)
    out = tmp_path / "out"
    with SimProcess(path, port_base=0, time_scale=5.0) as sim:
        live = pointed_at(path, sim.urls)
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nvfp4_tui.cli",
                "run",
                str(live),
                "--headless",
                "--out",
                str(out),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            snapshot_dir = wait_for_rows(out)
            run.send_signal(signal.SIGHUP)
            stdout, stderr = run.communicate(timeout=WAIT_S)
        finally:
            if run.poll() is None:
                run.kill()
    assert run.returncode == 130, stderr
    assert "run aborted" in stdout and "Traceback" not in stderr
    _assert_finished_aborted(snapshot_dir, "cancelled")


def test_sighup_stops_the_worker_cleanly(tmp_path: Path) -> None:
    path = _profile(tmp_path)
    with SimProcess(path, port_base=0, time_scale=5.0) as sim:
        plan = plan_run(load_profile(path)).with_urls(sim.urls)
        spec = WorkerSpec.of(plan, tmp_path / "out", run_id="hup")
        forker = WorkerForker()
        try:
            pid, events_fd = forker.start(json.dumps(spec.__dict__))
            reader = threading.Thread(target=_drain_until_closed, args=(events_fd,))
            reader.start()  # as the UI would: the events are read all along
            snapshot_dir = wait_for_rows(tmp_path / "out")
            os.kill(pid, signal.SIGHUP)
            reader.join(timeout=WAIT_S)
            assert not reader.is_alive(), "the worker did not end"
        finally:
            forker.close()
    _assert_finished_aborted(snapshot_dir, "cancelled")


def _drain_until_closed(fd: int) -> None:
    deadline = time.monotonic() + WAIT_S
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], deadline - time.monotonic())
            if ready and not os.read(fd, 1 << 16):
                return
        raise AssertionError("the worker did not end")
    finally:
        os.close(fd)


def test_an_ssh_drop_under_the_live_ui_ends_the_run_aborted(tmp_path: Path) -> None:
    path = _profile(tmp_path)
    out = tmp_path / "out"
    with SimProcess(path, port_base=0, time_scale=5.0) as sim:
        live = pointed_at(path, sim.urls)
        controller, terminal = pty.openpty()
        ui = subprocess.Popen(
            [sys.executable, "-m", "nvfp4_tui.cli", "run", str(live), "--out", str(out)],
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            start_new_session=True,
            env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"},
        )
        os.close(terminal)
        # The terminal's screen must be read, or the UI blocks writing to it.
        reader = threading.Thread(target=_drain_terminal, args=(controller,), daemon=True)
        reader.start()
        try:
            snapshot_dir = wait_for_rows(out)
            ui.send_signal(signal.SIGHUP)  # what the kernel sends when the SSH session drops
            ui.wait(timeout=WAIT_S)
            deadline = time.monotonic() + WAIT_S
            while read_manifest(snapshot_dir)["status"] == "running":
                assert time.monotonic() < deadline, "the worker kept running without its UI"
                time.sleep(0.1)
        finally:
            if ui.poll() is None:
                ui.kill()
                ui.wait()
    _assert_finished_aborted(snapshot_dir, "the monitor went away")


def _drain_terminal(fd: int) -> None:
    try:
        while os.read(fd, 1 << 16):
            pass
    except OSError:
        pass  # the terminal closed
    finally:
        os.close(fd)

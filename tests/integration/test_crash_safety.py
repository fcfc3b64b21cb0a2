"""A run killed with SIGKILL keeps what it finished; one stopped with SIGTERM ends aborted, compacted.

The run is the worker process the UI starts; its event pipe tells the test when each request
finished, so the test knows what the snapshot must hold.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.core.events import RequestFinished, decode
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.store.reader import open_snapshot
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite

FLUSH_MARGIN_S = 1.0


def start_worker(tmp_path: Path, urls: dict[str, str], profile_path: Path) -> subprocess.Popen:
    plan = plan_run(load_profile(profile_path)).with_urls(urls)
    spec = WorkerSpec.of(plan, tmp_path / "out", run_id="crash-run")
    return subprocess.Popen(
        [sys.executable, "-m", "nvfp4_tui.bench.worker", json.dumps(spec.__dict__)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def read_finished(process: subprocess.Popen, until_s: float) -> list[tuple[float, str]]:
    """(arrival time, request key) of each RequestFinished the worker streamed before ``until_s``."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    arrived: list[tuple[float, str]] = []
    pending = b""
    deadline = time.monotonic() + until_s
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            event = decode(line)
            if isinstance(event, RequestFinished):
                key = f"{event.endpoint_id}/{event.phase_index}/{event.request_index}"
                arrived.append((time.monotonic(), key))
    return arrived


def profile_for(tmp_path: Path) -> Path:
    write_suite(tmp_path / "suites", "essay", max_tokens=64)
    endpoints = [endpoint_toml(f"e{i}", i, decode_tps=300.0, ttft_s=0.05) for i in range(3)]
    return write_profile(tmp_path, endpoints, suites=["essay"], concurrency=[2], requests=400)


def request_keys(path: Path) -> set[str]:
    frame = open_snapshot(path).requests()
    return {
        f"{r['endpoint_id']}/{r['phase_index']}/{r['request_index']}"
        for r in frame.iter_rows(named=True)
    }


def test_sigkill_mid_run_keeps_every_request_finished_a_second_before(tmp_path: Path) -> None:
    path = profile_for(tmp_path)
    with SimProcess(path, port_base=0) as sim:
        worker = start_worker(tmp_path, sim.urls, path)
        try:
            arrived = read_finished(worker, until_s=4.0)
            killed_at = time.monotonic()
            worker.send_signal(signal.SIGKILL)
        finally:
            worker.wait(timeout=10)
    assert len(arrived) > 20
    snapshot_dir = tmp_path / "out" / "crash-run"
    snapshot = open_snapshot(snapshot_dir)
    assert snapshot.status == "running"  # it never got to say otherwise
    kept = request_keys(snapshot_dir)
    due = {key for t, key in arrived if t < killed_at - FLUSH_MARGIN_S}
    assert due and due <= kept
    assert snapshot.warnings == []  # no half-written part is ever visible under a part name


def test_sigterm_ends_aborted_and_compacted(tmp_path: Path) -> None:
    path = profile_for(tmp_path)
    with SimProcess(path, port_base=0) as sim:
        worker = start_worker(tmp_path, sim.urls, path)
        arrived = read_finished(worker, until_s=2.5)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 130
    snapshot_dir = tmp_path / "out" / "crash-run"
    snapshot = open_snapshot(snapshot_dir)
    assert snapshot.status == "aborted"
    assert (snapshot_dir / "requests.parquet").is_file()
    assert not list((snapshot_dir / "requests").glob("part-*.parquet"))
    assert {key for _, key in arrived} <= request_keys(snapshot_dir)
    finished = [e for e in snapshot.events() if type(e).__name__ == "RunFinished"]
    assert [e.status for e in finished] == ["aborted"]

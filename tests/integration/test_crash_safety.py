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
from collections.abc import Callable
from pathlib import Path

from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.core.events import RequestFinished, decode
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.store.reader import open_snapshot
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite

FLUSH_MARGIN_S = 1.0
# Bounds on every wait, far above what a loaded 2-core box needs: a failure, not a slow pass.
WAIT_S = 60.0
ENOUGH_FINISHED = 21


class Worker:
    """The worker process, its stderr in a file and its event pipe read as the UI reads it."""

    def __init__(self, tmp_path: Path, urls: dict[str, str], profile_path: Path) -> None:
        plan = plan_run(load_profile(profile_path)).with_urls(urls)
        spec = WorkerSpec.of(plan, tmp_path / "out", run_id="crash-run")
        self.log = tmp_path / "worker.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "nvfp4_tui.bench.worker", json.dumps(spec.__dict__)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
            )
        self.arrived: list[tuple[float, str]] = []  # (arrival time, request key)
        self._pending = b""

    def wait_ready(self) -> None:
        """The handshake: the snapshot line on stderr says the stop signals are taken over."""
        deadline = time.monotonic() + WAIT_S
        while '{"snapshot"' not in self.log.read_text(errors="replace"):
            assert self.process.poll() is None, self.log.read_text(errors="replace")
            assert time.monotonic() < deadline, "the worker never said it was ready"
            time.sleep(0.02)

    def read(self, done: Callable[[list[tuple[float, str]]], bool]) -> None:
        """Read the event pipe until ``done(arrived)``, or to its end when ``done`` never holds."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + WAIT_S
        while not done(self.arrived):
            left = deadline - time.monotonic()
            assert left > 0, f"only {len(self.arrived)} requests finished in {WAIT_S:g} s"
            ready, _, _ = select.select([fd], [], [], left)
            chunk = os.read(fd, 1 << 16) if ready else b""
            if not chunk:
                return
            *lines, self._pending = (self._pending + chunk).split(b"\n")
            for line in lines:
                event = decode(line)
                if isinstance(event, RequestFinished):
                    key = f"{event.endpoint_id}/{event.phase_index}/{event.request_index}"
                    self.arrived.append((time.monotonic(), key))

    def read_for(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        self.read(lambda _arrived: time.monotonic() >= until)

    def stop(self, sig: signal.Signals) -> int:
        """Send ``sig``, read the pipe to its end (a full pipe would hold the last flush), wait."""
        self.process.send_signal(sig)
        self.read(lambda _arrived: False)
        return self.process.wait(timeout=WAIT_S)


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
        worker = Worker(tmp_path, sim.urls, path)
        try:
            worker.wait_ready()
            worker.read(lambda arrived: len(arrived) >= ENOUGH_FINISHED)
            # Past the margin, so that the first ones are due on disk and later ones are not.
            worker.read_for(FLUSH_MARGIN_S * 1.5)
            killed_at = time.monotonic()
            worker.process.send_signal(signal.SIGKILL)
        finally:
            worker.process.kill()
            worker.process.wait(timeout=WAIT_S)
    snapshot_dir = tmp_path / "out" / "crash-run"
    snapshot = open_snapshot(snapshot_dir)
    assert snapshot.status == "running"  # it never got to say otherwise
    kept = request_keys(snapshot_dir)
    due = {key for t, key in worker.arrived if t < killed_at - FLUSH_MARGIN_S}
    assert len(due) >= ENOUGH_FINISHED and due <= kept
    assert snapshot.warnings == []  # no half-written part is ever visible under a part name


def assert_aborted_and_compacted(snapshot_dir: Path) -> None:
    snapshot = open_snapshot(snapshot_dir)
    assert snapshot.status == "aborted"
    assert (snapshot_dir / "requests.parquet").is_file()
    assert not list((snapshot_dir / "requests").glob("part-*.parquet"))
    assert snapshot.warnings == []


def test_sigterm_ends_aborted_and_compacted(tmp_path: Path) -> None:
    path = profile_for(tmp_path)
    with SimProcess(path, port_base=0) as sim:
        worker = Worker(tmp_path, sim.urls, path)
        worker.wait_ready()
        worker.read(lambda arrived: len(arrived) >= 3)
        assert worker.stop(signal.SIGTERM) == 130
    snapshot_dir = tmp_path / "out" / "crash-run"
    assert_aborted_and_compacted(snapshot_dir)
    assert {key for _, key in worker.arrived} <= request_keys(snapshot_dir)
    finished = [
        e for e in open_snapshot(snapshot_dir).events() if type(e).__name__ == "RunFinished"
    ]
    assert [e.status for e in finished] == ["aborted"]


def test_sigterm_right_after_the_handshake_ends_aborted(tmp_path: Path) -> None:
    # The worker may still be probing the servers: the stop must be honoured all the same.
    path = profile_for(tmp_path)
    with SimProcess(path, port_base=0) as sim:
        worker = Worker(tmp_path, sim.urls, path)
        worker.wait_ready()
        assert worker.stop(signal.SIGTERM) == 130
    snapshot_dir = tmp_path / "out" / "crash-run"
    assert_aborted_and_compacted(snapshot_dir)
    assert len(request_keys(snapshot_dir)) < 400  # stopped, not run to its end


# The worker as the UI starts it, but signalled by itself the moment its snapshot exists: what a
# parent that waits for the manifest (``run --detach``) may do at the earliest.
STOPPED_AS_THE_SNAPSHOT_OPENS = """
import os, signal, sys
from nvfp4_tui.bench import worker
from nvfp4_tui.store.writer import SnapshotWriter

opened = SnapshotWriter.open

def open_then_stop(self):
    opened(self)
    os.kill(os.getpid(), signal.SIGTERM)

SnapshotWriter.open = open_then_stop
sys.exit(worker.main(sys.argv[1:]))
"""


def test_a_stop_as_soon_as_the_snapshot_exists_is_honoured(tmp_path: Path) -> None:
    path = profile_for(tmp_path)
    with SimProcess(path, port_base=0) as sim:
        plan = plan_run(load_profile(path)).with_urls(sim.urls)
        spec = WorkerSpec.of(plan, tmp_path / "out", run_id="crash-run")
        done = subprocess.run(
            [sys.executable, "-c", STOPPED_AS_THE_SNAPSHOT_OPENS, json.dumps(spec.__dict__)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=WAIT_S,
        )
    assert done.returncode == 130, done.stderr.decode(errors="replace")
    assert_aborted_and_compacted(tmp_path / "out" / "crash-run")

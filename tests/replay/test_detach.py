"""A detached demo outlives the shell that started it; a follower watches it to the end."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.profile import load_profile, with_overrides
from nvfp4_tui.launch.detach import DetachError, detach_demo, hidden_log_path, launch_detached
from nvfp4_tui.store.manifest import read_manifest

RUN_DONE_TIMEOUT_S = 120.0
CLI = f"{sys.executable} -m nvfp4_tui.cli"


def wait_for_status(snapshot: Path, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = read_manifest(snapshot)["status"]
        if status != "running":
            return status
        time.sleep(0.2)
    return "running"


@pytest.mark.slow  # a whole demo, detached
def test_a_detached_demo_survives_its_shell_and_completes(tmp_path: Path) -> None:
    out = tmp_path / "snapshots"
    launch = (
        f"{CLI} demo --detach --duration 2 --suites english --concurrency 1 "
        f"--time-scale 10 --out {out}; exit"
    )
    # The shell stands for the SSH session: its own process group, hung up once it has exited.
    shell = subprocess.Popen(
        ["bash", "-c", launch],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=tmp_path,
    )
    stdout, stderr = shell.communicate(timeout=60)
    assert shell.returncode == 0, stderr
    for sig in (signal.SIGHUP, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, sig)
    lines = dict(line.split(": ", 1) for line in stdout.splitlines() if ": " in line)
    snapshot = Path(lines["snapshot"].strip())
    assert snapshot.parent == out
    assert lines["follow"].strip() == f"nvfp4-tui follow {snapshot}"
    follower = subprocess.run(
        [sys.executable, "-m", "nvfp4_tui.cli", "follow", str(snapshot), "--headless"],
        capture_output=True,
        text=True,
        timeout=RUN_DONE_TIMEOUT_S,
    )
    assert wait_for_status(snapshot, RUN_DONE_TIMEOUT_S) == "complete"
    assert follower.returncode == 0, follower.stderr
    assert "english" in follower.stdout and "run complete" in follower.stdout
    log = snapshot / "run.log"
    assert log.is_file() and json.loads(log.read_text().splitlines()[0]) == {
        "snapshot": str(snapshot)
    }
    assert not hidden_log_path(out, snapshot.name).exists()


def test_sigterm_stops_a_detached_demo_cleanly(tmp_path: Path) -> None:
    profile = with_overrides(
        load_profile(DEMO_PROFILE), suites=("english",), concurrency=(1,), duration_s=120.0
    )
    detached = detach_demo(profile, tmp_path, time_scale=10.0, gpu_telemetry="sim")
    assert read_manifest(detached.snapshot)["status"] == "running"
    os.kill(detached.pid, signal.SIGTERM)
    assert wait_for_status(detached.snapshot, RUN_DONE_TIMEOUT_S) == "aborted"


def test_a_run_that_fails_before_its_snapshot_reports_its_last_words(tmp_path: Path) -> None:
    failing = [sys.executable, "-c", "import sys; sys.exit('bad profile: key x')"]
    with pytest.raises(DetachError, match="exited with code 1: bad profile: key x"):
        launch_detached(failing, tmp_path, "r1", ready_timeout_s=30)
    assert hidden_log_path(tmp_path, "r1").read_text().strip() == "bad profile: key x"


def test_a_run_that_never_writes_is_stopped(tmp_path: Path) -> None:
    stuck = [sys.executable, "-c", "import time; time.sleep(60)"]
    with pytest.raises(DetachError, match=r"created no snapshot in 0\.5 s and was stopped"):
        launch_detached(stuck, tmp_path, "r2", ready_timeout_s=0.5)


def test_an_unwritable_root_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(DetachError, match="cannot start a detached run in"):
        launch_detached([sys.executable, "-c", "pass"], tmp_path / "file", "r3", 5)

"""Runs that outlive the terminal: ``run --detach`` and ``demo --detach``.

The launcher starts the run in a new session (``start_new_session``: no controlling terminal,
so an SSH drop sends it no SIGHUP), with stdout on /dev/null and stdin at EOF, waits (bounded)
until the snapshot's manifest exists, prints where it is and how to follow it, and returns.

The run's log must end up in the snapshot directory, but the snapshot writer refuses a directory
that already holds a file, and the log has to be open before the run starts. So the log is
opened beside the snapshot, as ``<out>/.<run-id>.log``, handed to the run as its stderr, and
renamed to ``<snapshot>/run.log`` once the manifest exists: the run keeps writing to the same
open file under its new name. If the run fails before it creates the snapshot, the log stays
beside it and the launcher prints its last line.

``run --detach`` starts the worker itself (``python -m nvfp4_tui.bench.worker SPEC``). For
``demo --detach`` the simulator must outlive the shell too, so the detached process is
``python -m nvfp4_tui.launch.detach demo JOB``: it starts the simulator, runs the worker as its child
against it, and stops the simulator when the worker ends. SIGTERM or SIGHUP to it stops the
worker cleanly (the snapshot ends ``aborted``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import IO, Any, TextIO

from nvfp4_tui.bench.handover import discard, discarded_on_failure, hand_over, taken
from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.config.plan import LaunchPlan, plan_run
from nvfp4_tui.config.profile import Profile
from nvfp4_tui.config.telemetry_choice import TelemetryKind
from nvfp4_tui.launch.run import say_before_run
from nvfp4_tui.store.manifest import MANIFEST_NAME, error_text, new_run_id

LOG_NAME = "run.log"
RUN_READY_TIMEOUT_S = 15.0
# The demo first starts its simulator (SimProcess waits up to 20 s for it).
DEMO_READY_TIMEOUT_S = 45.0
POLL_S = 0.1
WORKER_STOP_TIMEOUT_S = 30.0
MAX_RUN_ID_TRIES = 100


class DetachError(Exception):
    """The detached run did not start; the message is one line."""


@dataclass(frozen=True)
class DemoJob:
    """What ``python -m nvfp4_tui.launch.detach demo`` needs: the worker's spec less the
    simulator's URLs, and the simulator's clock factor."""

    spec: WorkerSpec
    time_scale: float

    def plain(self) -> dict[str, Any]:
        return {"spec": asdict(self.spec), "time_scale": self.time_scale}

    @classmethod
    def of_plain(cls, body: dict[str, Any]) -> DemoJob:
        return cls(WorkerSpec(**body["spec"]), float(body["time_scale"]))


@dataclass(frozen=True)
class Detached:
    pid: int
    snapshot: Path
    log: Path


def hidden_log_path(out_root: Path, run_id: str) -> Path:
    return out_root / f".{run_id}.log"


def _python_module(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]


def _start_closed_stdin(
    command: list[str], *, stderr: IO[bytes] | None = None, start_new_session: bool = False
) -> subprocess.Popen[bytes]:
    """Start ``command`` with stdout on /dev/null and stdin a pipe that is already at EOF.

    The worker reads commands from stdin; an empty pipe tells it "no commands will come",
    where /dev/null would be a device its event loop cannot watch.
    """
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        start_new_session=start_new_session,
    )
    assert process.stdin is not None
    process.stdin.close()
    return process


def launch_detached(
    command: list[str], out_root: Path, run_id: str, ready_timeout_s: float
) -> Detached:
    """Start ``command`` detached, with its stderr to the log; wait for the snapshot to exist."""
    snapshot = out_root / run_id
    log = hidden_log_path(out_root, run_id)
    try:
        out_root.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as log_file:
            process = _start_closed_stdin(command, stderr=log_file, start_new_session=True)
    except OSError as exc:
        raise DetachError(f"cannot start a detached run in {out_root}: {error_text(exc)}") from exc
    deadline = time.monotonic() + ready_timeout_s
    while not (snapshot / MANIFEST_NAME).exists():
        code = process.poll()
        if code is not None:
            raise DetachError(f"the detached run exited with code {code}: {_last_line(log)}")
        if time.monotonic() > deadline:
            # Stuck before it recorded anything: stopped rather than left running unwatched.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(WORKER_STOP_TIMEOUT_S)
            raise DetachError(
                f"the detached run created no snapshot in {ready_timeout_s:g} s and was stopped;"
                f" see {log}"
            )
        time.sleep(POLL_S)
    final_log = snapshot / LOG_NAME
    try:
        os.replace(log, final_log)
    except OSError:
        final_log = log  # another filesystem under the snapshot: the log stays beside it
    return Detached(process.pid, snapshot, final_log)


def _last_line(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return lines[-1] if lines else "no message"


def _free_run_id(profile: Profile, out_root: Path) -> str:
    """A new run id whose snapshot directory does not exist yet (two launches in one second)."""
    base = new_run_id(profile.run.name, datetime.now(UTC))
    for n in range(1, MAX_RUN_ID_TRIES + 1):
        run_id = base if n == 1 else f"{base}-{n}"
        if not (out_root / run_id).exists() and not hidden_log_path(out_root, run_id).exists():
            return run_id
    raise DetachError(f"no free run id like {base} in {out_root}")


def detach_run(profile: Profile, out_root: Path) -> Detached:
    """Start the worker for ``profile`` detached; returns once its snapshot exists."""
    plan = plan_run(profile)
    say_before_run(plan)
    run_id = _free_run_id(profile, out_root)
    with discarded_on_failure(hand_over(asdict(WorkerSpec.of(plan, out_root, run_id)))) as spec:
        command = _python_module("nvfp4_tui.bench.worker", spec)
        return launch_detached(command, out_root, run_id, RUN_READY_TIMEOUT_S)


def detach_demo(
    profile: Profile, out_root: Path, *, time_scale: float, gpu_telemetry: TelemetryKind
) -> Detached:
    """Start simulator and worker together, detached; returns once the snapshot exists."""
    plan = plan_run(profile, gpu_telemetry=gpu_telemetry)
    say_before_run(plan)
    run_id = _free_run_id(profile, out_root)
    # The simulator starts in the detached process: its URLs join the plan there.
    job = DemoJob(WorkerSpec.of(plan, out_root, run_id), time_scale)
    with discarded_on_failure(hand_over(job.plain())) as handed:
        command = _python_module("nvfp4_tui.launch.detach", "demo", handed)
        return launch_detached(command, out_root, run_id, DEMO_READY_TIMEOUT_S)


def print_detached(detached: Detached, stream: TextIO = sys.stdout) -> None:
    lines = [
        f"detached run started (pid {detached.pid})",
        f"snapshot: {detached.snapshot}",
        f"log:      {detached.log}",
        f"follow:   nvfp4-tui follow {detached.snapshot}",
    ]
    print("\n".join(lines), file=stream, flush=True)


# ---- the detached demo process -------------------------------------------------------------


def _stop_on(process: subprocess.Popen[bytes]) -> None:
    def forward(signum: int, _frame: FrameType | None) -> None:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, forward)


def run_demo_job(job: DemoJob) -> int:
    """Serve the simulator and run the worker against it until the worker ends."""
    from nvfp4_tui.sim.process import SimProcess

    plan = LaunchPlan.from_plain(job.spec.plan)
    with SimProcess(plan.profile.path, time_scale=job.time_scale) as sim:
        live = plan.with_urls(sim.urls, job.time_scale)
        spec = hand_over(asdict(replace(job.spec, plan=live.to_plain())))
        try:
            worker = _start_closed_stdin(_python_module("nvfp4_tui.bench.worker", spec))
            _stop_on(worker)
            return worker.wait()
        finally:
            discard(spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nvfp4_tui.launch.detach")
    sub = parser.add_subparsers(dest="what", required=True)
    demo = sub.add_parser("demo", help="simulator and worker together (started by demo --detach)")
    demo.add_argument("job", help="the DemoJob as JSON, or @FILE that holds it")
    args = parser.parse_args(argv)
    return run_demo_job(DemoJob.of_plain(taken(args.job)))


if __name__ == "__main__":
    sys.exit(main())

"""The run as its own process: records the snapshot and streams events as JSON lines on stdout.

The UI starts this process so that the clock that times tokens never shares an event loop or a
GIL with rendering. Commands arrive on stdin, one per line: ``pause``, ``resume``, ``stop``.
SIGTERM, SIGINT and SIGHUP (the SSH session dropped) all stop the run cleanly: requests in flight
are cancelled, everything finished is written and the manifest says ``aborted``. The UI starts
the worker in a session of its own, so a dropped SSH connection signals the UI, not the worker;
the UI's end closes the worker's stdin, and a worker started with ``stop_when_stdin_closes`` takes
that as the same stop. A run that must outlive the terminal is started with ``--detach`` instead.

The handshake: the worker takes the stop signals over before it creates its snapshot, so once the
manifest exists, or the ``{"snapshot": ...}`` line is on stderr, a signal stops the run cleanly
(exit 130), even one that arrives before the first request. A parent that signals it earlier hits
a process still starting up, which the signal kills like any other.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvfp4_tui.bench.event_pipe import PipeWriter, backlog_limit, line_limit
from nvfp4_tui.bench.handover import taken
from nvfp4_tui.bench.runner_process import cancel_on_stop_signals, obey_stdin
from nvfp4_tui.bench.session import Session
from nvfp4_tui.config.keys import run_secrets
from nvfp4_tui.config.plan import LaunchPlan
from nvfp4_tui.config.profile import ReplyLimits
from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.outside_text import Secrets, outside_line
from nvfp4_tui.store.manifest import SnapshotError
from nvfp4_tui.telemetry.sampler import telemetry_for_run


@dataclass(frozen=True)
class WorkerSpec:
    """What the worker is handed, as JSON: the plan as the launcher resolved it, and where to
    record the run."""

    plan: dict[str, Any]  # LaunchPlan.to_plain()
    out_root: str
    run_id: str | None = None
    stop_when_stdin_closes: bool = False  # the UI started it: the UI's end (SSH drop) ends the run

    @classmethod
    def of(cls, plan: LaunchPlan, out_root: Path, run_id: str | None = None) -> WorkerSpec:
        return cls(plan=plan.to_plain(), out_root=str(out_root), run_id=run_id)

    def event_line_limit(self) -> int:
        """The longest event line the worker can send for this plan."""
        return line_limit(ReplyLimits(**self.plan["profile"]["run"]["limits"]))


async def _read_commands(session: Session, main_task: asyncio.Task, stop_at_eof: bool) -> None:
    if await obey_stdin(session.runner):
        main_task.cancel()
        return
    if stop_at_eof:
        session.runner.stop_reason = "stopped: the monitor went away (its terminal closed?)"
        main_task.cancel()


def _print_message(message: str, secrets: Secrets) -> None:
    # With the UI gone stderr is a broken pipe; the run's own stop must not fail on it. A note
    # can quote a server: one safe line, on the UI's terminal or in a detached run's run.log.
    with contextlib.suppress(OSError):
        print(outside_line(message, secrets=secrets), file=sys.stderr, flush=True)


def _stdin_is_pipe() -> bool:
    """Commands come only over a pipe or socket; /dev/null or a terminal means none will."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def _main(spec: WorkerSpec, events_fd: int) -> int:
    # Before the snapshot exists (the handshake): a stop from here on cancels the session at its
    # first await, which ends the run aborted.
    main_task = cancel_on_stop_signals()
    resolved = LaunchPlan.from_plain(spec.plan)
    plan, sources, messages = telemetry_for_run(resolved)
    pipe = PipeWriter(events_fd, backlog_limit(plan.profile.run.limits))
    note = functools.partial(_print_message, secrets=run_secrets(plan.profile))
    session = Session(
        plan.profile,
        plan.suites,
        Path(spec.out_root),
        subscribers=[pipe],
        gpu_sources=sources,
        on_message=note,
        run_id=spec.run_id,
    )
    try:
        session.open()
    except SnapshotError as error:
        print(error, file=sys.stderr, flush=True)
        return exit_codes.USAGE
    for message in messages:
        note(message)
    print(json.dumps({"snapshot": str(session.snapshot_path)}), file=sys.stderr, flush=True)
    flusher = asyncio.create_task(pipe.flush_periodically())
    commands = (
        asyncio.create_task(_read_commands(session, main_task, spec.stop_when_stdin_closes))
        if _stdin_is_pipe()
        else None
    )
    try:
        result = await session.run()
    finally:
        flusher.cancel()
        if commands:
            commands.cancel()
        pipe.flush_all()
    # The UI prints these after it closes, as `run --headless` prints them after its tables.
    for line in result.down_summary().splitlines():
        note(line)
    return result.exit_code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nvfp4_tui.bench.worker")
    parser.add_argument("spec", help="the WorkerSpec as JSON, or @FILE that holds it")
    args = parser.parse_args(argv)
    spec = WorkerSpec(**taken(args.spec))
    # Events go to a duplicate of stdout so that a stray print cannot corrupt the stream.
    events_fd = os.dup(1)
    os.dup2(2, 1)
    return asyncio.run(_main(spec, events_fd))


if __name__ == "__main__":
    sys.exit(main())

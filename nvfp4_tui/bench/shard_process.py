"""One shard of a run as its own process: its endpoints' plans, events as JSON lines on stdout.

Started by ``bench.shards.ShardedRunner`` with a ``ShardSpec`` as its one argument. It records
nothing itself: its parent writes the snapshot. Commands arrive on stdin, one per line
(``pause``, ``resume``, ``stop``); stdin closing (the parent is gone) and SIGTERM stop it too.
A stop cancels the requests in flight and sends every event already made before it exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Iterable
from dataclasses import replace

from nvfp4_tui.bench.event_pipe import PipeWriter, backlog_limit
from nvfp4_tui.bench.handover import taken
from nvfp4_tui.bench.runner import Emit, Runner
from nvfp4_tui.bench.runner_process import cancel_on_stop_signals, obey_stdin
from nvfp4_tui.bench.shards import ShardSpec
from nvfp4_tui.config.keys import run_secrets
from nvfp4_tui.config.plan import LaunchPlan
from nvfp4_tui.core import exit_codes


def shard_runner(plan: LaunchPlan, endpoint_ids: Iterable[str], run_id: str, emit: Emit) -> Runner:
    """The runner of the plan's profile cut to this shard's endpoints. Its replies are scrubbed
    of every key of the whole run, the other shards' too."""
    mine = set(endpoint_ids)
    endpoints = tuple(e for e in plan.profile.endpoints if e.id in mine)
    profile = replace(plan.profile, endpoints=endpoints)
    return Runner(profile, plan.suites, run_id, emit, secrets=run_secrets(plan.profile))


async def _obey(runner: Runner, main_task: asyncio.Task) -> None:
    await obey_stdin(runner)
    main_task.cancel()  # "stop", or the parent went away


async def _main(spec: ShardSpec, events_fd: int) -> int:
    main_task = cancel_on_stop_signals()
    plan = LaunchPlan.from_plain(spec.plan)
    pipe = PipeWriter(events_fd, backlog_limit(plan.profile.run.limits))
    runner = shard_runner(plan, spec.endpoint_ids, spec.run_id, pipe)
    runner.contexts = spec.contexts
    flusher = asyncio.create_task(pipe.flush_periodically())
    commands = asyncio.create_task(_obey(runner, main_task))
    try:
        await runner.run_endpoints()
    except asyncio.CancelledError:
        return exit_codes.STOPPED
    finally:
        flusher.cancel()
        commands.cancel()
        pipe.flush_all()
    return exit_codes.OK


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    raw = taken(args[0])
    spec = ShardSpec(raw["plan"], tuple(raw["endpoint_ids"]), raw["run_id"], raw["contexts"])
    # Events go to a duplicate of stdout so that a stray print cannot corrupt the stream.
    events_fd = os.dup(1)
    os.dup2(2, 1)
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_main(spec, events_fd))
    return exit_codes.STOPPED


if __name__ == "__main__":
    sys.exit(main())

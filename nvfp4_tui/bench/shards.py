"""A run's endpoints shared out over worker processes, whose events come back as one stream.

One client process ingests a few hundred thousand stream chunks a second; a fleet of 64 busy
endpoints can send more. ``ShardedRunner`` is a ``Runner`` that runs no endpoint itself: it
starts ``python -m nvfp4_tui.bench.shard_process`` once per shard, each with its own event loop
and HTTP connections, reads their events (JSON lines, as the UI reads the worker's) and emits
them as its own, so the one snapshot writer and the one UI see a single run. It alone emits
RunStarted and RunFinished.

A shard process that dies (killed, out of memory) costs its own endpoints only: each one it had
not finished gets an ``error`` status saying so and counts as down; the other shards run on.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nvfp4_tui.bench.event_pipe import LineTooLong, event_lines, line_limit
from nvfp4_tui.bench.handover import discard, hand_over
from nvfp4_tui.bench.runner import Emit, Runner
from nvfp4_tui.config.plan import LaunchPlan
from nvfp4_tui.config.profile import Endpoint, Profile
from nvfp4_tui.config.suites import Suite
from nvfp4_tui.core.events import EndpointStatus, Event, decode
from nvfp4_tui.core.plain_text import one_line

# One process keeps up with about this many busy endpoints before its loop is the bottleneck.
ENDPOINTS_PER_WORKER = 16
SHARD_STOP_WAIT_S = 20.0  # a stopped shard writes what it finished; then it is killed
_FINAL = frozenset({"done", "down"})


def worker_count(requested: int | None, endpoints: int, cores: int | None = None) -> int:
    """How many runner processes a run of ``endpoints`` gets: ``requested`` (never more than
    one per endpoint), else one per ``ENDPOINTS_PER_WORKER`` endpoints while a core is left for
    the process that records and shows the run."""
    if requested is not None:
        return max(1, min(requested, endpoints))
    spare_cores = max(1, (cores or os.cpu_count() or 1) - 1)
    return max(1, min(math.ceil(endpoints / ENDPOINTS_PER_WORKER), spare_cores))


def share_out(endpoints: Sequence[Endpoint], workers: int) -> list[tuple[str, ...]]:
    """Endpoint ids dealt round-robin over ``workers`` shards, so that each shard gets a share
    of every node and of the fast and slow endpoints alike; no shard is empty."""
    shards = [tuple(e.id for e in endpoints[i::workers]) for i in range(workers)]
    return [shard for shard in shards if shard]


@dataclass(frozen=True)
class ShardSpec:
    """What one shard process is handed, as JSON."""

    plan: dict[str, Any]  # LaunchPlan.to_plain()
    endpoint_ids: tuple[str, ...]
    run_id: str
    contexts: dict[str, int]  # Runner.contexts: each endpoint's max_model_len, where it said


class _Shard:
    """One running shard process and the endpoints it has not finished yet."""

    def __init__(self, number: int, process: asyncio.subprocess.Process, ids: Sequence[str]):
        self.number = number
        self.process = process
        self.unfinished = dict.fromkeys(ids)

    def tell(self, command: str) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing() or self.process.returncode is not None:
            return
        with contextlib.suppress(OSError):
            stdin.write(command.encode() + b"\n")


class ShardedRunner(Runner):
    """A Runner whose endpoints run in ``workers`` processes (see the module's docstring)."""

    def __init__(
        self, profile: Profile, suites: dict[str, Suite], run_id: str, emit: Emit, workers: int
    ) -> None:
        super().__init__(profile, suites, run_id, emit)
        self.workers = workers
        self._shards: list[_Shard] = []
        self._handed: list[str] = []  # each shard's spec argument (hand_over)

    def pause(self) -> None:
        self._paused = True
        for shard in self._shards:
            shard.tell("pause")

    def resume(self) -> None:
        self._paused = False
        for shard in self._shards:
            shard.tell("resume")

    async def run_endpoints(self) -> None:
        try:
            await self._start_shards()
            readers = [asyncio.create_task(self._follow(shard)) for shard in self._shards]
            try:
                await asyncio.gather(*readers)
            except asyncio.CancelledError:
                # Each shard cancels its requests and sends what it finished; then it is gone.
                for shard in self._shards:
                    shard.tell("stop")
                await asyncio.wait(readers, timeout=SHARD_STOP_WAIT_S)
                for task in readers:
                    task.cancel()
                await asyncio.gather(*readers, return_exceptions=True)
                raise
        finally:
            for shard in self._shards:
                await _ended(shard.process)
            for spec in self._handed:
                discard(spec)

    async def _start_shards(self) -> None:
        plan = LaunchPlan(self.profile, self.suites).to_plain()
        for number, ids in enumerate(share_out(self.profile.endpoints, self.workers)):
            spec = hand_over(ShardSpec(plan, ids, self.run_id, self.contexts).__dict__)
            self._handed.append(spec)
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "nvfp4_tui.bench.shard_process",
                spec,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                # Its stop comes from this process (a command, or its stdin closing), never from
                # the terminal's Ctrl-C, which this process turns into an orderly stop.
                start_new_session=True,
            )
            self._shards.append(_Shard(number, process, ids))
            if self._paused:
                self._shards[-1].tell("pause")

    async def _follow(self, shard: _Shard) -> None:
        """Emit a shard's events as they come; when it ends, account for what it left."""
        stdout = shard.process.stdout
        assert stdout is not None
        try:
            async for lines in event_lines(stdout, line_limit(self.profile.run.limits)):
                for line in lines:
                    self._take(shard, decode(line))
        except (LineTooLong, ValueError, KeyError, TypeError) as error:  # not an event
            self._lose(shard, f"sent a line that is not an event ({one_line(str(error))})")
            shard.process.kill()
            return
        code = await shard.process.wait()
        if shard.unfinished:
            self._lose(shard, f"exited ({_exit_words(code)})")

    def _take(self, shard: _Shard, event: Event) -> None:
        if isinstance(event, EndpointStatus) and event.status in _FINAL:
            shard.unfinished.pop(event.endpoint_id, None)
            if event.status == "down":
                self.down[event.endpoint_id] = event.message or "down"
        self.emit(event)

    def _lose(self, shard: _Shard, what: str) -> None:
        """Its unfinished endpoints end in error: recorded, and the run goes on without them."""
        why = f"its worker process {shard.number + 1} of {len(self._shards)} {what}"
        for endpoint_id in shard.unfinished:
            self.down[endpoint_id] = why
            self.emit(EndpointStatus(time.time(), endpoint_id, "error", why))
        shard.unfinished.clear()


def _exit_words(code: int) -> str:
    return f"killed by signal {-code}" if code < 0 else f"exit code {code}"


async def _ended(process: asyncio.subprocess.Process) -> None:
    """The process reaped, killed first when it outlived its stop."""
    if process.returncode is None:
        try:
            await asyncio.wait_for(process.wait(), SHARD_STOP_WAIT_S)
        except TimeoutError:
            process.kill()
            await process.wait()
    if process.stdin is not None:
        process.stdin.close()

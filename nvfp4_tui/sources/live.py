"""A live run: the worker process started by the UI, its events read from a pipe."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path

from nvfp4_tui.bench.event_pipe import event_lines
from nvfp4_tui.bench.handover import discard, discarded_on_failure, hand_over
from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.core.events import Event, decode
from nvfp4_tui.sources.base import Capabilities, SourceStatus

STOP_WAIT_S = 20.0


class LiveSource:
    """Starts ``python -m nvfp4_tui.bench.worker`` and yields the events it streams."""

    capabilities = Capabilities(pause_sending=True, stops_run=True, ends_with_run=True)
    warnings: Sequence[str] = ()  # the worker writes the snapshot; it reads none

    def __init__(self, spec: WorkerSpec, log_path: Path | None = None) -> None:
        # The worker lives in its own session: when this process dies (an SSH drop), the
        # closed pipe is what tells it to stop.
        self.spec = replace(spec, stop_when_stdin_closes=True)
        self.log_path = log_path
        self.process: asyncio.subprocess.Process | None = None
        self.snapshot_path: Path | None = None
        self.messages: list[str] = []
        self._stderr_task: asyncio.Task | None = None
        self._handed = ""  # the spec's argument (hand_over), removed when the worker is gone

    async def start(self) -> None:
        # A worker that fails to start leaves no process for close() to wait on: its spec goes now.
        with discarded_on_failure(hand_over(self.spec.__dict__)) as self._handed:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "nvfp4_tui.bench.worker",
                self._handed,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=16 * 1024 * 1024,
                start_new_session=True,  # Ctrl-C in the terminal reaches the UI, which stops it
            )
        self._stderr_task = asyncio.create_task(self._read_stderr())

    async def _read_stderr(self) -> None:
        assert self.process and self.process.stderr
        while line := await self.process.stderr.readline():
            text = line.decode(errors="replace").rstrip()
            if text.startswith('{"snapshot"'):
                self.snapshot_path = Path(json.loads(text)["snapshot"])
            elif text:
                self.messages.append(text)

    def clock(self) -> float:
        return time.time()

    def status(self) -> SourceStatus:
        return SourceStatus()

    async def batches(self) -> AsyncIterator[list[Event]]:
        if self.process is None:
            await self.start()
        assert self.process and self.process.stdout
        async for lines in event_lines(self.process.stdout, self.spec.event_line_limit()):
            yield [decode(line) for line in lines]

    async def command(self, name: str) -> None:
        """``pause``, ``resume`` or ``stop``, passed to the worker."""
        if self.process and self.process.stdin and self.process.returncode is None:
            try:
                self.process.stdin.write(name.encode() + b"\n")
                await self.process.stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                pass

    async def wait(self) -> int:
        assert self.process
        return await self.process.wait()

    async def close(self) -> None:
        """Stop the run (if still going) and wait until its snapshot is final."""
        if self.process is None:
            return
        if self.process.returncode is None:
            await self.command("stop")
            try:
                await asyncio.wait_for(self.process.wait(), STOP_WAIT_S)
            except TimeoutError:
                self.process.terminate()
                await self.process.wait()
        discard(self._handed)
        if self._stderr_task:
            await self._stderr_task

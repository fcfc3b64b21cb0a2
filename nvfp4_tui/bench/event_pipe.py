"""The event pipe out of a runner process: events as JSON lines, written without ever blocking.

The UI's worker process (``bench.worker``) writes one to the UI, and each shard process of a run
with several workers (``bench.shard_process``) one to its parent. This module stays light (no
snapshot store, no telemetry): a shard process imports it at start-up.
"""

from __future__ import annotations

import asyncio
import os

from nvfp4_tui.core.events import Event, encode

PIPE_FLUSH_S = 0.05
PIPE_BACKLOG_MAX_BYTES = 64 * 1024 * 1024


class PipeWriter:
    """Buffers encoded events and writes them to a file descriptor a few times a second.

    The descriptor is non-blocking: a UI that stops reading for a while (a long render, a
    suspended terminal) must not stall this loop, which times the tokens. What it has not read
    waits here, up to ``PIPE_BACKLOG_MAX_BYTES``; beyond that the UI is given up on, as when it
    goes away, and the run and its snapshot carry on.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer: list[bytes] = []
        self.unsent = b""
        self.broken = False
        os.set_blocking(fd, False)

    def __call__(self, event: Event) -> None:
        if not self.broken:
            self.buffer.append(encode(event))

    def flush(self) -> None:
        if self.broken or not (self.buffer or self.unsent):
            return
        data, self.buffer = self.unsent + b"".join(self.buffer), []
        try:
            while data:
                written = os.write(self.fd, data)
                data = data[written:]
        except BlockingIOError:
            pass  # the reader is behind: the rest goes on a later tick
        except OSError:  # BrokenPipeError included: the UI went away
            self.broken, data = True, b""
        if len(data) > PIPE_BACKLOG_MAX_BYTES:
            self.broken, data = True, b""
        self.unsent = data

    def flush_all(self) -> None:
        """The last flush, at the end of the run: everything, waiting for the reader if need be."""
        if not self.broken:
            os.set_blocking(self.fd, True)
        self.flush()

    async def flush_periodically(self) -> None:
        while True:
            await asyncio.sleep(PIPE_FLUSH_S)
            self.flush()

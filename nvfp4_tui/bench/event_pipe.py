"""The event pipe out of a runner process: events as JSON lines, written without ever blocking
and read in batches.

The UI's worker process (``bench.worker``) writes one to the UI, and each shard process of a run
with several workers (``bench.shard_process``) one to its parent. This module stays light (no
snapshot store, no telemetry): a shard process imports it at start-up.

A line holds one event, and a ``RequestFinished`` holds the answer's text, so how long a line can
be follows from the run's reply limits, not from a fixed buffer: ``events.encode`` writes JSON
with ``ensure_ascii=False``, which at worst spends six bytes on a byte of text (a control
character as ``\\u00XX``), and answer, reasoning and tool-call text together stay within
``max_answer_bytes``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

from nvfp4_tui.config.profile import ReplyLimits
from nvfp4_tui.core.events import Event, encode

PIPE_FLUSH_S = 0.05
PIPE_BACKLOG_MAX_BYTES = 64 * 1024 * 1024
JSON_BYTES_PER_TEXT_BYTE = 6
OTHER_FIELDS_BYTES = 1 << 20  # ids, numbers, messages and score details, each cut far below
READ_BYTES = 1 << 16


def line_limit(limits: ReplyLimits) -> int:
    """The longest line one event of a run with these reply limits can take."""
    return JSON_BYTES_PER_TEXT_BYTE * limits.max_answer_bytes + OTHER_FIELDS_BYTES


def backlog_limit(limits: ReplyLimits) -> int:
    """What a writer keeps for a reader that is behind: a usual backlog beside the longest
    line."""
    return PIPE_BACKLOG_MAX_BYTES + line_limit(limits)


class LineTooLong(Exception):
    """A line past ``line_limit``: no event the run's limits allow is that long."""


class PipeWriter:
    """Buffers encoded events and writes them to a file descriptor a few times a second.

    The descriptor is non-blocking: a UI that stops reading for a while (a long render, a
    suspended terminal) must not stall this loop, which times the tokens. What it has not read
    waits here, up to ``backlog_max_bytes`` (``backlog_limit``); beyond that the UI is given up
    on, as when it goes away, and the run and its snapshot carry on.
    """

    def __init__(self, fd: int, backlog_max_bytes: int) -> None:
        self.fd = fd
        self.backlog_max_bytes = backlog_max_bytes
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
        if len(data) > self.backlog_max_bytes:
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


async def event_lines(stream: asyncio.StreamReader, limit: int) -> AsyncIterator[list[bytes]]:
    """The complete lines of ``stream``, a batch per read, until it ends; a line that grows past
    ``limit`` bytes raises ``LineTooLong``. What follows the last newline when the stream ends
    (a writer killed mid-line) is dropped."""
    pending = bytearray()
    while chunk := await stream.read(READ_BYTES):
        searched = len(pending)  # a long line is searched for its end once, not once a read
        pending += chunk
        end = pending.rfind(b"\n", searched)
        if end < 0:
            if len(pending) > limit:
                raise LineTooLong(f"a line over {limit} bytes")
            continue
        lines = bytes(pending[:end]).split(b"\n")
        del pending[: end + 1]
        if len(pending) > limit or any(len(line) > limit for line in lines):
            raise LineTooLong(f"a line over {limit} bytes")
        yield [line for line in lines if line]

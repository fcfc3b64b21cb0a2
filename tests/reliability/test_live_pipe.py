"""The worker's event pipe never stalls the run: a UI that stops reading costs it nothing.

The worker times tokens on its own loop; if a blocking write to a full pipe could stop that loop,
a UI busy for a second (or a suspended terminal) would show up as slow tokens.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest

from nvfp4_tui.bench.event_pipe import (
    PIPE_BACKLOG_MAX_BYTES,
    READ_BYTES,
    LineTooLong,
    PipeWriter,
    event_lines,
    line_limit,
)
from nvfp4_tui.config.profile import ReplyLimits
from nvfp4_tui.core.events import EndpointStatus, decode

EVENTS = 5000  # several times what a pipe's buffer holds


def _read_all(fd: int, into: list[bytes]) -> None:
    while chunk := os.read(fd, 1 << 16):
        into.append(chunk)


def test_a_reader_that_stops_reading_never_blocks_the_writer() -> None:
    read_fd, write_fd = os.pipe()
    pipe = PipeWriter(write_fd, PIPE_BACKLOG_MAX_BYTES)
    sent = [EndpointStatus(float(i), f"gpu{i % 7}", "running", "x" * 40) for i in range(EVENTS)]
    started = time.monotonic()
    for event in sent:
        pipe(event)
        if len(pipe.buffer) >= 100:
            pipe.flush()  # nobody reads yet: this must return, not wait
    pipe.flush()
    assert time.monotonic() - started < 5  # generous: a blocking write would never return
    assert pipe.unsent and not pipe.broken
    received: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(read_fd, received))
    reader.start()
    pipe.flush_all()  # at the end of the run: everything, now that someone reads
    os.close(write_fd)
    reader.join(timeout=10)
    os.close(read_fd)
    lines = b"".join(received).splitlines()
    assert [decode(line) for line in lines] == sent


def test_a_reader_gone_for_good_is_given_up_on() -> None:
    read_fd, write_fd = os.pipe()
    pipe = PipeWriter(write_fd, 256 * 1024)
    try:
        for i in range(EVENTS):
            pipe(EndpointStatus(float(i), "gpu0", "running", "y" * 100))
            pipe.flush()
        assert pipe.broken and pipe.unsent == b""  # memory is not held for a dead reader
        pipe(EndpointStatus(0.0, "gpu0", "done"))
        assert pipe.buffer == []
    finally:
        os.close(read_fd)
        os.close(write_fd)


async def _lines_of(reads: list[bytes], limit: int) -> list[list[bytes]]:
    stream = asyncio.StreamReader()
    for data in reads:
        stream.feed_data(data)
    stream.feed_eof()
    return [batch async for batch in event_lines(stream, limit)]


async def test_lines_come_whole_however_the_reads_cut_them() -> None:
    long_line = b"x" * (3 * READ_BYTES)  # spans several reads
    batches = await _lines_of(
        [b'{"a":1}\n{"b"', b":2}\n" + long_line, b"\ncut-off"], 4 * READ_BYTES
    )
    assert [line for batch in batches for line in batch] == [b'{"a":1}', b'{"b":2}', long_line]


async def test_a_line_past_what_any_event_can_take_is_refused() -> None:
    with pytest.raises(LineTooLong):
        await _lines_of([b"y" * (2 * READ_BYTES)], READ_BYTES)
    assert line_limit(ReplyLimits(max_answer_bytes=1000)) == 6000 + (1 << 20)

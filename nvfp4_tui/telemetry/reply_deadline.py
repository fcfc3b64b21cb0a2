"""Reading a telemetry reply whole within a deadline.

urllib's ``timeout`` bounds each read, not the reply: a server that drips a byte a second never
trips it, and its source's thread waits for as long as the server likes. ``read_within`` reads one
socket read at a time and gives up once the whole reply has taken longer than its deadline, so
a read can overrun the deadline by one per-read timeout at most.
"""

from __future__ import annotations

import time
from typing import Protocol

# A DCGM exporter or Prometheus answers in milliseconds; a reply still coming after this is late
# enough that its samples would mislead.
REPLY_DEADLINE_S = 3.0
CHUNK_BYTES = 64 << 10


class ReplyTooSlow(TimeoutError):
    """The reply did not arrive whole within its deadline."""


class _Reply(Protocol):
    def read1(self, n: int = -1, /) -> bytes: ...


def read_within(reply: _Reply, max_bytes: int, deadline_s: float, *, started: float) -> bytes:
    """The reply's body, or its first ``max_bytes + 1`` bytes when it is longer (the caller says
    what is too long); ReplyTooSlow once ``deadline_s`` has passed since ``started``
    (``time.monotonic``, taken before the request was sent)."""
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        if time.monotonic() - started > deadline_s:
            raise ReplyTooSlow(f"reply not whole within {deadline_s:g} s ({size} bytes by then)")
        chunk = reply.read1(min(CHUNK_BYTES, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)

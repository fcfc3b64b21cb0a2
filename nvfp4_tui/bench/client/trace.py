"""The send clock: an aiohttp trace hook stamps when a request's bytes go to the socket.

TTFT and E2E start there, so taking or opening a pooled connection (TCP and TLS set-up included)
is the client's time, not the endpoint's; it is recorded beside them as ``setup_s``.
"""

from __future__ import annotations

from time import perf_counter
from types import SimpleNamespace

import aiohttp


class SendClock:
    """When one attempt's request went to the socket; stamped by ``_on_request_bytes``."""

    __slots__ = ("sent_at",)

    def __init__(self) -> None:
        self.sent_at: float | None = None


async def _on_request_bytes(
    _session: aiohttp.ClientSession, context: SimpleNamespace, _params: object
) -> None:
    # aiohttp calls this right before each body write, the first of which carries the
    # buffered request head too; only the first write starts the clock.
    clock = context.trace_request_ctx
    if isinstance(clock, SendClock) and clock.sent_at is None:
        clock.sent_at = perf_counter()


def send_clock_trace() -> aiohttp.TraceConfig:
    trace = aiohttp.TraceConfig()
    trace.on_request_chunk_sent.append(_on_request_bytes)
    return trace

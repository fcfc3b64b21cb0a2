"""The server's own view (its /metrics) beside the client's, as the detail screen charts it: the
server's load over the run, and how much of the client's time to first token the server saw.

Pure functions of EndpointState, so they are tested without an app.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from nvfp4_tui.state import EndpointState, ServerPoint, TtftPoint
from nvfp4_tui.stats import percentile

# The client's TTFT at least this many times the server's, and longer by at least this much, is
# time lost outside the server (network, proxies, the client's own queue). The floor keeps a few
# milliseconds of network on a fast first token from reading as a bottleneck.
CLIENT_BOUND_RATIO = 2.0
CLIENT_BOUND_MIN_S = 0.05

Point = TypeVar("Point", ServerPoint, TtftPoint)


@dataclass(frozen=True, slots=True)
class TtftComparison:
    """Median TTFT as the client measured it and as the server reported it, over one span."""

    since_t: float | None  # where the span both histories cover starts; None: nothing to compare
    client_p50_s: float | None
    server_p50_s: float | None

    @property
    def outside_server_s(self) -> float | None:
        """The part of the client's median TTFT the server did not see."""
        if self.client_p50_s is None or self.server_p50_s is None:
            return None
        return self.client_p50_s - self.server_p50_s

    @property
    def client_bound(self) -> bool:
        """True when the client waits far longer for a first token than the server takes."""
        gap = self.outside_server_s
        return (
            gap is not None
            and self.server_p50_s is not None
            and gap >= CLIENT_BOUND_MIN_S
            and self.client_p50_s is not None
            and self.client_p50_s >= CLIENT_BOUND_RATIO * self.server_p50_s
        )


def ttft_comparison(endpoint: EndpointState) -> TtftComparison:
    """Client and server TTFT p50 over the span both rings still hold. The server's is the median
    of its scrapes' p50s, each over the first tokens of one scrape interval (from bucket deltas);
    scrapes in which no request got its first token have none and do not count."""
    server = [(p.t, p.ttft_p50_s) for p in endpoint.server_history if p.ttft_p50_s is not None]
    client = endpoint.ttft_history
    if not server or not client:
        return TtftComparison(None, None, None)
    since_t = max(server[0][0], client[0].t)
    return TtftComparison(
        since_t,
        percentile((p.ttft_s for p in client if p.t >= since_t), 50),
        percentile((ttft_s for t, ttft_s in server if t >= since_t), 50),
    )


def timeline(
    points: Iterable[Point],
    start_t: float,
    value: Callable[[Point], float | None],
    scale: float = 1.0,
) -> tuple[list[float], list[float]]:
    """Seconds since ``start_t`` and ``value`` times ``scale`` of the points that have a finite
    value (a damaged snapshot can hold NaN or infinite ones; plotext cannot scale to them)."""
    xs: list[float] = []
    ys: list[float] = []
    for point in points:
        y = value(point)
        if y is not None and math.isfinite(y) and math.isfinite(point.t):
            xs.append(point.t - start_t)
            ys.append(y * scale)
    return xs, ys

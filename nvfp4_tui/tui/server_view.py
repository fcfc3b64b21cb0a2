"""The server's own view (its /metrics) beside the client's, as the detail screen charts it: the
server's load over the run, and how much of the client's time to first token the server saw.

Pure functions of EndpointState, so they are tested without an app.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from nvfp4_tui.core.endpoint_state import EndpointState
from nvfp4_tui.core.readouts import ServerPoint, TtftPoint

# The client's mean TTFT at least this many times the server's, and longer by at least this
# much, is time lost outside the server (network, proxies, the client's own queue). The floor
# keeps a few milliseconds of network on a fast first token from reading as a bottleneck.
CLIENT_BOUND_RATIO = 2.0
CLIENT_BOUND_MIN_S = 0.05

Point = TypeVar("Point", ServerPoint, TtftPoint)


@dataclass(frozen=True, slots=True)
class TtftComparison:
    """TTFT as the client measured it and as the server reported it, over one span. Means are
    compared because the server's histogram gives its mean exactly and its median only as the
    bucket it lies in, (``server_p50_low_s``, ``server_p50_high_s``]; high None: no upper bound."""

    since_t: float | None  # where the span both histories cover starts; None: nothing to compare
    client_mean_s: float | None
    server_mean_s: float | None
    server_p50_low_s: float | None = None
    server_p50_high_s: float | None = None

    @property
    def outside_server_s(self) -> float | None:
        """The part of the client's mean TTFT the server did not see."""
        if self.client_mean_s is None or self.server_mean_s is None:
            return None
        return self.client_mean_s - self.server_mean_s

    @property
    def client_bound(self) -> bool:
        """True when the client waits far longer for a first token than the server takes."""
        gap = self.outside_server_s
        return (
            gap is not None
            and self.server_mean_s is not None
            and gap >= CLIENT_BOUND_MIN_S
            and self.client_mean_s is not None
            and self.client_mean_s >= CLIENT_BOUND_RATIO * self.server_mean_s
        )


def ttft_comparison(endpoint: EndpointState) -> TtftComparison:
    """Client and server mean TTFT over the span both rings still hold, and the bucket range the
    server's p50 over that span lies in. The server's mean weighs each scrape's exact mean by its
    count of first tokens; scrapes in which no request got its first token do not count.

    Each scrape's p50 bucket (low, high] holds at least half its first tokens at or below high,
    and more than half above low, so the p50 of all of them lies above the lowest low and at or
    below the highest high: exact when the scrapes agree, wider when they straddle a bucket edge.
    """
    # Per scrape: when, its first tokens' summed TTFT and their count, its p50 bucket.
    server = [
        (p.t, p.ttft_mean_s * p.ttft_count, p.ttft_count, p.ttft_p50_low_s, p.ttft_p50_high_s)
        for p in endpoint.server_history
        if p.ttft_count and p.ttft_mean_s is not None and math.isfinite(p.ttft_mean_s)
    ]
    client = endpoint.ttft_history
    if not server or not client:
        return TtftComparison(None, None, None)
    since_t = max(server[0][0], client[0].t)
    client_s = [p.ttft_s for p in client if p.t >= since_t]
    server_total_s = 0.0
    first_tokens = 0
    lows: list[float] = []
    highs: list[float | None] = []
    for t, total_s, count, low_s, high_s in server:
        if t < since_t:
            continue
        server_total_s += total_s
        first_tokens += count
        if low_s is not None:
            lows.append(low_s)
            highs.append(high_s)
    return TtftComparison(
        since_t,
        statistics.fmean(client_s) if client_s else None,
        server_total_s / first_tokens if first_tokens else None,
        min(lows, default=None),
        # One scrape's p50 above the top finite bucket leaves the span's unbounded too.
        None if None in highs else max((h for h in highs if h is not None), default=None),
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

"""The timings of a set of requests (a leaderboard cell, or one endpoint's load level): the
decode rate pooled over them with the median of their own rates, and their TTFT median.

Pooled decode tok/s is every request's tokens after its first chunk over every request's
seconds from its first chunk to its end: Σ (tokens_out − k) / Σ (e2e − ttft), the live pane's
definition too (``EndpointState.live_decode_tps`` pools a window's stream-seconds the same way).
A mean of per-request rates is not: one answer a server held back and then sent in 54 ms reads
4576 tok/s and moves such a mean tenfold, while it adds 54 ms to the pooled seconds. A request
whose own rate is more than ``OUTLIER_FACTOR`` times its level's median is marked where shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nvfp4_tui.core.stats import QuantileSketch, finite

# A request decoding this many times faster than its level's median did not decode that fast:
# its server held the answer back and sent it in a burst (or the clock between them lied).
OUTLIER_FACTOR = 10.0


@dataclass(frozen=True, slots=True)
class DecodeRate:
    """Decode tok/s of a set of requests: pooled, and the median of the requests' own rates."""

    pooled_tps: float | None  # Σ decode tokens / Σ decode seconds
    p50_tps: float | None  # the median request's own rate
    n: int  # requests with a decode rate
    tokens: float  # Σ (tokens_out − first chunk's tokens)
    seconds: float  # Σ (e2e − ttft)


def decode_span(e2e_s: float | None, ttft_s: float | None, decode_tps: float | None) -> float:
    """The seconds a request spent decoding (e2e − ttft), 0 when it has no decode rate: the
    rate's own denominator, so rate × span gives back the tokens it was computed from."""
    e2e, ttft, rate = finite(e2e_s), finite(ttft_s), finite(decode_tps)
    if e2e is None or ttft is None or rate is None or e2e <= ttft:
        return 0.0
    return e2e - ttft


def pooled(parts: Iterable[DecodeRate]) -> float | None:
    """The pooled rate of several sets together (each weighed by its decode seconds)."""
    tokens = seconds = 0.0
    for part in parts:
        tokens += part.tokens
        seconds += part.seconds
    return tokens / seconds if seconds > 0 else None


def is_outlier(decode_tps: float | None, level_p50_tps: float | None) -> bool:
    """Whether a request's own rate is more than ``OUTLIER_FACTOR`` times its level's median."""
    rate = finite(decode_tps)
    return (
        rate is not None
        and level_p50_tps is not None
        and level_p50_tps > 0
        and rate > OUTLIER_FACTOR * level_p50_tps
    )


class RequestTimings:
    """TTFT and decode of the timed requests of a set: fed one request at a time (live) or a
    cell's rows at once (a snapshot), read the same way."""

    __slots__ = ("_decode_s", "_decode_tokens", "_decode_tps", "ttft")

    def __init__(self) -> None:
        self.ttft = QuantileSketch()
        self._decode_tps = QuantileSketch()
        self._decode_tokens = 0.0
        self._decode_s = 0.0

    def add(self, ttft_s: float | None, e2e_s: float | None, decode_tps: float | None) -> None:
        if (ttft := finite(ttft_s)) is not None:
            self.ttft.add(ttft)
        span = decode_span(e2e_s, ttft_s, decode_tps)
        if span > 0 and (rate := finite(decode_tps)) is not None:
            self._decode_tps.add(rate)
            self._decode_tokens += rate * span
            self._decode_s += span

    def add_many(
        self,
        ttft_s: Sequence[float],
        decode_tps: Sequence[float],
        decode_tokens: float,
        decode_s: float,
    ) -> None:
        """Many requests at once: their TTFTs and decode rates, and the sums of their decode
        tokens and seconds (``decode_span``)."""
        self.ttft.add_many(ttft_s)
        self._decode_tps.add_many(decode_tps)
        self._decode_tokens += decode_tokens
        self._decode_s += decode_s

    @property
    def ttft_p50_s(self) -> float | None:
        return self.ttft.quantile(50)

    def decode(self) -> DecodeRate:
        seconds = self._decode_s
        return DecodeRate(
            pooled_tps=self._decode_tokens / seconds if seconds > 0 else None,
            p50_tps=self._decode_tps.quantile(50),
            n=self._decode_tps.n,
            tokens=self._decode_tokens,
            seconds=seconds,
        )

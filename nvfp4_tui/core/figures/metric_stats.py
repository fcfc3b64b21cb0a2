"""Every statistic of every per-request metric, per endpoint and load level: n, mean, std, min,
max, p50, p90, p95, p99 of TTFT, time to second token, TTFA, TPOT, each request's ITL median,
E2E, decode, E2E and prefill tok/s, and input and output tokens.

The rows counted are the timed ones of every other timing figure (``figures.leaderboard``):
neither errors nor warm-up or cool-down rows. The live state adds rows one at a time
(``add_request``), the report a column's values per level (``add_values``); both fill the same
accumulators, so the detail screen's table and the report's JSON are one computation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from nvfp4_tui.core.events import RequestFinished
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.stats import QuantileSketch, RunningStats, finite

Unit = Literal["s", "tok/s", "tokens"]


@dataclass(frozen=True, slots=True)
class Metric:
    column: str  # the requests table's column
    label: str
    unit: Unit


METRICS: tuple[Metric, ...] = (
    Metric("ttft_s", "TTFT", "s"),
    Metric("ttst_s", "TT 2nd token", "s"),
    Metric("ttfa_s", "TTFA", "s"),
    Metric("tpot_s", "TPOT", "s"),
    Metric("itl_p50_s", "ITL (req. p50)", "s"),
    Metric("e2e_s", "E2E", "s"),
    Metric("decode_tps", "decode tok/s", "tok/s"),
    Metric("e2e_tps", "E2E tok/s", "tok/s"),
    Metric("prefill_tps", "prefill tok/s", "tok/s"),
    Metric("tokens_in", "input tokens", "tokens"),
    Metric("tokens_out", "output tokens", "tokens"),
)
STATISTICS = ("n", "mean", "std", "min", "max", "p50", "p90", "p95", "p99")
QUANTILES = (50.0, 90.0, 95.0, 99.0)


@dataclass(frozen=True, slots=True)
class MetricSummary:
    metric: Metric
    n: int
    mean: float | None
    std: float | None  # the sample std (n − 1)
    min: float | None
    max: float | None
    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None


class _Accumulator:
    __slots__ = ("high", "low", "moments", "sketch")

    def __init__(self) -> None:
        self.moments = RunningStats()
        self.sketch = QuantileSketch()  # the leaderboard's cap: the same p50 in both
        self.low = math.inf
        self.high = -math.inf

    def add(self, value: float) -> None:
        self.moments.add(value)
        self.sketch.add(value)
        self.low = min(self.low, value)
        self.high = max(self.high, value)

    def add_many(self, values: Sequence[float]) -> None:
        if not values:
            return
        for value in values:
            self.moments.add(value)
        self.sketch.add_many(values)
        self.low = min(self.low, min(values))
        self.high = max(self.high, max(values))

    def summary(self, metric: Metric) -> MetricSummary:
        n = self.moments.n
        quantiles = [self.sketch.quantile(q) for q in QUANTILES]
        return MetricSummary(
            metric,
            n,
            self.moments.mean if n else None,
            self.moments.std,
            self.low if n else None,
            self.high if n else None,
            *quantiles,
        )


def timed(status: str, trimmed: bool | None) -> bool:
    """Whether a row counts in timing figures: an answer (ok, or cut at max_tokens) outside the
    phase's warm-up and cool-down windows."""
    return status != "error" and not trimmed


class MetricStatsFold:
    """The accumulators of every metric per (endpoint id, load level)."""

    def __init__(self) -> None:
        self._cells: dict[tuple[str, Load], dict[str, _Accumulator]] = {}

    def _cell(self, endpoint_id: str, load: Load) -> dict[str, _Accumulator]:
        cell = self._cells.get((endpoint_id, load))
        if cell is None:
            cell = self._cells[(endpoint_id, load)] = {m.column: _Accumulator() for m in METRICS}
        return cell

    def add_request(self, row: RequestFinished, load: Load) -> None:
        if not timed(row.status, row.trimmed):
            return
        cell = self._cell(row.endpoint_id, load)
        for metric in METRICS:
            value = getattr(row, metric.column)
            value = finite(float(value)) if value is not None else None
            if value is not None:
                cell[metric.column].add(value)

    def add_values(
        self, endpoint_id: str, load: Load, column: str, values: Iterable[float | None]
    ) -> None:
        """A column's values of timed rows (the caller filtered them with ``timed``)."""
        kept = [v for v in (finite(x) for x in values if x is not None) if v is not None]
        self._cell(endpoint_id, load)[column].add_many(kept)

    def levels(self, endpoint_id: str | None = None) -> list[tuple[str, Load]]:
        return sorted(
            (key for key in self._cells if endpoint_id is None or key[0] == endpoint_id),
            key=lambda key: (key[0], key[1].order),
        )

    def summaries(self, endpoint_id: str, load: Load) -> tuple[MetricSummary, ...]:
        cell = self._cells.get((endpoint_id, load))
        if cell is None:
            return ()
        return tuple(cell[m.column].summary(m) for m in METRICS)

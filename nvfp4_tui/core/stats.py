"""Descriptive statistics shared by the state, the client and the reports: no knowledge of runs.

``percentile`` uses numpy's default definition (linear interpolation between the closest ranks),
so our p50/p95/p99 match vLLM ``bench serve`` and GuideLLM on the same samples. ``RunningStats``
keeps mean and variance in O(1) memory (Welford); ``QuantileSketch`` keeps exact quantiles up to a
cap, then a bounded log-bucketed histogram with a known relative error.
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

# Two-sided 95% quantiles of Student's t (the 0.975 quantile) for 1..30 degrees of freedom.
_T975: tuple[float, ...] = (
    12.70620474,
    4.30265273,
    3.18244631,
    2.77644511,
    2.57058184,
    2.44691185,
    2.36462425,
    2.30600414,
    2.26215716,
    2.22813885,
    2.20098516,
    2.17881283,
    2.16036866,
    2.14478669,
    2.13144955,
    2.11990530,
    2.10981558,
    2.10092204,
    2.09302405,
    2.08596345,
    2.07961384,
    2.07387307,
    2.06865761,
    2.06389856,
    2.05953855,
    2.05552944,
    2.05183052,
    2.04840714,
    2.04522964,
    2.04227246,
)
_Z975 = 1.959963984540054


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (95% two-sided).

    A table for df <= 30; beyond it the Cornish-Fisher expansion around the normal quantile,
    which stays within 1e-7 of the exact value there (a plain 1.96 would be 4% short at df=31).
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def _lerp(low: float, high: float, frac: float) -> float:
    # numpy's formulation: interpolating from the nearer end keeps the result inside [low, high]
    # and bit-identical to numpy.percentile.
    diff = high - low
    if frac >= 0.5:
        return high - diff * (1 - frac)
    return low + diff * frac


def _check_q(q: float) -> None:
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be within 0..100, got {q}")


def percentile_of_sorted(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0..100) of values already sorted ascending; None when empty."""
    _check_q(q)
    n = len(values)
    if n == 0:
        return None
    rank = (n - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, n - 1)
    return _lerp(values[low], values[high], rank - low)


def percentile(values: Iterable[float], q: float) -> float | None:
    """The ``q``-th percentile (0..100), numpy's default (linear) definition; None when empty."""
    return percentile_of_sorted(sorted(values), q)


def percentiles(values: Iterable[float], qs: Sequence[float]) -> tuple[float | None, ...]:
    """Several percentiles of the same values, sorting them once."""
    ordered = sorted(values)
    return tuple(percentile_of_sorted(ordered, q) for q in qs)


def peak(highest: float | None, value: float | None) -> float | None:
    """The higher of a running peak and a new value, either missing (None)."""
    if value is None:
        return highest
    return value if highest is None else max(highest, value)


def finite(x: float | None) -> float | None:
    """``x``, or None when it is missing, NaN or infinite: a NaN or inf from a broken server or
    clock must not poison means and percentiles."""
    return x if x is not None and math.isfinite(x) else None


def mean(values: Iterable[float]) -> float | None:
    """Arithmetic mean; None when empty. Uses an exactly rounded sum."""
    items = list(values)
    return math.fsum(items) / len(items) if items else None


def std(values: Iterable[float], ddof: int = 0) -> float | None:
    """Standard deviation with numpy's default ``ddof=0``; pass ``ddof=1`` for the sample std.

    None when there are not more than ``ddof`` values.
    """
    items = list(values)
    n = len(items)
    if n <= ddof:
        return None
    centre = math.fsum(items) / n
    return math.sqrt(math.fsum((x - centre) ** 2 for x in items) / (n - ddof))


@dataclass(frozen=True, slots=True)
class StatsSummary:
    """A read-out of ``RunningStats``: std is the sample std (n-1); CI bounds need n >= 3."""

    n: int
    mean: float | None
    std: float | None
    ci95_low: float | None
    ci95_high: float | None

    @property
    def ci95_half_width(self) -> float | None:
        return half_width(self.ci95_low, self.ci95_high)


def counter_increase(now: float | None, before: float | None) -> float | None:
    """How much a counter grew; a counter that went down was reset, so all of ``now`` is new."""
    if now is None or before is None:
        return None
    return now if now < before else now - before


def half_width(low: float | None, high: float | None) -> float | None:
    """Half an interval's width (the ± of a mean); None when either end is unknown."""
    if low is None or high is None:
        return None
    return (high - low) / 2


class RunningStats:
    """Count, mean and variance of a stream in O(1) memory (Welford's update)."""

    __slots__ = ("_m2", "mean", "n")

    # Fewer samples than this give a CI too wide to mean anything (t(1) = 12.7).
    CI_MIN_N = 3

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self._m2 = 0.0

    def add(self, x: float) -> None:
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self._m2 += delta * (x - self.mean)

    @classmethod
    def of_moments(cls, n: int, mean: float, m2: float) -> RunningStats:
        """An accumulator holding ``n`` samples of this mean and sum of squared deviations from
        it (the sample variance times n - 1), as a column's aggregates give them."""
        stats = cls()
        if n:
            stats.n, stats.mean, stats._m2 = n, mean, m2
        return stats

    @classmethod
    def merged(cls, parts: Iterable[RunningStats]) -> RunningStats:
        """One accumulator over the samples of several (Chan's pairwise update): the same mean
        and variance as adding every sample to one, without keeping them."""
        total = cls()
        for part in parts:
            if not part.n:
                continue
            if not total.n:  # the first part as it is: no rounding from a merge with nothing
                total.n, total.mean, total._m2 = part.n, part.mean, part._m2
                continue
            n = total.n + part.n
            delta = part.mean - total.mean
            total.mean += delta * part.n / n
            total._m2 += part._m2 + delta * delta * total.n * part.n / n
            total.n = n
        return total

    @property
    def variance(self) -> float | None:
        """Sample variance (n-1); None below two samples."""
        return self._m2 / (self.n - 1) if self.n >= 2 else None

    @property
    def std(self) -> float | None:
        """Sample standard deviation (n-1); None below two samples."""
        var = self.variance
        return math.sqrt(max(var, 0.0)) if var is not None else None

    def ci95(self) -> tuple[float, float] | None:
        """95% confidence interval of the mean by Student's t; None below ``CI_MIN_N`` samples."""
        sd = self.std
        if self.n < self.CI_MIN_N or sd is None:
            return None
        half = t_quantile_975(self.n - 1) * sd / math.sqrt(self.n)
        return (self.mean - half, self.mean + half)

    def summary(
        self, interval: Callable[[RunningStats], tuple[float, float] | None] | None = None
    ) -> StatsSummary:
        """Count, mean, std and a 95% interval of the mean: Student's t unless ``interval``
        gives another (a bounded score's)."""
        ci = self.ci95() if interval is None else interval(self)
        return StatsSummary(
            n=self.n,
            mean=self.mean if self.n else None,
            std=self.std,
            ci95_low=ci[0] if ci else None,
            ci95_high=ci[1] if ci else None,
        )


class QuantileSketch:
    """Quantiles of a stream in bounded memory: exact up to ``exact_cap`` values, then approximate.

    Exact mode keeps the values sorted, so ``quantile`` equals ``percentile`` on them. Past the cap
    the values fold into log-spaced buckets (as DDSketch does): every quantile is then within
    ``rel_error`` (relative) of a value near the exact rank, and memory grows with the log of the
    value range, not the count. Either way the result does not depend on the order of ``add``s.
    """

    __slots__ = ("_buckets", "_cum", "_gamma_log", "_rel_error", "_sorted", "exact_cap", "n")

    def __init__(self, exact_cap: int = 10_000, rel_error: float = 0.005) -> None:
        if exact_cap < 1 or not 0 < rel_error < 1:
            raise ValueError("exact_cap must be >= 1 and rel_error within (0, 1)")
        self.exact_cap = exact_cap
        self.n = 0
        self._rel_error = rel_error
        self._gamma_log = math.log((1 + rel_error) / (1 - rel_error))
        self._sorted: array[float] | None = array("d")
        # Bucket key -> count; keys sort in value order: (sign, index) with sign -1, 0, 1.
        self._buckets: dict[tuple[int, int], int] = {}
        self._cum: list[tuple[int, float]] | None = None  # cached (cumulative count, value)

    @property
    def exact(self) -> bool:
        return self._sorted is not None

    def add(self, x: float) -> None:
        self.n += 1
        if self._sorted is not None:
            bisect.insort(self._sorted, x)
            if len(self._sorted) > self.exact_cap:
                values, self._sorted = self._sorted, None
                for v in values:
                    self._bucket_add(v)
            return
        self._bucket_add(x)

    def add_many(self, values: Sequence[float]) -> None:
        """``add`` each of ``values``, in one sort (or one pass into buckets): the same state as
        adding them one by one, in any order."""
        if not values:
            return
        self.n += len(values)
        if self._sorted is not None and self.n <= self.exact_cap:
            self._sorted = array("d", sorted([*self._sorted, *values]))
            return
        if self._sorted is not None:
            kept, self._sorted = self._sorted, None
            for v in kept:
                self._bucket_add(v)
        for v in values:
            self._bucket_add(v)

    def _bucket_add(self, x: float) -> None:
        self._cum = None
        if x == 0:
            key = (0, 0)
        else:
            index = math.ceil(math.log(abs(x)) / self._gamma_log)
            # Larger magnitudes of negative values sort first.
            key = (1, index) if x > 0 else (-1, -index)
        self._buckets[key] = self._buckets.get(key, 0) + 1

    def _bucket_value(self, key: tuple[int, int]) -> float:
        sign, index = key
        if sign == 0:
            return 0.0
        gamma = math.exp(self._gamma_log)
        # The midpoint (in relative terms) of (gamma^(i-1), gamma^i].
        magnitude = 2 * math.exp(self._gamma_log * (index if sign > 0 else -index)) / (gamma + 1)
        return magnitude * sign

    def _value_at(self, rank: int) -> float:
        if self._cum is None:
            total = 0
            cum = []
            for key in sorted(self._buckets):
                total += self._buckets[key]
                cum.append((total, self._bucket_value(key)))
            self._cum = cum
        position = bisect.bisect_right(self._cum, (rank, math.inf))
        return self._cum[position][1]

    def quantile(self, q: float) -> float | None:
        """The ``q``-th percentile (0..100) with ``percentile``'s definition; None when empty."""
        if self._sorted is not None:
            return percentile_of_sorted(self._sorted, q)
        _check_q(q)
        rank = (self.n - 1) * q / 100
        low = math.floor(rank)
        high = min(low + 1, self.n - 1)
        return _lerp(self._value_at(low), self._value_at(high), rank - low)

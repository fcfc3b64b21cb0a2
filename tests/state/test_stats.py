"""Percentiles, Welford statistics, t quantiles and the quantile sketch against hand-worked values."""

from __future__ import annotations

import itertools
import math
import random
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nvfp4_tui.core.stats import (
    QuantileSketch,
    RunningStats,
    mean,
    percentile,
    percentile_of_sorted,
    percentiles,
    std,
    t_quantile_975,
)


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([1, 2, 3, 4], 50, 2.5),
        ([1, 2, 3, 4], 25, 1.75),
        ([1, 2, 3, 4], 90, 3.7),
        ([15, 20, 35, 40, 50], 40, 29.0),  # rank 1.6: 20 + 0.6 * 15
        ([3, 1, 2], 0, 1.0),
        ([3, 1, 2], 100, 3.0),
        ([7.5], 99, 7.5),
    ],
)
def test_percentile_is_linear_between_closest_ranks(values, q, expected) -> None:
    assert percentile(values, q) == pytest.approx(expected, abs=1e-12)


def test_percentile_edges() -> None:
    assert percentile([], 50) is None
    with pytest.raises(ValueError, match=r"0\.\.100"):
        percentile([1.0], 101)
    with pytest.raises(ValueError, match=r"0\.\.100"):
        percentile([1.0], -1)
    assert percentiles([4, 1, 3, 2], (0, 50, 100)) == (1, 2.5, 4)
    assert percentile_of_sorted([1.0, 2.0], 50) == 1.5


@given(st.lists(st.floats(0, 100, allow_nan=False), min_size=2, max_size=200))
def test_percentile_agrees_with_statistics_quantiles(values: list[float]) -> None:
    ordered = sorted(values)
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    for q, cut in ((50, cuts[49]), (95, cuts[94]), (99, cuts[98])):
        assert abs(percentile_of_sorted(ordered, q) - cut) <= 1e-9 * max(1.0, abs(cut))
    assert percentile_of_sorted([], 50) is None


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=50), st.floats(0, 100))
def test_percentile_stays_between_its_neighbours(values: list[float], q: float) -> None:
    ordered = sorted(values)
    rank = (len(values) - 1) * q / 100
    low, high = ordered[math.floor(rank)], ordered[math.ceil(rank)]
    result = percentile(values, q)
    assert result is not None
    assert low <= result <= high


def test_mean_and_std() -> None:
    values = [2, 4, 4, 4, 5, 5, 7, 9]
    assert mean(values) == 5.0
    assert std(values) == 2.0  # numpy's default, ddof=0
    assert std(values, ddof=1) == pytest.approx(math.sqrt(32 / 7))
    assert mean([]) is None
    assert std([1.0], ddof=1) is None


def test_running_stats_match_the_batch_formulas() -> None:
    rng = random.Random(3)
    values = [rng.gauss(100, 15) for _ in range(500)]
    stats = RunningStats()
    for v in values:
        stats.add(v)
    assert stats.n == 500
    assert stats.mean == pytest.approx(mean(values), rel=1e-12)
    assert stats.std == pytest.approx(std(values, ddof=1), rel=1e-9)


def test_ci95_uses_the_t_table() -> None:
    stats = RunningStats()
    for v in (1, 2, 3, 4, 5):
        stats.add(v)
    # mean 3, sample std sqrt(2.5), t(0.975, df=4) = 2.776 (printed t tables)
    half = 2.776445 * math.sqrt(2.5) / math.sqrt(5)
    low, high = stats.ci95() or (math.nan, math.nan)
    assert low == pytest.approx(3 - half, abs=1e-5)
    assert high == pytest.approx(3 + half, abs=1e-5)
    summary = stats.summary()
    assert summary.n == 5
    assert summary.mean == 3
    assert summary.ci95_half_width == pytest.approx(1.9632, abs=1e-4)


def test_ci_needs_three_samples() -> None:
    stats = RunningStats()
    assert stats.summary().mean is None
    stats.add(1.0)
    stats.add(2.0)
    assert stats.ci95() is None
    assert stats.summary().ci95_half_width is None
    assert stats.std == pytest.approx(math.sqrt(0.5))
    stats.add(3.0)
    assert stats.ci95() is not None


@pytest.mark.parametrize(
    ("df", "expected"),
    [(1, 12.706), (2, 4.303), (10, 2.228), (29, 2.045), (30, 2.042), (40, 2.021), (60, 2.000)],
)
def test_t_quantile_matches_printed_tables(df: int, expected: float) -> None:
    assert t_quantile_975(df) == pytest.approx(expected, abs=5e-4)


def test_t_quantile_beyond_the_table_is_smooth_and_tends_to_normal() -> None:
    # Exact values (to 8 digits) for df 31 and 120, and the normal quantile far out.
    assert t_quantile_975(31) == pytest.approx(2.03951345, abs=1e-6)
    assert t_quantile_975(120) == pytest.approx(1.97993041, abs=1e-6)
    assert t_quantile_975(10**6) == pytest.approx(1.959964, abs=1e-5)
    quantiles = [t_quantile_975(df) for df in range(1, 500)]
    assert all(a > b for a, b in itertools.pairwise(quantiles))
    with pytest.raises(ValueError):
        t_quantile_975(0)


def test_sketch_is_exact_below_its_cap() -> None:
    rng = random.Random(5)
    values = [rng.lognormvariate(0, 1) for _ in range(300)]
    sketch = QuantileSketch(exact_cap=300)
    for v in values:
        sketch.add(v)
    assert sketch.exact
    for q in (0, 10, 50, 95, 99, 100):
        assert sketch.quantile(q) == percentile(values, q)
    assert QuantileSketch().quantile(50) is None


def test_sketch_past_its_cap_stays_within_its_relative_error() -> None:
    rng = random.Random(11)
    values = [rng.lognormvariate(-1, 1.5) for _ in range(5000)]
    sketch = QuantileSketch(exact_cap=100, rel_error=0.01)
    for v in values:
        sketch.add(v)
    assert not sketch.exact
    assert sketch.n == 5000
    for q in (1, 25, 50, 75, 90, 99):
        exact = percentile(values, q)
        assert exact is not None
        assert sketch.quantile(q) == pytest.approx(exact, rel=0.0101)


@given(st.lists(st.floats(-1e3, 1e3), min_size=5, max_size=80), st.floats(0, 100))
def test_sketch_handles_signs_and_zero_in_any_order(values: list[float], q: float) -> None:
    forward, backward = QuantileSketch(exact_cap=2), QuantileSketch(exact_cap=2)
    for v in values:
        forward.add(v)
    for v in reversed(values):
        backward.add(v)
    assert forward.quantile(q) == backward.quantile(q)
    ordered = sorted(values)
    rank = (len(values) - 1) * q / 100
    low, high = ordered[math.floor(rank)], ordered[math.ceil(rank)]
    result = forward.quantile(q)
    assert result is not None
    slack = 0.0051 * max(abs(low), abs(high)) + 1e-9
    assert low - slack <= result <= high + slack

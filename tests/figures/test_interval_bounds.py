"""Every interval holds its mean exactly: a drawn error bar below or above the mean is never
negative (matplotlib refuses one, which once crashed every vLLM snapshot's HTML report)."""

from __future__ import annotations

from nvfp4_tui.core.figures.intervals import wilson_95
from nvfp4_tui.core.stats import RunningStats

MAX_N = 200


def test_wilson_interval_holds_its_mean_at_every_count_and_success() -> None:
    for n in range(1, MAX_N + 1):
        for k in range(n + 1):
            mean = k / n
            interval = wilson_95(mean, n)
            assert interval is not None
            low, high = interval
            assert 0.0 <= low <= mean <= high <= 1.0, (k, n, low, high)


def test_wilson_interval_holds_a_running_mean_of_pass_fail_scores() -> None:
    # The mean a fold reaches one score at a time rounds differently from k / n.
    for n in range(1, MAX_N + 1, 7):
        for k in range(n + 1):
            stats = RunningStats()
            for i in range(n):
                stats.add(1.0 if i < k else 0.0)
            low, high = wilson_95(stats.mean, n) or (None, None)
            assert low is not None and high is not None
            assert low <= min(1.0, max(0.0, stats.mean)) <= high, (k, n)


def test_no_successes_out_of_three_has_a_lower_bound_of_exactly_zero() -> None:
    assert wilson_95(0.0, 3) == (0.0, wilson_95(0.0, 3)[1])  # type: ignore[index]
    assert wilson_95(1.0, 3)[1] == 1.0  # type: ignore[index]

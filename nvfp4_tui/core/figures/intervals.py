"""Intervals that respect what they bound: quality scores live in [0, 1], so theirs must too.

A Student-t interval on two scores of 0.2 and 1.0 reads 0.60 ± 5.1; the Wilson score interval
stays inside [0, 1] at any n. For pass/fail scores it is Wilson's interval exactly; for scores
between 0 and 1 it is conservative, because a variable in [0, 1] with mean p has a variance of
at most p(1 - p), the binomial's. Speeds are unbounded above and use the t interval
(``stats.RunningStats.ci95``).
"""

from __future__ import annotations

import math

from nvfp4_tui.core.stats import RunningStats, StatsSummary

Z95 = 1.959963984540054


def wilson_95(mean: float, n: int) -> tuple[float, float] | None:
    """The 95% Wilson score interval of a [0, 1] mean over ``n`` samples; None when n is 0.

    The interval always holds the mean (clamped to [0, 1]): in exact arithmetic it does, but
    rounding puts 0 of 3's lower bound at 5.6e-17, above its mean, and a drawn error bar
    below the mean would then be negative.
    """
    if n < 1:
        return None
    p = min(1.0, max(0.0, mean))
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


def score_summary(stats: RunningStats) -> StatsSummary:
    """Count, mean and sample std of scores, with the Wilson 95% interval."""
    return stats.summary(lambda s: wilson_95(s.mean, s.n))

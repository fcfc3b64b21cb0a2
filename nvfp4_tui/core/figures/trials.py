"""A plan run N times (``--trials N``): each figure of each leaderboard cell (endpoint, suite,
load level) as its mean over the trials, with the 95% confidence interval of that mean across
trials (Student's t on the trials' own values): the spread a user should expect between runs,
which no interval inside one run shows (its requests share the run's server state and box).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nvfp4_tui.core.figures.leaderboard import LeaderRow
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.stats import mean, std, t_quantile_975


@dataclass(frozen=True)
class TrialFigure:
    name: str  # as tables and JSON name it, with its unit and level
    spec: str  # its format
    of: Callable[[LeaderRow], float | None]


TRIAL_FIGURES: tuple[TrialFigure, ...] = (
    TrialFigure("decode tok/s p50", ".1f", lambda r: r.decode.p50_tps),
    TrialFigure("TTFT s p50", ".3f", lambda r: r.ttft_p50_s),
    TrialFigure("e2e tok/s mean", ".1f", lambda r: r.e2e_tps.mean),
    TrialFigure("throughput tok/s", ".1f", lambda r: r.throughput_tps),
)


@dataclass(frozen=True, slots=True)
class TrialRow:
    endpoint_id: str
    suite: str
    load: Load
    figure: TrialFigure
    values: tuple[float, ...]  # one per trial that has the figure, in trial order
    trials: int  # trials run

    @property
    def mean(self) -> float | None:
        return mean(self.values)

    @property
    def ci95_half(self) -> float | None:
        """Half the 95% interval of the mean across trials; None below two values."""
        sd = std(self.values, ddof=1)
        n = len(self.values)
        return None if sd is None else t_quantile_975(n - 1) * sd / math.sqrt(n)

    def json(self) -> dict[str, Any]:
        return {
            "kind": "trial",
            "endpoint": self.endpoint_id,
            "suite": self.suite,
            "load": self.load.label,
            "figure": self.figure.name,
            "trials": self.trials,
            "n": len(self.values),
            "mean": self.mean,
            "ci95_half": self.ci95_half,
            "values": list(self.values),
        }


def trial_rows(trials: Sequence[Sequence[LeaderRow]]) -> list[TrialRow]:
    """Every cell of any trial's leaderboard (first seen first), each figure across trials."""
    cells: dict[tuple[str, str, Load], list[LeaderRow]] = {}
    for rows in trials:
        for row in rows:
            cells.setdefault((row.endpoint, row.suite, row.load), []).append(row)
    return [
        TrialRow(
            endpoint_id=endpoint_id,
            suite=suite,
            load=load,
            figure=figure,
            values=tuple(v for row in rows if (v := figure.of(row)) is not None),
            trials=len(trials),
        )
        for (endpoint_id, suite, load), rows in cells.items()
        for figure in TRIAL_FIGURES
    ]


@dataclass(frozen=True, slots=True)
class TrialChange:
    """One figure of one cell in two sets of trials (A, then B)."""

    a: TrialRow
    b: TrialRow

    @property
    def relative(self) -> float | None:
        """(B − A) / A of the trial means."""
        a, b = self.a.mean, self.b.mean
        return None if a is None or b is None or a == 0 else (b - a) / abs(a)

    @property
    def significant(self) -> bool | None:
        """Whether the means differ at the 95% level by Welch's t-test (two-sided); None with
        fewer than two trials on a side."""
        na, nb = len(self.a.values), len(self.b.values)
        sa, sb = std(self.a.values, ddof=1), std(self.b.values, ddof=1)
        ma, mb = self.a.mean, self.b.mean
        if sa is None or sb is None or ma is None or mb is None:
            return None
        va, vb = sa * sa / na, sb * sb / nb
        if va + vb == 0:
            return ma != mb
        # Welch-Satterthwaite degrees of freedom, rounded down: the interval errs wide.
        df = (va + vb) ** 2 / (va * va / (na - 1) + vb * vb / (nb - 1))
        return abs(mb - ma) > t_quantile_975(max(1, math.floor(df))) * math.sqrt(va + vb)

    def json(self) -> dict[str, Any]:
        return {
            "kind": "trial_change",
            "endpoint": self.a.endpoint_id,
            "suite": self.a.suite,
            "load": self.a.load.label,
            "figure": self.a.figure.name,
            "a_mean": self.a.mean,
            "a_ci95_half": self.a.ci95_half,
            "a_n": len(self.a.values),
            "b_mean": self.b.mean,
            "b_ci95_half": self.b.ci95_half,
            "b_n": len(self.b.values),
            "relative": self.relative,
            "significant": self.significant,
        }


def trial_changes(a: Sequence[TrialRow], b: Sequence[TrialRow]) -> list[TrialChange]:
    """The cells and figures both sets measured, in A's order."""
    in_b = {(r.endpoint_id, r.suite, r.load, r.figure.name): r for r in b}
    return [
        TrialChange(row, other)
        for row in a
        if (other := in_b.get((row.endpoint_id, row.suite, row.load, row.figure.name)))
    ]

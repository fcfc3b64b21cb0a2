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

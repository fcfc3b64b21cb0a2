"""The leaderboard's two ways in agree: request rows one by one (the live state) and the same
rows summed per cell in polars (the report over a million rows) give the same cells."""

from __future__ import annotations

import math
import random

import pytest

from nvfp4_tui.core.events import RequestFinished
from nvfp4_tui.core.figures.leaderboard import LeaderboardFold, RequestFacts
from nvfp4_tui.output.report import cell_totals
from nvfp4_tui.store.schema import events_to_frame
from tests.support.factories import T0, request

ODD = (math.nan, math.inf, None)  # what a broken server or a damaged snapshot may hold


def _rows(seed: int, count: int) -> list[RequestFinished]:
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        status = rng.choice(("ok", "ok", "ok", "incomplete", "error"))
        kind = rng.choice(("connect", "suspect")) if status == "error" else None

        def value(low: float, high: float) -> float | None:
            return rng.choice(ODD) if rng.random() < 0.05 else rng.uniform(low, high)

        rows.append(
            request(
                rng.choice(("a", "b")),
                t=T0 + i,
                suite=rng.choice(("math", "coding")),
                prompt_id=f"p{rng.randrange(4)}",
                concurrency=rng.choice((1, 4)),
                request_index=i,
                status=status,
                ttft_s=value(0.05, 0.4),
                e2e_s=value(1.0, 9.0),
                decode_tps=value(40.0, 150.0),
                e2e_tps=value(30.0, 140.0),
                tokens_out=rng.choice((None, rng.randrange(1, 900))),
                error_kind=kind,
                score_heuristic=value(0.0, 1.0),
                score_verified=rng.choice((None, 0.0, 1.0)),
                trimmed=rng.choice((None, False, True)),
            )
        )
    return rows


def _cells(fold: LeaderboardFold) -> list[dict]:
    def rounded(value):
        return float(f"{value:.9g}") if isinstance(value, float) else value

    return [
        {key: rounded(value) for key, value in row.json("score_heuristic").items()}
        | {"prompts": {k: sorted(v) for k, v in row.scored_prompts.items()}}
        for row in fold.rows(("a", "b"), ("math", "coding"))
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rows_one_by_one_and_summed_per_cell_agree(seed: int) -> None:
    rows = _rows(seed, 400)
    one_by_one = LeaderboardFold()
    for r in rows:
        one_by_one.add_request(
            RequestFacts(
                r.endpoint_id,
                r.suite,
                r.prompt_id,
                r.concurrency,
                None,
                0,
                r.status,
                r.error_kind,
                r.trimmed,
                r.t,
                r.e2e_s,
                r.ttft_s,
                r.decode_tps,
                r.e2e_tps,
                r.tokens_out,
                r.score_heuristic,
                r.score_verified,
                r.score_judge,
            )
        )
    frame = events_to_frame("requests", rows)
    summed = LeaderboardFold()
    for totals in cell_totals(frame.with_columns(rate_rps=None)):
        summed.add_cell(totals)
    assert _cells(summed) == _cells(one_by_one)

"""Every statistic of every metric: the live state's fold (a row at a time) and the report's
(a level's columns) agree, and each statistic is the one its name says."""

from __future__ import annotations

import math
import random

import pytest

from nvfp4_tui.core.events import RequestFinished
from nvfp4_tui.core.figures.metric_stats import METRICS, MetricStatsFold
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.stats import percentile
from nvfp4_tui.output.report import metric_stats_json, metric_stats_of
from nvfp4_tui.store.schema import events_to_frame
from tests.support.factories import T0, request

ODD = (math.nan, math.inf, None)


def _rows(seed: int, count: int) -> list[RequestFinished]:
    rng = random.Random(seed)

    def value(low: float, high: float) -> float | None:
        return rng.choice(ODD) if rng.random() < 0.05 else rng.uniform(low, high)

    return [
        request(
            rng.choice(("a", "b")),
            t=T0 + i,
            concurrency=rng.choice((1, 4)),
            request_index=i,
            status=rng.choice(("ok", "ok", "incomplete", "error")),
            ttft_s=value(0.05, 0.4),
            ttst_s=value(0.06, 0.5),
            tpot_s=value(0.005, 0.03),
            e2e_s=value(1.0, 9.0),
            decode_tps=value(40.0, 150.0),
            prefill_tps=value(500.0, 9000.0),
            tokens_in=rng.randrange(10, 900),
            tokens_out=rng.choice((None, rng.randrange(1, 900))),
            trimmed=rng.choice((None, False, True)),
        )
        for i in range(count)
    ]


def _live(rows: list[RequestFinished]) -> MetricStatsFold:
    fold = MetricStatsFold()
    for row in rows:
        fold.add_request(row, Load.of(row.concurrency, None))
    return fold


def test_the_live_fold_and_the_reports_agree() -> None:
    rows = _rows(3, 400)
    live = metric_stats_json(_live(rows))
    report = metric_stats_json(metric_stats_of(events_to_frame("requests", rows), []))
    assert [(r["endpoint"], r["load"], r["metric"], r["n"]) for r in live] == [
        (r["endpoint"], r["load"], r["metric"], r["n"]) for r in report
    ]
    for a, b in zip(live, report, strict=True):
        for name in ("mean", "std", "min", "max", "p50", "p90", "p95", "p99"):
            assert a[name] == pytest.approx(b[name], rel=1e-12), (a["metric"], name)


def test_each_statistic_is_what_its_name_says() -> None:
    rows = _rows(5, 300)
    fold = _live(rows)
    summaries = {s.metric.column: s for s in fold.summaries("a", Load.of(4, None))}
    timed = [
        r.ttft_s
        for r in rows
        if r.endpoint_id == "a" and r.concurrency == 4 and r.status != "error" and not r.trimmed
    ]
    values = sorted(v for v in timed if v is not None and math.isfinite(v))
    ttft = summaries["ttft_s"]
    assert ttft.n == len(values) > 20
    assert ttft.mean == pytest.approx(sum(values) / len(values))
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    assert ttft.std == pytest.approx(std)
    assert (ttft.min, ttft.max) == (values[0], values[-1])
    assert (ttft.p50, ttft.p90, ttft.p99) == (
        percentile(values, 50),
        percentile(values, 90),
        percentile(values, 99),
    )
    assert [s.metric for s in fold.summaries("a", Load.of(4, None))] == list(METRICS)


def test_errors_and_warm_up_rows_are_not_timed() -> None:
    fold = _live(
        [
            request("a", ttft_s=0.1, status="ok"),
            request("a", ttft_s=9.0, status="error", error_kind="connect"),
            request("a", ttft_s=8.0, status="ok", trimmed=True),
        ]
    )
    ttft = next(s for s in fold.summaries("a", Load.of(1, None)) if s.metric.column == "ttft_s")
    assert (ttft.n, ttft.max) == (1, 0.1)

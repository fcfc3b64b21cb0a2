"""The pure /metrics half: parsing, counter and bucket deltas, quantiles, old vs new names."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nvfp4_tui.telemetry.prometheus import (
    NotPrometheusText,
    ServerMetricsDelta,
    bucket_increase,
    histogram_quantile,
    parse_metrics,
    server_sample,
)
from tests.telemetry.fakes import EngineState, old_vllm_text, vllm_metrics_text

INF = math.inf


def poll_one() -> list[EngineState]:
    # Two data-parallel engines; their series are summed (ratios averaged).
    return [
        EngineState(
            engine="0",
            running=2,
            waiting=1,
            kv_usage=0.2,
            preemptions=3,
            prompt_tokens=1000,
            generation_tokens=5000,
            prefix_queries=100,
            prefix_hits=50,
            ttft=(1, 3, 3, 3),
            itl=(10, 20, 30, 30),
            e2e=(0, 1, 2, 2),
        ),
        EngineState(
            engine="1",
            running=1,
            waiting=0,
            kv_usage=0.4,
            preemptions=1,
            prompt_tokens=500,
            generation_tokens=2500,
            prefix_queries=0,
            prefix_hits=0,
            ttft=(1, 2, 3, 3),
            itl=(0, 0, 0, 0),
            e2e=(0, 0, 1, 1),
        ),
    ]


def poll_two() -> list[EngineState]:
    return [
        EngineState(
            engine="0",
            running=3,
            waiting=0,
            kv_usage=0.3,
            preemptions=4,
            prompt_tokens=1800,
            generation_tokens=5600,
            prefix_queries=250,
            prefix_hits=110,
            ttft=(2, 7, 8, 9),
            itl=(10, 20, 30, 30),
            e2e=(0, 1, 2, 2),
        ),
        EngineState(
            engine="1",
            running=1,
            waiting=2,
            kv_usage=0.5,
            preemptions=1,
            prompt_tokens=700,
            generation_tokens=2900,
            prefix_queries=50,
            prefix_hits=20,
            ttft=(2, 6, 7, 7),
            itl=(0, 0, 0, 0),
            e2e=(0, 0, 1, 1),
        ),
    ]


def test_parse_sums_label_sets_and_buckets() -> None:
    snap = parse_metrics(vllm_metrics_text(poll_one()))
    assert snap.total("vllm:num_requests_running") == 3
    assert snap.series["vllm:num_requests_running"] == 2
    assert snap.mean("vllm:kv_cache_usage_perc") == pytest.approx(0.3)
    assert snap.total("vllm:generation_tokens_total") == 7500
    assert snap.histograms["vllm:time_to_first_token_seconds"] == (
        (0.1, 2.0),
        (0.25, 5.0),
        (0.5, 6.0),
        (INF, 6.0),
    )
    assert snap.total("absent") is None and snap.mean("absent") is None


def test_first_poll_has_gauges_but_no_rates_or_quantiles() -> None:
    sample = server_sample("ep", 10.0, parse_metrics(vllm_metrics_text(poll_one())))
    assert (sample.t, sample.endpoint_id) == (10.0, "ep")
    assert (sample.requests_running, sample.requests_waiting) == (3, 1)
    assert sample.kv_cache_pct == pytest.approx(30.0)
    assert sample.preemptions_total == 4
    assert sample.prompt_tps is None and sample.generation_tps is None
    assert sample.prefix_cache_hit_pct is None
    assert sample.ttft_p50_s is None and sample.itl_p95_s is None and sample.e2e_p50_s is None


def test_second_poll_rates_hit_rate_and_bucket_delta_quantiles() -> None:
    before = parse_metrics(vllm_metrics_text(poll_one()))
    now = parse_metrics(vllm_metrics_text(poll_two()))
    sample = server_sample("ep", 12.0, now, before, dt_s=2.0)
    assert sample.kv_cache_pct == pytest.approx(40.0)
    assert sample.requests_waiting == 2
    # (1800 + 700 - 1000 - 500) / 2 s and (5600 + 2900 - 5000 - 2500) / 2 s.
    assert sample.prompt_tps == pytest.approx(500.0)
    assert sample.generation_tps == pytest.approx(500.0)
    # hits (110 + 20 - 50) over queries (250 + 50 - 100): 80 / 200.
    assert sample.prefix_cache_hit_pct == pytest.approx(40.0)
    # TTFT buckets summed: before (2, 5, 6, 6), now (4, 13, 15, 16) -> new (2, 8, 9, 10).
    # p50: rank 5 falls in (0.1, 0.25] holding 6, 3 into it: 0.1 + 0.15 * 3/6 = 0.175.
    assert sample.ttft_p50_s == pytest.approx(0.175)
    # p95: rank 9.5 is above the 9 observations <= 0.5: the highest finite bound.
    assert sample.ttft_p95_s == pytest.approx(0.5)
    # No new ITL or E2E observations between the polls.
    assert sample.itl_p50_s is None and sample.itl_p95_s is None
    assert sample.e2e_p50_s is None and sample.e2e_p95_s is None


def test_quantile_by_hand_inside_buckets() -> None:
    new = ((0.1, 2.0), (0.25, 8.0), (0.5, 10.0), (INF, 10.0))
    # p95: rank 9.5 in (0.25, 0.5] holding 2, 1.5 into it: 0.25 + 0.25 * 0.75.
    assert histogram_quantile(0.95, new) == pytest.approx(0.4375)
    # p10: rank 1 in the first bucket, interpolated from 0: 0.1 * 1/2.
    assert histogram_quantile(0.10, new) == pytest.approx(0.05)
    assert histogram_quantile(0.5, ((0.1, 0.0), (INF, 0.0))) is None
    assert histogram_quantile(0.5, ((0.1, 1.0), (0.2, 2.0))) is None  # no +Inf bucket
    assert histogram_quantile(0.5, ((INF, 3.0),)) is None


def test_counter_reset_counts_the_whole_new_value() -> None:
    before = parse_metrics(vllm_metrics_text(poll_two()))
    restarted = [
        EngineState(engine="0", generation_tokens=150, prompt_tokens=40, ttft=(1, 2, 2, 2)),
        EngineState(engine="1", generation_tokens=50, prompt_tokens=0, ttft=(0, 0, 1, 1)),
    ]
    sample = server_sample("ep", 13.0, parse_metrics(vllm_metrics_text(restarted)), before, 1.0)
    assert sample.generation_tps == pytest.approx(200.0)
    assert sample.prompt_tps == pytest.approx(40.0)
    # The histogram went down: everything in it is new, (1, 2, 3, 3) -> p50 rank 1.5 in
    # (0.1, 0.25] holding 1, 0.5 into it: 0.175.
    assert sample.ttft_p50_s == pytest.approx(0.175)
    # Prefix counters went down too: all of now's 0 hits over 0 queries -> no rate.
    assert sample.prefix_cache_hit_pct is None


def test_bucket_increase_on_changed_layout_takes_now() -> None:
    now = ((0.1, 1.0), (INF, 2.0))
    assert bucket_increase(now, ((0.2, 1.0), (INF, 1.0))) == now
    assert bucket_increase(now, ((0.1, 1.0), (INF, 1.0))) == ((0.1, 0.0), (INF, 1.0))


def test_old_vllm_names_are_read() -> None:
    before = parse_metrics(old_vllm_text(1000, (10, 20, 30)))
    now = parse_metrics(old_vllm_text(1250, (10, 28, 40)))
    sample = server_sample("old", 5.0, now, before, dt_s=0.5)
    assert sample.kv_cache_pct == pytest.approx(25.0)
    assert sample.prefix_cache_hit_pct == pytest.approx(40.0)
    assert sample.preemptions_total == 7
    assert (sample.requests_running, sample.requests_waiting) == (3, 1)
    assert sample.generation_tps == pytest.approx(500.0)
    # ITL new buckets (0, 8, 10, 10): p50 rank 5 in (0.01, 0.025] holding 8: 0.01 + 0.015 * 5/8.
    assert sample.itl_p50_s == pytest.approx(0.019375)
    # p95 rank 9.5 in (0.025, 0.05] holding 2, 1.5 into it: 0.025 + 0.025 * 0.75.
    assert sample.itl_p95_s == pytest.approx(0.04375)
    assert sample.ttft_p50_s is None and sample.prompt_tps is None


def test_new_names_win_over_old_ones() -> None:
    text = vllm_metrics_text([EngineState(kv_usage=0.5)]) + (
        "# TYPE vllm:gpu_cache_usage_perc gauge\n"
        'vllm:gpu_cache_usage_perc{model_name="current"} 0.9\n'
    )
    assert server_sample("ep", 1.0, parse_metrics(text)).kv_cache_pct == pytest.approx(50.0)


@pytest.mark.parametrize(
    "body",
    ["", "<html><body><h1>404 Not Found</h1></body></html>", '{"detail":"Not Found"}', "Not Found"],
)
def test_bodies_that_are_not_metrics(body: str) -> None:
    with pytest.raises(NotPrometheusText):
        parse_metrics(body)


def test_delta_keeps_previous_poll_and_survives_a_bad_body() -> None:
    delta = ServerMetricsDelta("ep")
    first = delta.update(vllm_metrics_text(poll_one()), t=100.0, mono_s=50.0)
    assert first.generation_tps is None
    with pytest.raises(NotPrometheusText):
        delta.update("<html></html>", t=100.5, mono_s=50.5)
    second = delta.update(vllm_metrics_text(poll_two()), t=102.0, mono_s=54.0)
    assert second.generation_tps == pytest.approx(1000 / 4.0)
    delta.forget()
    assert delta.update(vllm_metrics_text(poll_two()), t=103.0, mono_s=55.0).generation_tps is None


bucket_counts = st.lists(st.integers(0, 50), min_size=1, max_size=6)


@given(bucket_counts, st.floats(0.01, 0.99), st.floats(0.01, 0.99))
def test_quantiles_are_monotone_and_within_the_bounds(
    per_bucket: list[int], q1: float, q2: float
) -> None:
    bounds = [0.05 * (i + 1) for i in range(len(per_bucket))]
    cumulative: list[tuple[float, float]] = []
    running = 0
    for bound, count in zip(bounds, per_bucket, strict=True):
        running += count
        cumulative.append((bound, float(running)))
    cumulative.append((INF, float(running + 1)))  # one observation above the top bound
    low, high = sorted((q1, q2))
    a, b = histogram_quantile(low, tuple(cumulative)), histogram_quantile(high, tuple(cumulative))
    assert a is not None and b is not None
    assert 0 <= a <= b <= bounds[-1]

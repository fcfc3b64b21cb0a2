"""The pure /metrics half: parsing, counter and bucket deltas, quantiles, old vs new names."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from nvfp4_tui.core.events import ServerSample
from nvfp4_tui.telemetry.exposition import NotPrometheusText
from nvfp4_tui.telemetry.prometheus import (
    MetricsSnapshot,
    ServerMetricsDelta,
    bucket_increase,
    parse_metrics,
    quantile_bucket,
    server_sample,
)
from tests.telemetry.fakes import EngineState, old_vllm_text, vllm_metrics_text

INF = math.inf


def latency(sample: ServerSample, name: str) -> tuple[float | int | None, ...]:
    """One histogram's fields of ``sample``: count, mean, p50 low and high, p95 low and high."""
    parts = ("count", "mean_s", "p50_low_s", "p50_high_s", "p95_low_s", "p95_high_s")
    return tuple(getattr(sample, f"{name}_{part}") for part in parts)


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
            ttft_sum_s=0.6,
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
            ttft_sum_s=0.5,
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
            ttft_sum_s=1.9,
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
            ttft_sum_s=1.4,
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


# What the text format allows beyond vLLM's own bodies: a timestamp, escapes and a "}" in a
# label value, spaces around labels, a second label set of a histogram, comments, blank lines.
ODD_BUT_VALID = """# HELP vllm:num_requests_running Requests running.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="a \\"quoted\\" }name",engine="0"} 2 1700000000000
vllm:num_requests_running{model_name="b"}   1

vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="a"} 1
vllm:time_to_first_token_seconds_bucket{model_name="b", le="0.1"} 2
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="a"} 3
vllm:time_to_first_token_seconds_bucket{model_name="b",le="+Inf"} 4
vllm:time_to_first_token_seconds_count{model_name="a"} 3
vllm:kv_cache_usage_perc NaN
# EOF
"""


# vLLM 0.32.0's own body (the CPU build serving the real-server stage's tiny model), 56 kB.
VLLM_BODY = Path(__file__).parent / "data" / "vllm-0.32-cpu.metrics"


@pytest.mark.parametrize("body", ["odd", "fake", "vllm"])
def test_parse_reads_what_prometheus_client_reads(body: str) -> None:
    """The line parser (on the loop, 2 ms a vLLM body) gives what prometheus_client's parser
    (28 ms) gives: each sample summed over its label sets, buckets by bound."""
    text = {
        "odd": lambda: ODD_BUT_VALID,
        "fake": lambda: vllm_metrics_text(poll_two()),
        "vllm": lambda: VLLM_BODY.read_text(encoding="utf-8"),
    }[body]()
    snap = parse_metrics(text)
    sums: dict[str, float] = {}
    buckets: dict[str, dict[float, float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if math.isnan(sample.value):
                continue
            if sample.name.endswith("_bucket"):
                by_le = buckets.setdefault(sample.name.removesuffix("_bucket"), {})
                le = float(sample.labels["le"])
                by_le[le] = by_le.get(le, 0.0) + sample.value
            else:
                sums[sample.name] = sums.get(sample.name, 0.0) + sample.value
    assert snap.sums == sums
    assert snap.histograms == {name: tuple(sorted(b.items())) for name, b in buckets.items()}
    if body == "odd":
        assert snap.series["vllm:num_requests_running"] == 2
        assert snap.histograms["vllm:time_to_first_token_seconds"] == ((0.1, 3.0), (INF, 7.0))


def test_first_poll_has_gauges_but_no_rates_or_quantiles() -> None:
    sample = server_sample("ep", 10.0, parse_metrics(vllm_metrics_text(poll_one())))
    assert (sample.t, sample.endpoint_id) == (10.0, "ep")
    assert (sample.requests_running, sample.requests_waiting) == (3, 1)
    assert sample.kv_cache_pct == pytest.approx(30.0)
    assert sample.preemptions_total == 4
    assert sample.prompt_tps is None and sample.generation_tps is None
    assert sample.prefix_cache_hit_pct is None
    for name in ("ttft", "itl", "e2e"):
        assert latency(sample, name) == (None,) * 6


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
    # TTFT counts 6 -> 16 and sums 1.1 -> 3.3 s: 10 first tokens, exactly 0.22 s on average.
    assert sample.ttft_count == 10
    assert sample.ttft_mean_s == pytest.approx(0.22)
    # Buckets summed: before (2, 5, 6, 6), now (4, 13, 15, 16) -> new (2, 8, 9, 10). The p50
    # (rank 5) lies in (0.1, 0.25]; the p95 (rank 9.5) above the top bound, 0.5.
    assert (sample.ttft_p50_low_s, sample.ttft_p50_high_s) == (0.1, 0.25)
    assert (sample.ttft_p95_low_s, sample.ttft_p95_high_s) == (0.5, None)
    # No new ITL or E2E observations between the polls: a count of 0 and nothing else.
    assert latency(sample, "itl") == (0, None, None, None, None, None)
    assert latency(sample, "e2e") == (0, None, None, None, None, None)


def test_quantile_buckets_by_hand() -> None:
    new = ((0.1, 2.0), (0.25, 8.0), (0.5, 10.0), (INF, 10.0))
    assert quantile_bucket(0.95, new) == (0.25, 0.5)  # rank 9.5
    assert quantile_bucket(0.10, new) == (0.0, 0.1)  # rank 1: the first bucket starts at 0
    assert quantile_bucket(0.80, new) == (0.1, 0.25)  # rank 8, exactly the bucket's top
    assert quantile_bucket(0.5, ((0.1, 0.0), (INF, 0.0))) is None
    assert quantile_bucket(0.5, ((0.1, 1.0), (0.2, 2.0))) is None  # no +Inf bucket
    assert quantile_bucket(0.5, ((INF, 3.0),)) == (0.0, None)


def test_counter_reset_counts_the_whole_new_value_and_latencies_give_none() -> None:
    before = parse_metrics(vllm_metrics_text(poll_two()))
    restarted = [
        EngineState(engine="0", generation_tokens=150, prompt_tokens=40, ttft=(1, 2, 2, 2)),
        EngineState(engine="1", generation_tokens=50, prompt_tokens=0, ttft=(0, 0, 1, 1)),
    ]
    sample = server_sample("ep", 13.0, parse_metrics(vllm_metrics_text(restarted)), before, 1.0)
    assert sample.generation_tps == pytest.approx(200.0)
    assert sample.prompt_tps == pytest.approx(40.0)
    # The TTFT count went 16 -> 3: no negative mean, no range from a mix of two servers' lives.
    assert latency(sample, "ttft") == (None,) * 6
    # Prefix counters went down too: all of now's 0 hits over 0 queries -> no rate.
    assert sample.prefix_cache_hit_pct is None


def ttft_only(count: float, sum_s: float, buckets: tuple[float, ...]) -> MetricsSnapshot:
    """A scrape holding only a TTFT histogram (bounds 0.1, 0.25, 0.5, +Inf)."""
    name = "vllm:time_to_first_token_seconds"
    return MetricsSnapshot(
        sums={f"{name}_count": count, f"{name}_sum": sum_s},
        series={f"{name}_count": 1, f"{name}_sum": 1},
        histograms={name: tuple(zip((0.1, 0.25, 0.5, INF), buckets, strict=True))},
    )


def test_a_count_or_sum_that_went_down_alone_is_a_reset_too() -> None:
    before = ttft_only(5, 2.0, (1, 1, 1, 5))

    def ttft_after(now: MetricsSnapshot) -> tuple[float | int | None, ...]:
        return latency(server_sample("ep", 2.0, now, before), "ttft")

    # One new first token, 0.5 s, above the top bound.
    assert ttft_after(ttft_only(6, 2.5, (1, 1, 1, 6))) == (1, 0.5, 0.5, None, 0.5, None)
    # Buckets that happen to have grown do not hide a _count or _sum that went down.
    assert ttft_after(ttft_only(4, 2.5, (1, 1, 1, 6))) == (None,) * 6
    assert ttft_after(ttft_only(6, 1.5, (1, 1, 1, 6))) == (None,) * 6


def test_bucket_increase_across_a_changed_layout_or_a_reset_is_unknown() -> None:
    now = ((0.1, 1.0), (INF, 2.0))
    assert bucket_increase(now, ((0.2, 1.0), (INF, 1.0))) is None
    assert bucket_increase(now, ((0.1, 2.0), (INF, 2.0))) is None
    assert bucket_increase(now, ((0.1, 1.0), (INF, 1.0))) == ((0.1, 0.0), (INF, 1.0))


def test_old_vllm_names_are_read() -> None:
    before = parse_metrics(old_vllm_text(1000, (10, 20, 30), itl_sum_s=0.3))
    now = parse_metrics(old_vllm_text(1250, (10, 28, 40), itl_sum_s=0.5))
    sample = server_sample("old", 5.0, now, before, dt_s=0.5)
    assert sample.kv_cache_pct == pytest.approx(25.0)
    assert sample.prefix_cache_hit_pct == pytest.approx(40.0)
    assert sample.preemptions_total == 7
    assert (sample.requests_running, sample.requests_waiting) == (3, 1)
    assert sample.generation_tps == pytest.approx(500.0)
    # The old ITL name: 10 new gaps summing to 0.2 s, new buckets (0, 8, 10, 10).
    assert (sample.itl_count, sample.itl_mean_s) == (10, pytest.approx(0.02))
    assert (sample.itl_p50_low_s, sample.itl_p50_high_s) == (0.01, 0.025)
    assert (sample.itl_p95_low_s, sample.itl_p95_high_s) == (0.025, 0.05)
    assert sample.ttft_count is None and sample.prompt_tps is None


def test_new_names_win_over_old_ones() -> None:
    text = vllm_metrics_text([EngineState(kv_usage=0.5)]) + (
        "# TYPE vllm:gpu_cache_usage_perc gauge\n"
        'vllm:gpu_cache_usage_perc{model_name="current"} 0.9\n'
    )
    assert server_sample("ep", 1.0, parse_metrics(text)).kv_cache_pct == pytest.approx(50.0)


@pytest.mark.parametrize(
    "body",
    [
        "",
        "<html><body><h1>404 Not Found</h1></body></html>",
        '{"detail":"Not Found"}',
        "Not Found",
        "# only a comment\n",
        'vllm:x 1\nvllm:y{le="0.1"} one\n',
        'vllm:x_bucket{le="soon"} 1\n',
    ],
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
def test_quantile_buckets_are_monotone_and_hold_their_rank(
    per_bucket: list[int], q1: float, q2: float
) -> None:
    bounds = [0.05 * (i + 1) for i in range(len(per_bucket))]
    cumulative: list[tuple[float, float]] = []
    running = 0
    for bound, count in zip(bounds, per_bucket, strict=True):
        running += count
        cumulative.append((bound, float(running)))
    cumulative.append((INF, float(running + 1)))  # one observation above the top bound
    count_at = dict(cumulative)
    total = running + 1
    edges = [0.0, *bounds, INF]
    found = []
    for q in sorted((q1, q2)):
        bucket = quantile_bucket(q, tuple(cumulative))
        assert bucket is not None
        low, high = bucket[0], INF if bucket[1] is None else bucket[1]
        assert edges.index(high) == edges.index(low) + 1  # one bucket, its own edges
        # Fewer than q of the observations at or below low, at least q at or below high.
        assert count_at.get(low, 0.0) < q * total <= count_at[high]
        found.append(low)
    assert found[0] <= found[1]

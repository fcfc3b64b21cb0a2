"""The pure schedule functions other modules compare their measurements with."""

from __future__ import annotations

import pytest

from nvfp4_tui.sim.schedule import (
    aggregate_tps_at,
    concurrency_factor,
    decode_tps_at,
    expected_e2e_s,
    expected_ttft_s,
    token_interval_s,
)
from tests.sim.simclient import make_spec

CURVE = ((1, 1.0), (2, 0.8), (4, 0.6))


def test_factor_is_exact_at_curve_points_and_linear_between() -> None:
    assert concurrency_factor(CURVE, 1) == 1.0
    assert concurrency_factor(CURVE, 2) == 0.8
    assert concurrency_factor(CURVE, 3) == pytest.approx(0.7)
    assert concurrency_factor(CURVE, 4) == 0.6


def test_aggregate_throughput_stays_flat_beyond_the_last_point() -> None:
    spec = make_spec(decode_tps=100.0, concurrency_curve=CURVE)
    assert aggregate_tps_at(spec, 4) == pytest.approx(240.0)
    for c in (5, 8, 64):
        assert aggregate_tps_at(spec, c) == pytest.approx(240.0)
        assert decode_tps_at(spec, c) == pytest.approx(240.0 / c)


def test_seed_curve_reproduces_the_seed_scaling_run() -> None:
    spec = make_spec(decode_tps=170.0)  # the profile default curve is the seed's
    assert [round(decode_tps_at(spec, c)) for c in (1, 2, 4, 8)] == [170, 140, 135, 73]


def test_ttft_includes_prefill_and_contention() -> None:
    spec = make_spec(ttft_s=0.1, prefill_tps=1000.0, concurrency_curve=CURVE)
    assert expected_ttft_s(spec, 0) == pytest.approx(0.1)
    assert expected_ttft_s(spec, 500) == pytest.approx(0.6)
    assert expected_ttft_s(spec, 500, concurrency=4) == pytest.approx(0.6 / 0.6)


def test_e2e_is_ttft_plus_one_interval_per_later_token() -> None:
    spec = make_spec(decode_tps=50.0, ttft_s=0.2, prefill_tps=1e9)
    assert token_interval_s(spec, 1) == pytest.approx(0.02)
    assert expected_e2e_s(spec, 10, 101) == pytest.approx(0.2 + 100 * 0.02)
    assert expected_e2e_s(spec, 10, 1) == pytest.approx(expected_ttft_s(spec, 10))

"""Axis ticks at 1-2-5 steps inside the shown range, labelled with the decimals their step needs."""

from __future__ import annotations

import math

import pytest

from nvfp4_tui.tui.widgets.ticks import nice_ticks, tick_labels


@pytest.mark.parametrize(
    ("low", "high", "most", "ticks"),
    [
        (0.0, 448.7, 5, [0, 100, 200, 300, 400]),
        (0.0, 366.8, 3, [0, 200]),
        (0.685, 0.931, 4, [0.7, 0.8, 0.9]),
        (42.0, 173.0, 6, [60, 80, 100, 120, 140, 160]),
        (-3.0, 7.0, 3, [0, 5]),
    ],
)
def test_ticks_are_round_and_inside_the_range(low, high, most, ticks) -> None:
    assert nice_ticks(low, high, most) == pytest.approx(ticks)


def test_every_range_gets_at_most_most_ticks_a_1_2_5_step_apart() -> None:
    for low, high in [(0, 1e-4), (1.5, 1.5000001), (0, 9.99e12), (-250, -20), (3, 97)]:
        for most in range(2, 12):
            ticks = nice_ticks(low, high, most)
            assert 1 <= len(ticks) <= most + 1
            assert all(low - 1e-9 <= t <= high + 1e-9 for t in ticks)
            if len(ticks) > 1:
                step = ticks[1] - ticks[0]
                mantissa = step / 10 ** math.floor(math.log10(step) + 1e-9)
                assert any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 5, 10)), (
                    low,
                    high,
                    step,
                )


def test_a_step_that_would_leave_one_tick_gives_way_to_the_next_smaller() -> None:
    assert nice_ticks(208.0, 268.0, 2) == [220, 240, 260]
    assert nice_ticks(0.0, 10.0, 2) == [0, 10]


def test_a_range_without_width_gets_its_one_value() -> None:
    assert nice_ticks(5.0, 5.0, 4) == [5.0]
    assert nice_ticks(math.nan, 1.0, 4) == []


def test_labels_carry_the_step_s_decimals() -> None:
    assert tick_labels([0.7, 0.8, 0.9]) == ["0.7", "0.8", "0.9"]
    assert tick_labels([0, 200, 400]) == ["0", "200", "400"]
    assert tick_labels([0.05, 0.1]) == ["0.05", "0.10"]
    assert tick_labels([3.0]) == ["3"]

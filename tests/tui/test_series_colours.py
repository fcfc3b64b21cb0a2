"""The series colours tell endpoints apart: distinct in Lab, exact in 256 colours, and legible
on dark and light backgrounds."""

from __future__ import annotations

from itertools import combinations

from textual.color import Color, rgb_to_lab

from nvfp4_tui.core.series_colours import SERIES_HEX, series_hex

CUBE_LEVELS = {0, 95, 135, 175, 215, 255}  # the xterm 256-colour cube's steps per channel
MIN_APART = 30.0  # CIE76 ΔE: about where two hues stop reading as "the same colour"
MIN_FROM_BACKGROUND = 40.0
BACKGROUNDS = ("#1E1E1E", "#F0F0F0")  # textual-dark's and textual-light's backgrounds, near


def delta_e(a: str, b: str) -> float:
    la, lb = rgb_to_lab(Color.parse(a)), rgb_to_lab(Color.parse(b))
    return ((la.L - lb.L) ** 2 + (la.a - lb.a) ** 2 + (la.b - lb.b) ** 2) ** 0.5


def test_at_least_eight_hues_each_pair_far_apart() -> None:
    assert len(set(SERIES_HEX)) >= 8
    closest = min(combinations(SERIES_HEX, 2), key=lambda pair: delta_e(*pair))
    assert delta_e(*closest) >= MIN_APART, closest


def test_every_hue_is_a_colour_of_the_256_colour_cube() -> None:
    for hex_colour in SERIES_HEX:
        assert set(Color.parse(hex_colour).rgb) <= CUBE_LEVELS, hex_colour


def test_every_hue_stands_out_on_dark_and_light_backgrounds() -> None:
    for hex_colour in SERIES_HEX:
        for background in BACKGROUNDS:
            assert delta_e(hex_colour, background) >= MIN_FROM_BACKGROUND, (hex_colour, background)


def test_colours_repeat_only_after_every_hue_was_used() -> None:
    seen = [series_hex(i) for i in range(len(SERIES_HEX))]
    assert seen == list(SERIES_HEX)
    assert series_hex(len(SERIES_HEX)) == SERIES_HEX[0]

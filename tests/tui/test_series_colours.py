"""The series colours tell endpoints apart: distinct in Lab, exact in 256 colours, and legible
on dark and light backgrounds."""

from __future__ import annotations

import zlib
from itertools import combinations

from textual.color import Color, rgb_to_lab

from nvfp4_tui.core.series_colours import SERIES_HEX, colour_indices, series_hex

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


DEMO = ["moe_qwen36", "moe_redhat", "moe_huihui", "dense_qwen35", "dense_qwopus", "dense_gemma31"]


def test_a_model_keeps_its_hue_whatever_its_place_and_its_neighbours() -> None:
    hues = colour_indices(DEMO)
    assert colour_indices(reversed(DEMO)) == hues
    fewer = colour_indices(DEMO[2:])
    assert all(fewer[i] == hues[i] for i in fewer)  # no collision here: each keeps its own
    assert len(set(hues.values())) == len(DEMO)


def test_colliding_ids_take_the_next_free_hue_and_repeat_only_past_nine() -> None:
    ids = [f"gpu{i}" for i in range(len(SERIES_HEX) + 3)]
    hues = colour_indices(ids)
    first_nine = sorted(ids)[: len(SERIES_HEX)]
    assert sorted(hues[i] for i in first_nine) == list(range(len(SERIES_HEX)))
    preferred = [zlib.crc32(i.encode()) % len(SERIES_HEX) for i in first_nine]
    assert len(set(preferred)) < len(preferred)  # the rule was needed: some ids collided

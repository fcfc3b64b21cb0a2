"""The leaderboard's quality table takes the first layout that fits across the terminal."""

from __future__ import annotations

import pytest

from nvfp4_tui.tui.screens.leaderboard import QUALITY_FRAME_W, quality_layout

DEMO_LABELS = ["Qwen3.6", "RedHatAI", "Huihui", "Qwen3.5", "Qwopus3.5", "Gemma4", "Jiunsong"]
DEMO_CLASSES = ["MoE", "MoE", "MoE", "Dense", "Dense", "Dense", "MoE"]
SEED_SUITES = ["english", "math", "coding", "tool_call"]
DEMO_SUITES = ["english", "japanese", "math", "coding", "design", "tool_call"]


@pytest.mark.parametrize(
    ("suites", "labels", "classes", "width", "expected"),
    [
        (SEED_SUITES, DEMO_LABELS, DEMO_CLASSES, 200, "suites down"),
        (SEED_SUITES, DEMO_LABELS, DEMO_CLASSES, 120, "suites down"),
        (SEED_SUITES, DEMO_LABELS, DEMO_CLASSES, 80, "endpoints down"),
        (DEMO_SUITES, DEMO_LABELS, DEMO_CLASSES, 80, "means only"),
        (DEMO_SUITES, DEMO_LABELS[:2], DEMO_CLASSES[:2], 80, "suites down"),
        # Five endpoints across: 11 + 5 × 14 = 81 columns, over the 77 there are.
        (SEED_SUITES, DEMO_LABELS[:5], DEMO_CLASSES[:5], 80, "endpoints down"),
        (SEED_SUITES, DEMO_LABELS[:4], DEMO_CLASSES[:4], 80, "suites down"),
    ],
)
def test_the_first_layout_that_fits(
    suites: list[str], labels: list[str], classes: list[str], width: int, expected: str
) -> None:
    assert quality_layout(suites, labels, classes, width - QUALITY_FRAME_W) == expected


def test_three_digit_counts_widen_every_cell() -> None:
    """'Qwopus3.5' and 'class', then four cells of "0.66 ±.40 16" (12 columns), each padded a
    column either side, take 74 of 77 columns; an n of 100 or more makes each cell 13: 78."""
    room = 80 - QUALITY_FRAME_W
    assert quality_layout(SEED_SUITES, DEMO_LABELS, DEMO_CLASSES, room, most_n=16) == (
        "endpoints down"
    )
    assert quality_layout(SEED_SUITES, DEMO_LABELS, DEMO_CLASSES, room, most_n=100) == (
        "means only"
    )

"""The multiple-choice scorer reads the letter an answer settles on, and nothing else."""

from __future__ import annotations

import pytest

from nvfp4_tui.scoring.choice_check import chosen_letter


@pytest.mark.parametrize(
    ("answer", "letter"),
    [
        ("B", "B"),
        ("(C)", "C"),
        ("D. Paris", "D"),
        ("The answer is (B).", "B"),
        ("Answer: **C**", "C"),
        ("Option A looks tempting, but the final answer is D.", "D"),
        ("So we get \\boxed{B}.", "B"),
        ("\\boxed{\\text{A}}", "A"),
        ("A lot depends on the reading.", None),  # a sentence that starts with "A"
        ("I am not sure.", None),
        ("answer is a", None),  # a lower-case letter is a word, not an option
    ],
)
def test_the_chosen_letter(answer: str, letter: str | None) -> None:
    assert chosen_letter(answer) == letter

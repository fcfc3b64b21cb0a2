"""The math scorer on hand-written good, partial and bad answers to the shipped math prompts."""

from __future__ import annotations

import pytest

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.checks import MathAnswer, PromptCheck
from nvfp4_tui.config.suites import load_suite
from nvfp4_tui.scoring.math_check import (
    candidates,
    numbers_in,
    part_sections,
    score_math,
)

MATH = load_suite(BUILTIN_SUITES / "math.toml")
CHECKS = {p.id: p.check for p in MATH.prompts}

DICE_GOOD = r"""Only the first roll that shows 7 or 8 matters.

**(a)** Six of the 36 outcomes give 7, so $P(7) = \frac{6}{36} = \boxed{\frac{1}{6}}$.

**(b)** Five outcomes give 8: $P(8) = \frac{5}{36}$.

**(c)** Therefore $P = \frac{P(7)}{P(7) + P(8)} = \frac{6/36}{11/36} = \frac{6}{11} \approx 0.545$.
"""
# (a) right, (b) miscounted, (c) follows the miscount: one part of three.
DICE_PARTIAL = r"""(a) P(7) = 6/36 = 1/6.
(b) Counting (4,4) twice, P(8) = 6/36.
(c) Answer: 1/2
"""
DICE_BAD = "The dice are fair, so each sum is as likely as any other: the answer is one half."

RECURRENCE_GOOD = r"""The characteristic equation $r^2 - 3r + 2 = 0$ has roots 1 and 2, so
$a_n = A + B \cdot 2^n$; the initial values give A = B = 1, that is $a_n = 2^{n} + 1$.

Proof by induction: the base cases hold, and $3(2^{n-1} + 1) - 2(2^{n-2} + 1) = 2^n + 1$.

Therefore $a_{10} = 2^{10} + 1 = 1025$, and we are done.
"""
# The closed form is right, the induction is missing, a_10 forgets the + 1.
RECURRENCE_PARTIAL = r"""Roots 1 and 2 give $a_n = 1 + 2^n$, so $\boxed{a_{10} = 1024}$."""

PRIMES_GOOD = r"""### (a)
Suppose $p_1, \dots, p_k$ are all the primes of the form 4k + 3, and let
$N = 4 p_1 p_2 \cdots p_k - 1$. A product of numbers that are $\equiv 1 \pmod 4$ is again
$\equiv 1 \pmod 4$, so some prime factor q of N is 3 mod 4; q is not among the $p_i$, a
contradiction.

### (b)
101 = 4 * 25 + 1 does not qualify; 103 = 4 * 25 + 3 is prime. **Answer: 103**
"""


@pytest.mark.parametrize(
    ("prompt_id", "answer", "score", "detail"),
    [
        ("dice-seven-before-eight", DICE_GOOD, 1.0, "right:3/3|(a):ok|(b):ok|(c):ok"),
        (
            "dice-seven-before-eight",
            DICE_PARTIAL,
            1 / 3,
            "right:1/3|(a):ok|(b):got 0.166667 want 5/36 (last number)|(c):got 0.5 want 6/11",
        ),
        (
            "dice-seven-before-eight",
            DICE_BAD,
            0.0,
            "right:0/3|(a):no section|(b):no section|(c):no section",
        ),
        (
            "linear-recurrence",
            RECURRENCE_GOOD,
            1.0,
            "right:3/3|a_10:ok|closed-form:ok|induction:ok",
        ),
        (
            "linear-recurrence",
            RECURRENCE_PARTIAL,
            1 / 3,
            "right:1/3|a_10:got 1024 want 1025|closed-form:ok|induction:missing",
        ),
        (
            "primes-4k-plus-3",
            PRIMES_GOOD,
            1.0,
            "right:4/4|(b):ok|construction:ok|4k+1-closed-under-products:ok|contradiction:ok",
        ),
        (
            "primes-4k-plus-3",
            "(a) There are infinitely many primes.\n(b) 101",
            0.0,
            "right:0/4|(b):got 101 want 103 (last number)|construction:missing|"
            "4k+1-closed-under-products:missing|contradiction:missing",
        ),
    ],
    ids=[
        "dice-good",
        "dice-partial",
        "dice-bad",
        "recurrence-good",
        "recurrence-partial",
        "primes-good",
        "primes-bad",
    ],
)
def test_math_answers_score_per_sub_question(prompt_id, answer, score, detail):
    got_score, got_detail = score_math(CHECKS[prompt_id], answer)
    assert got_detail == detail
    assert got_score == pytest.approx(score)


@pytest.mark.parametrize(
    ("text", "values"),
    [
        (r"\frac{6}{11} and \dfrac{-1}{2}", [(6 / 11,), (-0.5,)]),
        ("6/11, 1,025 and 2.5e-3", [(6 / 11,), (1025.0,), (0.0025,)]),
        ("54.5%", [(0.545, 54.5)]),
        ("a_{n-1} - 3", [(1.0,), (3.0,)]),  # "n-1" is no negative number, "- 3" is a minus
        ("x1 = p_2 + 7", [(7.0,)]),  # digits inside names are not numbers
        ("−4", [(-4.0,)]),  # a Unicode minus
    ],
)
def test_numbers_are_read_as_written(text, values):
    assert [n.values for n in numbers_in(text)] == [pytest.approx(v) for v in values]


def _values(scope: str, label: str | None) -> tuple[list[float], str]:
    numbers, how = candidates(scope, label)
    return [n.values[0] for n in numbers], how


def test_the_final_answer_prefers_label_then_box_then_answer_line_then_last_number():
    text = "a_{10} = 1025. Also $\\boxed{7}$.\nAnswer: 9, which is odd\nThen 11."
    assert _values(text, "a_10") == ([1025.0], "final")  # the sentence ends at the full stop
    assert _values(text, None) == ([7.0], "final")
    assert _values("Answer: 9, which is odd\nThen 11.", None) == ([9.0], "final")
    assert _values("Then 11.", None) == ([11.0], "last number")
    assert _values("no digits", None) == ([], "none")
    # Nested braces inside a box, and both sides of an approximation are candidates.
    assert _values(r"$\boxed{\frac{6}{11} \approx 0.55}$", None)[0] == pytest.approx([6 / 11, 0.55])


@pytest.mark.parametrize(
    ("written", "right"),
    [
        ("6/11", True),  # exact
        ("0.545", True),  # 6/11 rounded to 3 decimals
        ("0.5455", True),
        ("54.55%", True),  # 0.5455 as a percentage
        ("0.546", False),  # rounded wrongly
        ("0.55", False),  # two significant digits are not enough
        ("0.5", False),
    ],
)
def test_a_rounded_decimal_counts_when_it_is_the_value_rounded(written, right):
    check = PromptCheck(answers=(MathAnswer(6 / 11, "6/11"),))
    assert score_math(check, f"Answer: {written}")[0] == (1.0 if right else 0.0)


def test_integers_compare_exactly_unless_a_tolerance_is_declared():
    exact = PromptCheck(answers=(MathAnswer(1025, "1025"),))
    assert score_math(exact, "Answer: 1024")[0] == 0.0
    assert score_math(exact, "Answer: 1,025")[0] == 1.0
    loose = PromptCheck(answers=(MathAnswer(1025, "1025", rel_tol=1e-2),))
    assert score_math(loose, "Answer: 1020")[0] == 1.0


def test_sections_run_from_a_part_heading_to_the_next():
    text = "Intro.\nPart a: one\n(b) two\n  **(c)** three"
    assert part_sections(text, ["a", "b", "c"]) == {
        "a": "Part a: one\n",
        "b": "(b) two\n",
        "c": "  **(c)** three",
    }
    assert part_sections("(b) only", ["a", "b"]) == {"b": "(b) only"}

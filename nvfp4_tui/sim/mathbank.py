"""Worked solutions to the shipped math prompts, so simulated answers can be checked.

A simulated model that recognises one of these problems writes its real solution, part by part,
and states each final answer in ``\\boxed{}``. How often it gets a part right depends on its
quality (``right_chance``): a wrong part carries a typical slip (a miscount, a forgotten ``+ 1``)
with working that leads to it, and a weaker model leaves out steps of a proof. Remarks without
numbers fill the rest of the budget, so they never change which answer is final. Prompts that
match no problem here get the generic arithmetic of ``mathsteps``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from nvfp4_tui.sim.writer import Writer


@dataclass(frozen=True)
class Worked:
    """One way to work a part: the steps written and the boxed final expression."""

    steps: tuple[str, ...]
    boxed: str


@dataclass(frozen=True)
class Part:
    label: str | None  # "a" for a "### (a)" heading; None for a problem without parts
    right: Worked
    slips: tuple[Worked, ...]  # what a weaker model writes instead
    proof: bool = False  # steps of a proof: a weaker model leaves some out instead of slipping


@dataclass(frozen=True)
class Problem:
    pattern: re.Pattern[str]  # recognises the problem in the prompt
    parts: tuple[Part, ...]


def right_chance(quality: float) -> float:
    return 0.2 + 0.8 * quality


PROBLEMS: tuple[Problem, ...] = (
    Problem(
        re.compile(r"dice.*sum of 7 comes up before a sum of 8", re.IGNORECASE | re.DOTALL),
        (
            Part(
                "a",
                Worked(
                    (
                        "Of the 36 equally likely outcomes, six give a sum of 7: "
                        "(1,6), (2,5), (3,4), (4,3), (5,2) and (6,1).",
                    ),
                    "P(7) = \\frac{6}{36} = \\frac{1}{6}",
                ),
                (
                    Worked(
                        ("The pairs (1,6), (2,5), (3,4), their reverses and (4,4) make seven.",),
                        "P(7) = \\frac{7}{36}",
                    ),
                ),
            ),
            Part(
                "b",
                Worked(
                    ("Five outcomes give a sum of 8: (2,6), (3,5), (4,4), (5,3) and (6,2).",),
                    "P(8) = \\frac{5}{36}",
                ),
                (
                    Worked(
                        ("Counting (4,4) in both orders, six outcomes give a sum of 8.",),
                        "P(8) = \\frac{6}{36} = \\frac{1}{6}",
                    ),
                ),
            ),
            Part(
                "c",
                Worked(
                    (
                        "A roll with any other sum changes nothing, so only the first roll that "
                        "gives 7 or 8 matters.",
                        "Given that a roll ends the game, it is a 7 with probability "
                        "$\\frac{P(7)}{P(7) + P(8)} = \\frac{6/36}{11/36}$.",
                    ),
                    "P(7 \\text{ first}) = \\frac{6}{11}",
                ),
                (
                    Worked(
                        ("Each roll that ends the game is a 7 or an 8, so both are as likely.",),
                        "P(7 \\text{ first}) = \\frac{1}{2}",
                    ),
                ),
            ),
        ),
    ),
    Problem(
        re.compile(r"infinitely many prime numbers of the form 4k \+ 3", re.IGNORECASE),
        (
            Part(
                "a",
                Worked(
                    (
                        "Suppose there are only finitely many primes of the form 4k + 3, "
                        "say $p_1, p_2, \\dots, p_k$.",
                        "Let $N = 4 p_1 p_2 \\cdots p_k - 1$. Then N leaves remainder 3 on "
                        "division by 4, and N is odd.",
                        "A product of numbers of the form 4k + 1 is again of that form, since "
                        "$(4a + 1)(4b + 1) = 4(4ab + a + b) + 1$.",
                        "Every prime factor of N is odd, so it is of the form 4k + 1 or 4k + 3; "
                        "if all were of the form 4k + 1, N would be 1 (mod 4). So N has a prime "
                        "factor q of the form 4k + 3.",
                        "Dividing N by any $p_i$ leaves remainder $p_i - 1 \\neq 0$, so q is not "
                        "in the list. This contradicts the assumption, so there are infinitely "
                        "many primes of the form 4k + 3.",
                    ),
                    "\\text{infinitely many primes } \\equiv 3 \\pmod 4",
                ),
                (),
                proof=True,
            ),
            Part(
                "b",
                Worked(
                    (
                        "The numbers of the form 4k + 3 above 100 start 103, 107, 111.",
                        "103 is odd and not divisible by 3, 5 or 7, and $11^2 > 103$, so 103 is "
                        "prime.",
                    ),
                    "103",
                ),
                (
                    Worked(("101 is the first prime above 100.",), "101"),
                    Worked(
                        ("103 = 7 \\times 15 - 2 is not prime, so the next candidate is",), "107"
                    ),
                ),
            ),
        ),
    ),
    Problem(
        re.compile(r"a_n = 3a_\(n-1\) - 2a_\(n-2\)"),
        (
            Part(
                None,
                Worked(
                    (
                        "The characteristic equation is $r^2 - 3r + 2 = 0$, that is "
                        "$(r - 1)(r - 2) = 0$, with roots 1 and 2.",
                        "So $a_n = A + B \\cdot 2^n$. From $a_0 = A + B = 2$ and "
                        "$a_1 = A + 2B = 3$ we get A = 1 and B = 1: the closed form is "
                        "$a_n = 2^n + 1$.",
                        "Proof by induction: $a_0 = 2 = 2^0 + 1$ and $a_1 = 3 = 2^1 + 1$. If the "
                        "form holds for n - 1 and n - 2, then $a_n = 3(2^{n-1} + 1) - "
                        "2(2^{n-2} + 1) = 2 \\cdot 2^{n-1} + 1 = 2^n + 1$.",
                        "Therefore $a_{10} = 2^{10} + 1$.",
                    ),
                    "a_{10} = 1025",
                ),
                (
                    Worked(
                        (
                            "The characteristic equation $r^2 - 3r + 2 = 0$ has roots 1 and 2, "
                            "and the initial values give $a_n = 2^n + 1$.",
                            "Then $a_{10}$ is $2^{10}$.",
                        ),
                        "a_{10} = 1024",
                    ),
                    Worked(
                        (
                            "Guessing from the first terms 2, 3, 7: the sequence roughly "
                            "triples, so $a_n = 3^n - 1$ fits after the start.",
                        ),
                        "a_{10} = 59048",
                    ),
                ),
            ),
        ),
    ),
)


def known_problem(prompt: str) -> Problem | None:
    return next((p for p in PROBLEMS if p.pattern.search(prompt)), None)


def _worked(w: Writer, part: Part) -> Worked:
    right = w.chance(right_chance(w.quality))
    if part.proof:  # a proof is not slipped but thinned: each step may be left out
        kept = tuple(s for s in part.right.steps if right or w.chance(right_chance(w.quality)))
        return Worked(kept or part.right.steps[:1], part.right.boxed)
    return part.right if right or not part.slips else w.rng.choice(part.slips)


def write_known(w: Writer, problem: Problem, remarks: Sequence[str]) -> None:
    """The worked solution, one section per part, then remarks until the budget is spent."""
    step = 1
    for part in problem.parts:
        if part.label:
            w.add(f"### ({part.label})")
        worked = _worked(w, part)
        for text in worked.steps:
            w.add(f"Step {step}: {text}")
            step += 1
        w.add(f"Therefore, $\\boxed{{{worked.boxed}}}$.")
    if not w.full():
        w.add("### Remarks")
    while not w.full():
        w.add(w.paragraph(remarks, {}))

"""Step-by-step math answers: the prompt's numbers worked through with real arithmetic.

The arithmetic is done, not faked: a strong model's equations are all true, while a weaker one
sometimes slips (a wrong product) and may forget to state its conclusion with "Therefore".
"""

from __future__ import annotations

import re

from nvfp4_tui.sim import mathbank
from nvfp4_tui.sim.writer import Writer

_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(%?)")
_PARTS = re.compile(r"\(([a-e])\)")
_DEFAULT_NUMBERS = (0.03, 0.95, 0.02, 12.0)
_MAX_NUMBERS = 8

_EXPLAIN = (
    "This quantity is what the question ultimately asks about.",
    "Keeping the intermediate result unrounded avoids errors later.",
    "Each factor here comes directly from the given data.",
    "The units cancel, so the result is a pure number.",
    "Writing the expression out first makes the next step mechanical.",
    "A quick sanity check: the value lies in a plausible range.",
    "The order of the operations matters here, so the parentheses are explicit.",
    "This is the step where most mistakes happen, so it is worth checking twice.",
    "Rounding only at the end keeps the final answer accurate to the digits shown.",
    "The intermediate value has a direct interpretation, which helps catch slips.",
)


def _numbers(prompt: str) -> list[float]:
    found = []
    for digits, percent in _NUMBER.findall(prompt):
        value = float(digits)
        found.append(value / 100 if percent else value)
    found = found[:_MAX_NUMBERS]
    return found if len(found) >= 2 else found + list(_DEFAULT_NUMBERS)


def _fmt(value: float) -> str:
    text = f"{value:.6g}"
    return text if "e" not in text else f"{value:.4e}"


def _steps(w: Writer, numbers: list[float], offset: int) -> tuple[list[tuple[str, str]], float]:
    """(what the step does, its equation) over the numbers, and the final value."""
    steps: list[tuple[str, str]] = []
    acc = numbers[offset % len(numbers)]
    for i in range(1, len(numbers)):
        x = numbers[(offset + i) % len(numbers)]
        op = w.rng.choice(("product", "sum", "complement", "ratio"))
        if op == "product":
            result, text = acc * x, f"{_fmt(acc)} \\times {_fmt(x)}"
            what = f"Multiply the running value by {_fmt(x)}"
        elif op == "sum":
            result, text = acc + x, f"{_fmt(acc)} + {_fmt(x)}"
            what = f"Add {_fmt(x)} to the running value"
        elif op == "complement" and 0 < x < 1:
            result, text = acc * (1 - x), f"{_fmt(acc)} \\times (1 - {_fmt(x)})"
            what = f"Scale by the complement of {_fmt(x)}"
        else:
            result = acc / (acc + x)
            text = f"\\frac{{{_fmt(acc)}}}{{{_fmt(acc)} + {_fmt(x)}}}"
            what = f"Normalise the running value against {_fmt(x)}"
        if w.chance((1.0 - w.quality) * 0.3):
            result *= w.rng.choice((0.9, 1.1, 10.0))  # the slip a weaker model makes
        steps.append((what, f"$$ x_{{{i}}} = {text} = {_fmt(result)} $$"))
        acc = result
    return steps, acc


def write_solution(w: Writer, prompt: str) -> None:
    """Given data, numbered steps with equations, a result per part; a strong model verifies
    its answer and states it with "Therefore"."""
    known = mathbank.known_problem(prompt)
    if known is not None:  # a shipped prompt: its real solution, so answers can be checked
        mathbank.write_known(w, known, _EXPLAIN)
        return
    numbers = _numbers(prompt)
    parts = _PARTS.findall(prompt) or [""]
    structured = w.chance(0.3 + w.quality * 0.7)
    if structured:
        given = "\n".join(f"- $a_{{{i + 1}}} = {_fmt(n)}$" for i, n in enumerate(numbers))
        w.add("**Given:**\n" + given)
    step = 1
    round_index = 0
    final = numbers[0]
    while not w.full():
        if round_index < len(parts):
            numbers_now = numbers
            if parts[round_index]:
                w.add(f"### ({parts[round_index]})")
        else:
            numbers_now = [n * w.rng.choice((0.5, 0.8, 1.25, 2.0)) for n in numbers]
            w.add(f"### Sensitivity check {round_index - len(parts) + 1}")
            w.add("Repeating the calculation with the inputs scaled shows how robust it is.")
        steps, final = _steps(w, numbers_now, round_index)
        for what, equation in steps:
            if w.full():
                break
            label = f"Step {step}: " if structured or w.chance(w.quality) else ""
            w.add(f"{label}{what}.\n\n{equation}\n\n{w.sentence(_EXPLAIN, {})}")
            step += 1
        w.add(f"This part gives {_fmt(final)}.")
        round_index += 1
    if w.chance(w.quality**2):
        w.add(
            "**Verification.** We show the result is consistent by substituting it back: "
            "every intermediate value above reproduces the next one."
        )
    if w.chance(0.3 + w.quality * 0.7):
        w.add(f"Therefore, the result is $\\boxed{{{_fmt(final)}}}$.")

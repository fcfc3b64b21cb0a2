"""The math scorer: final answers read from an answer and compared numerically, per sub-question.

Where an expected answer is looked for: the section of its sub-question when it names a ``part``
("(b)", "b)", "Part b" at the start of a line, up to the next sub-question's heading), else the
whole answer. Inside that scope the final answer is, in this order of preference: the last
"label = ..." when the answer names a ``label`` (``a_10`` also matches ``a_{10}``), the last
``\\boxed{...}``, the last "answer: ..." (or "answer is ..."), and else the last number. A final
expression in a sentence ends at its full stop, comma or a joining word; its candidates are the
numbers after its last "=" (``\\frac{6}{11} \\approx 0.545`` offers both). Numbers may be
written ``6/11``, ``\\frac{6}{11}``, ``-2.5``, ``1,025``, ``1e-3`` or ``54.5%`` (which also
offers 0.545). A candidate is right within the answer's tolerance (relative 1e-6 unless the suite
says otherwise), or when it is a decimal of at least 3 significant digits that equals the value
rounded to the decimals written (0.545 or 0.5455 for 6/11, not 0.55).

A required part (say "the closed form") is addressed when any of its keywords appears in the
answer, compared without case, spaces, braces or dollar signs, so ``2^{n} + 1`` finds ``2^n+1``.
The score is the share of answers and parts that are right, with one detail item each.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from nvfp4_tui.config.checks import MathAnswer, PromptCheck, RequiredPart

_NUM = (
    r"(?:(?<![\w)}\]])-)?(?<![\w.])"
    r"(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
)
_NUMBER = re.compile(
    rf"\\[dt]?frac\s*\{{\s*(?P<tn>{_NUM})\s*\}}\s*\{{\s*(?P<td>{_NUM})\s*\}}"
    rf"|(?P<sn>{_NUM})\s*/\s*(?P<sd>{_NUM})(?!\.?\d)"
    rf"|(?P<n>{_NUM})\s*(?P<pct>\\?%)?"
)
_ANSWER_LINE = re.compile(r"(?im)\b(?:final\s+)?answer\s*(?:is\b|[:：=])\s*(.+)$")
# Where a final expression written in a sentence ends: a full stop (not a decimal point), a
# comma or semicolon before a space, or a joining word.
_EXPRESSION_END = re.compile(r"(?<!\d)\.|\.(?!\d)|[,;](?=\s|$)|\s(?:and|so|which|since|because)\s")
_SIGNIFICANT_DIGITS = 3  # a rounded decimal must keep this many to count as the value
_BOXED = re.compile(r"\\boxed\s*\{")
_MATH_NOISE = re.compile(r"\\left|\\right|\\[,;!]|[\s{}$]")


@dataclass(frozen=True)
class Number:
    """A number as written: the values it may stand for, and its decimals when rounded."""

    values: tuple[float, ...]
    decimals: int | None = None  # None: exact (an integer ratio); else digits after the point
    significant: int = 0

    def matches(self, answer: MathAnswer) -> bool:
        """Within the answer's tolerance, or the expected value rounded as this one is."""
        for value in self.values:
            if math.isclose(value, answer.value, rel_tol=answer.rel_tol, abs_tol=answer.abs_tol):
                return True
            if self.decimals is not None and self.significant >= _SIGNIFICANT_DIGITS:
                half_ulp = 0.5 * 10.0**-self.decimals
                if abs(value - answer.value) <= half_ulp * (1 + 1e-9):
                    return True
        return False


@dataclass(frozen=True)
class ItemResult:
    name: str
    ok: bool
    note: str  # "ok", "got 0.5 want 6/11", "no section", ...


def _to_float(text: str) -> float:
    return float(text.replace(",", ""))


def _decimal(written: str, percent: bool) -> Number:
    value = _to_float(written)
    mantissa = re.split(r"[eE]", written.replace(",", "").lstrip("-"))[0]
    whole, _, fraction = mantissa.partition(".")
    if not fraction and "e" not in written.lower():
        exact = Number((value / 100, value) if percent else (value,))
        return exact if not percent else Number(exact.values, 2, len(whole.lstrip("0")))
    digits = (whole + fraction).lstrip("0")
    decimals = len(fraction) + (2 if percent else 0)
    values = (value / 100, value) if percent else (value,)
    return Number(values, decimals if "e" not in written.lower() else None, len(digits))


def numbers_in(text: str) -> list[Number]:
    """Each number written in ``text``, in order."""
    found: list[Number] = []
    for m in _NUMBER.finditer(text.replace("−", "-")):
        top, bottom = m.group("tn") or m.group("sn"), m.group("td") or m.group("sd")
        if top is not None and bottom is not None:
            denominator = _to_float(bottom)
            if denominator != 0:
                found.append(Number((_to_float(top) / denominator,)))
            continue
        found.append(_decimal(m.group("n"), bool(m.group("pct"))))
    return found


def _boxed(text: str) -> list[str]:
    """The contents of every ``\\boxed{...}``, braces matched."""
    contents = []
    for m in _BOXED.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        contents.append(text[m.end() : i - 1] if depth == 0 else text[m.end() :])
    return contents


def _label_pattern(label: str) -> re.Pattern[str]:
    """``a_10`` as written in prose or TeX: ``a_10``, ``a_{10}``, ``a10``, ``a(10)``."""
    runs = re.findall(r"[A-Za-z]+|\d+", label)
    gap = r"[\s_{}()\\]*"
    return re.compile(
        r"(?<![A-Za-z])" + gap.join(map(re.escape, runs)) + r"[\s}$)]*(?:=|\bis\b)\s*([^\n]+)"
    )


def final_expressions(scope: str, label: str | None) -> list[str]:
    """Where the final answer is written in ``scope``, most specific first (see the module doc)."""
    if label:
        labelled = _label_pattern(label).findall(scope)
        if labelled:
            return [_sentence_part(labelled[-1])]
    boxed = _boxed(scope)
    if boxed:
        return [boxed[-1]]
    lines = _ANSWER_LINE.findall(scope)
    return [_sentence_part(lines[-1])] if lines else []


def _sentence_part(text: str) -> str:
    """An expression written in a sentence, up to where the sentence moves on."""
    m = _EXPRESSION_END.search(text)
    return text[: m.start()] if m else text


def candidates(scope: str, label: str | None) -> tuple[list[Number], str]:
    """The numbers the answer gives as final in ``scope``, and how they were found."""
    for expression in final_expressions(scope, label):
        numbers = numbers_in(expression.rsplit("=", 1)[-1])
        if numbers:
            return numbers, "final"
    numbers = numbers_in(scope)
    return (numbers[-1:], "last number") if numbers else ([], "none")


def _part_header(part: str) -> re.Pattern[str]:
    p = re.escape(part)
    return re.compile(
        rf"(?im)^[ \t#>*_-]*(?:\*\*)?(?:part\s*\(?{p}\)?(?![\w])|\({p}\)|{p}\))", re.MULTILINE
    )


def part_sections(text: str, parts: Sequence[str]) -> dict[str, str]:
    """The text under each sub-question's first heading, up to the next one's."""
    starts: dict[str, int] = {}
    for part in dict.fromkeys(parts):
        m = _part_header(part).search(text)
        if m:
            starts[part] = m.start()
    ordered = sorted(starts.items(), key=lambda item: item[1])
    sections = {}
    for i, (part, start) in enumerate(ordered):
        end = ordered[i + 1][1] if i + 1 < len(ordered) else len(text)
        sections[part] = text[start:end]
    return sections


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def check_answer(answer: MathAnswer, scope: str | None) -> ItemResult:
    if scope is None:
        return ItemResult(answer.name, False, "no section")
    numbers, how = candidates(scope, answer.label)
    if not numbers:
        return ItemResult(answer.name, False, "no number")
    if any(number.matches(answer) for number in numbers):
        return ItemResult(answer.name, True, "ok")
    note = f"got {_fmt(numbers[0].values[0])} want {answer.text}"
    return ItemResult(answer.name, False, note if how == "final" else f"{note} (last number)")


def normalize_math(text: str) -> str:
    """Lower case without spaces, braces, dollars or TeX spacing; ×, · and \\cdot as *."""
    text = text.lower().replace("−", "-")
    for times in ("\\times", "\\cdot", "×", "·"):
        text = text.replace(times, "*")
    return _MATH_NOISE.sub("", text)


def check_part(part: RequiredPart, normalized_answer: str) -> ItemResult:
    found = any(normalize_math(k) in normalized_answer for k in part.keywords)
    return ItemResult(part.name, found, "ok" if found else "missing")


def score_math(check: PromptCheck, answer_text: str) -> tuple[float, str]:
    """The share of expected answers and required parts that the answer gets right."""
    sections = part_sections(answer_text, [a.part for a in check.answers if a.part])
    items = [
        check_answer(a, sections.get(a.part) if a.part else answer_text) for a in check.answers
    ]
    normalized = normalize_math(answer_text)
    items += [check_part(p, normalized) for p in check.parts]
    if not items:
        raise ValueError("a math check needs answers or parts")
    right = sum(item.ok for item in items)
    detail = "|".join([f"right:{right}/{len(items)}", *(f"{i.name}:{i.note}" for i in items)])
    return right / len(items), detail

"""Seed-comparable heuristic quality scores (0-1) of answers, with the seed's detail strings.

The text, code and math formulas are the seed's published method, pinned against its raw results
(``tests/scoring/test_seed_notes.py``); the tool-call score is ours (the seed's tool suite failed
before any call was scored). Only the answer (``content``) is scored, never the reasoning.

Choices the seed's data could not settle, or that it settles as noted:

- Keyword signs (step, proof, therefore, test, def, import...) ignore case: the seed tags
  answers whose opening (all it kept) shows only "Proof", "Therefore" or "Test", and never
  misses a tag its opening shows in any case. Symbol signs (``P(``, ``C(``, ``->``, ``=``) are
  matched as written.
- Words are runs of non-whitespace, as the seed counted them, so an unspaced Japanese essay
  has only a few "words" and earns almost no length points (the seed's Japanese rows show the
  same); kept so that scores stay comparable with the seed's tables.
- Paragraphs are the non-blank pieces between blank lines (lines of only spaces count as blank).
- Duplicate lines are the non-blank lines (stripped) minus the distinct ones among them.
- A code answer is "substantial" at 30 lines or more, counted as ``str.splitlines`` does.
- A blank answer scores 0 with detail ``empty`` (the seed's tag for it) rather than the 0.2 the
  text formula would give it for "no repetition".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from nvfp4_tui.config.suites import ExpectedCall, Prompt, Suite
from nvfp4_tui.scoring.choice_check import chosen_letter

# Subtracted from a tool-call score per call beyond the number expected.
EXTRA_CALL_PENALTY = 0.25
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_DIGIT = re.compile(r"\d")
Sign = tuple[str, float, Callable[[str, str], bool]]  # tag, points, test(text, lowered text)


def _any_of(*needles: str) -> Callable[[str, str], bool]:
    """A keyword test, case-insensitive (needles are lower case)."""
    return lambda _text, lowered: any(n in lowered for n in needles)


def paragraph_count(text: str) -> int:
    return sum(1 for part in _BLANK_LINE.split(text.replace("\r\n", "\n")) if part.strip())


def text_score(
    words: int, min_words: int, paragraphs: int, unique_ratio: float, duplicate_lines: int
) -> float:
    """The seed's prose formula: 3 + 3 + 2 + 2 points, over 10."""
    points = (
        2 * min(words / min_words, 1.5)  # at most 3, reached at 1.5 x min_words
        + min(0.75 * paragraphs, 3)
        + min(4 * unique_ratio, 2)
        + max(2 - 0.5 * duplicate_lines, 0)
    )
    return points / 10


def score_text(answer: str, min_words: int) -> tuple[float, str]:
    """Length, paragraphs, vocabulary and repetition, as the seed scored prose."""
    words = answer.split()
    unique_ratio = len({w.lower() for w in words}) / len(words) if words else 0.0
    paragraphs = paragraph_count(answer)
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    duplicate_lines = len(lines) - len(set(lines))
    score = text_score(len(words), min_words, paragraphs, unique_ratio, duplicate_lines)
    detail = f"words:{len(words)}|para:{paragraphs}|uniq:{unique_ratio:.2f}|dups:{duplicate_lines}"
    return score, detail


CODE_SIGNS: tuple[Sign, ...] = (
    ("has_def", 2.0, _any_of("def ", "class ")),
    ("typed", 1.5, lambda text, _: "->" in text or ": " in text),
    ("docstring", 1.0, lambda text, _: '"""' in text or "'''" in text),
    ("tests", 1.5, _any_of("assert ", "test")),
    ("error_handling", 1.0, _any_of("try:", "raise ")),
    ("async", 1.0, _any_of("async ", "await ")),
    ("substantial", 1.0, lambda text, _: len(text.splitlines()) >= 30),
    ("imports", 1.0, _any_of("import ")),
)

MATH_SIGNS: tuple[Sign, ...] = (
    ("step", 2.0, _any_of("step")),
    (
        "formula",
        2.0,
        lambda text, low: any(s in text for s in ("=", "P(", "C(", "∑")) or "sum" in low,
    ),
    ("numbers", 1.0, lambda text, _: _DIGIT.search(text) is not None),
    ("therefore", 1.5, _any_of("therefore", "thus", "hence", "so the answer")),
    ("proof", 2.0, _any_of("proof", "qed", "proven", "we show")),
    ("structured", 1.5, lambda text, _: paragraph_count(text) >= 2),
)


def score_signs(answer: str, signs: Sequence[Sign]) -> tuple[float, str]:
    """The points of every sign found, over 10 (capped at 1); detail lists the tags found."""
    lowered = answer.lower()
    found = [(tag, points) for tag, points, test in signs if test(answer, lowered)]
    score = min(sum(points for _, points in found) / 10, 1.0)
    return score, "|".join(tag for tag, _ in found) or "none"


def _same_literal(expected: Any, actual: Any) -> bool:
    """Strings ignore case and surrounding space; numbers compare by value; lists ignore order."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, int | float):
        return isinstance(actual, int | float) and math.isclose(expected, actual, abs_tol=1e-9)
    if isinstance(expected, str):
        return isinstance(actual, str) and expected.strip().casefold() == actual.strip().casefold()
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return False
        left = list(actual)
        for item in expected:
            match = next((i for i, a in enumerate(left) if _same_literal(item, a)), None)
            if match is None:
                return False
            left.pop(match)
        return True
    return False


def meets(expected: Any, actual: Any) -> bool:
    """Whether an argument value satisfies an expected literal or constraint table."""
    if not isinstance(expected, dict):
        return _same_literal(expected, actual)
    is_number = isinstance(actual, int | float) and not isinstance(actual, bool)
    if "contains" in expected and not (
        isinstance(actual, str) and expected["contains"].casefold() in actual.casefold()
    ):
        return False
    if "one_of" in expected and not any(_same_literal(o, actual) for o in expected["one_of"]):
        return False
    if "min" in expected and not (is_number and actual >= expected["min"]):
        return False
    return "max" not in expected or (is_number and actual <= expected["max"])


def _call_arguments(call: dict[str, Any]) -> dict[str, Any] | None:
    """A call's arguments as a JSON object; None when they do not parse as one."""
    raw = call.get("arguments")
    if not isinstance(raw, str):
        return None
    if not raw.strip():  # some servers send "" for a call without arguments
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def matched_calls(
    expected: Sequence[ExpectedCall], calls: Sequence[tuple[Any, dict[str, Any] | None]]
) -> int:
    """The most expected calls that distinct calls satisfy: a maximum bipartite matching (by
    augmenting paths), so parallel calls may come in any order. ``calls`` are (name, arguments)
    pairs; arguments of None (they did not parse) satisfy nothing."""
    fits = [
        [
            j
            for j, (name, arguments) in enumerate(calls)
            if name == e.name
            and arguments is not None
            and all(k in arguments and meets(v, arguments[k]) for k, v in e.arguments.items())
        ]
        for e in expected
    ]
    holder: dict[int, int] = {}  # actual call -> the expected call it satisfies

    def place(i: int, tried: set[int]) -> bool:
        for j in fits[i]:
            if j not in tried:
                tried.add(j)
                if j not in holder or place(holder[j], tried):
                    holder[j] = i
                    return True
        return False

    return sum(place(i, set()) for i in range(len(expected)))


def score_tool_calls(
    expected: Sequence[ExpectedCall], answer: str, tool_calls: Sequence[dict[str, Any]]
) -> tuple[float, str]:
    """Share of the expected calls made (any order), less EXTRA_CALL_PENALTY per surplus call."""
    if not expected:
        raise ValueError("a tool-call prompt needs at least one expected call")
    if not tool_calls:
        return 0.0, "text_only" if answer.strip() else "no_call"
    calls = [(call.get("name"), _call_arguments(call)) for call in tool_calls]
    bad_json = sum(arguments is None for _, arguments in calls)
    matched = matched_calls(expected, calls)
    extra = max(len(calls) - len(expected), 0)
    score = max(matched / len(expected) - EXTRA_CALL_PENALTY * extra, 0.0)
    detail = (
        f"calls:{len(calls)}|matched:{matched}/{len(expected)}|extra:{extra}|bad_json:{bad_json}"
    )
    return score, detail


def score_answer(
    suite: Suite, prompt: Prompt, answer_text: str, tool_calls: list[dict] | None
) -> tuple[float, str] | None:
    """The heuristic score of one answer and its detail string, by the suite's kind; None for
    a synthetic prompt, which asks for a length, not an answer, and for a context ladder's,
    whose answer is checked exactly (``recall``) and has nothing else to judge.

    ``tool_calls`` items are ``{"id", "name", "arguments"}`` with arguments as a JSON string;
    arguments that do not parse as a JSON object match no expected call.
    """
    if suite.kind in ("synthetic", "context"):
        return None
    if suite.kind == "tool_call":
        return score_tool_calls(prompt.expected_calls, answer_text, tool_calls or [])
    if not answer_text.strip():
        return 0.0, "empty"
    if suite.kind == "code":
        return score_signs(answer_text, CODE_SIGNS)
    if suite.kind == "math":
        return score_signs(answer_text, MATH_SIGNS)
    if suite.kind == "choice":  # the seed had none: whether the answer picks one option at all
        letter = chosen_letter(answer_text)
        return (1.0, f"chose:{letter}") if letter else (0.0, "chose:none")
    if suite.min_words is None:
        raise ValueError(f"suite {suite.name!r} of kind text has no min_words")
    return score_text(answer_text, suite.min_words)

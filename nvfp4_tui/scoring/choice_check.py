"""The multiple-choice scorer: the option letter an answer chooses, compared with the right one.

Which letter the answer chooses, in this order of preference: the last ``\\boxed{B}``; the last
"answer: B" / "answer is (B)" / "option B"; else an answer that is a letter alone, at most
with brackets, a full stop, or its option's text after it ("B", "(B)", "B. Paris"). An answer
that names no letter in one of those ways chooses nothing and scores 0, as a wrong one does.
"""

from __future__ import annotations

import re

from nvfp4_tui.config.checks import PromptCheck

_LETTER = r"\(?\*{0,2}([A-Z])\*{0,2}\)?(?![A-Za-z])"
_BOXED = re.compile(r"\\boxed\s*\{\s*(?:\\text\s*\{\s*)?([A-Z])\b")
_STATED = re.compile(
    rf"(?i:\b(?:final\s+)?answer\s*(?:is\b|[:：=])|\boption\b|\bchoice\b)\s*(?:is\s*)?{_LETTER}"
)
_ALONE = re.compile(rf"^\s*{_LETTER}\s*(?:[.:)]|$)")


def chosen_letter(answer_text: str) -> str | None:
    """The option letter the answer chooses, or None when it names none (see the module doc)."""
    for pattern in (_BOXED, _STATED):
        found = pattern.findall(answer_text)
        if found:
            return str(found[-1])
    alone = _ALONE.match(answer_text.strip())
    return alone.group(1) if alone else None


def score_choice(check: PromptCheck, answer_text: str) -> tuple[float, str]:
    """1 when the chosen letter is the right one, else 0; the detail says what was chosen."""
    if check.choice is None:
        raise ValueError("a choice check needs the right letter")
    letter = chosen_letter(answer_text)
    if letter is None:
        return 0.0, f"chose:none|want:{check.choice}"
    return float(letter == check.choice), f"chose:{letter}|want:{check.choice}"

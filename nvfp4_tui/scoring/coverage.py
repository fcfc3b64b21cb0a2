"""Coverage of the parts a prompt asks for: which required parts an answer addresses.

A part is addressed when any one of its keywords (declared per prompt in the suite file) occurs
in the answer, compared without case and with runs of whitespace as one space. Keywords are a
cheap, transparent test: they say that the answer talks about a part, not that it is right.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nvfp4_tui.config.checks import RequiredPart

_SPACES = re.compile(r"\s+")
_MISSING_NAMES = 4  # named in the detail; the rest are counted


def normalize_text(text: str) -> str:
    return _SPACES.sub(" ", text).casefold()


def missing_parts(parts: Sequence[RequiredPart], answer_text: str) -> list[str]:
    """The names of the parts that no keyword of theirs marks as addressed."""
    text = normalize_text(answer_text)
    return [p.name for p in parts if not any(normalize_text(k) in text for k in p.keywords)]


def coverage(parts: Sequence[RequiredPart], answer_text: str) -> tuple[float, str]:
    """The share of the parts addressed, and a detail such as ``parts:3/5 missing:a,b``."""
    if not parts:
        raise ValueError("coverage needs at least one required part")
    missing = missing_parts(parts, answer_text)
    detail = f"parts:{len(parts) - len(missing)}/{len(parts)}"
    if missing:
        named = ",".join(missing[:_MISSING_NAMES])
        more = f"+{len(missing) - _MISSING_NAMES}" if len(missing) > _MISSING_NAMES else ""
        detail += f" missing:{named}{more}"
    return 1 - len(missing) / len(parts), detail

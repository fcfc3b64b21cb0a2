"""``recall``: the facts a context-ladder prompt hid, found in the answer (``config.context_ladder``).

A fact is found when the first six-digit number after its name (and before the next name the
answer gives) is its code: "amber fox: 482913" and "The amber fox's code is 482913" count, a
right code under another name does not. The score is the share found; the detail names each
depth's result (``core.figures.context.recall_detail``), which the ladder's recall by depth reads.
"""

from __future__ import annotations

import re

from nvfp4_tui.config.checks import PromptCheck
from nvfp4_tui.core.figures.context import recall_detail

_CODE = re.compile(r"(?<!\d)\d{6}(?!\d)")
_SPACES = re.compile(r"\s+")


def score_recall(check: PromptCheck, answer: str) -> tuple[float, str]:
    if not check.facts:
        raise ValueError("scorer recall: the prompt hides no facts")
    text = _SPACES.sub(" ", answer.lower())
    places = {fact.name: text.find(fact.name.lower()) for fact in check.facts}
    starts = sorted(p for p in places.values() if p >= 0)
    found = []
    for fact in check.facts:
        start = places[fact.name]
        hit = False
        if start >= 0:
            after = start + len(fact.name)
            end = next((p for p in starts if p >= after), len(text))
            code = _CODE.search(text, after, end)
            hit = code is not None and code[0] == fact.code
        found.append((fact.depth, hit))
    return sum(hit for _, hit in found) / len(found), recall_detail(found)

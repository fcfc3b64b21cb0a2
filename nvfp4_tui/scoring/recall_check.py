"""``recall``: the facts a context-ladder prompt hid, found in the answer (``config.context_ladder``).

A fact is found when, at some mention of its name, the first six-digit number after it on the
same line (and before the next name) is its code: "amber fox: 482913", "Amber-fox - 482913"
and "The amber fox's code is 482913" count, a right code under another name does not, nor one
on another line. The score is the share found; the detail names each depth's result
(``core.figures.context.recall_detail``), which the ladder's recall by depth reads. An empty
answer found none: its detail says so at every depth.
"""

from __future__ import annotations

import re

from nvfp4_tui.config.checks import PromptCheck
from nvfp4_tui.core.figures.context import recall_detail

_CODE = re.compile(r"(?<!\d)\d{6}(?!\d)")
_JOINERS = re.compile(r"[ \t_-]+")  # "amber-fox", "amber  fox": the same name


def score_recall(check: PromptCheck, answer: str) -> tuple[float, str]:
    if not check.facts:
        raise ValueError("scorer recall: the prompt hides no facts")
    text = _JOINERS.sub(" ", answer.lower())
    mentions = {
        fact.name: [m.end() for m in re.finditer(re.escape(fact.name.lower()), text)]
        for fact in check.facts
    }
    starts = sorted(end - len(name) for name, ends in mentions.items() for end in ends)
    found = []
    for fact in check.facts:
        hit = False
        for after in mentions[fact.name]:
            line_end = text.find("\n", after)
            end = min(
                line_end if line_end >= 0 else len(text),
                next((p for p in starts if p >= after), len(text)),
            )
            code = _CODE.search(text, after, end)
            if code is not None and code[0] == fact.code:
                hit = True
                break
        found.append((fact.depth, hit))
    return sum(hit for _, hit in found) / len(found), recall_detail(found)

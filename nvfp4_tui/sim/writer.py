"""Shared machinery of the simulated answers: slot-filled sentences within a token budget.

A ``Writer`` collects an answer block by block until it reaches its token target. Its quality
(0..1) decides how a simulated model writes: a weaker one repeats earlier sentences and packs
more sentences into fewer paragraphs, which is what the heuristic scorers notice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from random import Random

from nvfp4_tui.sim.tokens import count_tokens

Slots = Mapping[str, Sequence[str]]

_FRESH_TRIES = 8  # draws before accepting a sentence already written
_SLOT = re.compile(r"\{(\w+)\}")
_WORD = re.compile(r"[A-Za-z][A-Za-z-]{4,}")
_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•]|\(?[a-z]\))\s+(.+?)\s*$", re.MULTILINE)
_STOPWORDS_TEXT = """about above after again against being below between could doing during every further
    having their there these those through under until where which while would should shall
    write using include includes including please provide explain answer question following
    words essay clear proper structure section sections response detailed complete example
    examples least within without other another first second third above below given based
    before because whether really things thing making number critical analyzing analyse analyze
    address describe discuss general specific"""
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
_NOUN_ENDINGS = ("tion", "sion", "ment", "ness", "ity", "ism", "ence", "ance", "ship", "ogy", "ure")


class Writer:
    """Accumulates an answer's blocks until ``target_tokens``; lower quality repeats itself."""

    def __init__(self, rng: Random, quality: float, target_tokens: int) -> None:
        self.rng = rng
        self.quality = quality
        self.target_tokens = target_tokens
        self.blocks: list[str] = []
        self.tokens = 0
        self._said: list[str] = []
        self._said_set: set[str] = set()
        self._paragraphs: list[str] = []

    @property
    def repeat_rate(self) -> float:
        return (1.0 - self.quality) * 0.5

    def full(self) -> bool:
        return self.tokens >= self.target_tokens

    def add(self, block: str) -> None:
        if self.blocks:
            self.tokens += 1  # the blank line between blocks
        self.blocks.append(block)
        self.tokens += count_tokens(block)

    def chance(self, probability: float) -> bool:
        return self.rng.random() < probability

    def fill(self, template: str, slots: Slots) -> str:
        return _SLOT.sub(lambda m: self.rng.choice(slots[m.group(1)]), template)

    def sentence(self, templates: Sequence[str], slots: Slots) -> str:
        """A fresh sentence, or (at the repeat rate) one already written."""
        if self._said and self.chance(self.repeat_rate):
            return self.rng.choice(self._said)
        for _ in range(_FRESH_TRIES):
            text = self.fill(self.rng.choice(templates), slots)
            text = text[:1].upper() + text[1:]
            if text not in self._said_set:
                break
        self._said.append(text)
        self._said_set.add(text)
        return text

    def room(self) -> int:
        return self.target_tokens - self.tokens

    def paragraph(
        self, templates: Sequence[str], slots: Slots, joiner: str = " ", reserve: int = 0
    ) -> str:
        """Sentences up to the paragraph length this quality writes, within the room left
        (less ``reserve`` tokens kept for what must follow); now and then, at half the repeat
        rate, a weaker model repeats a whole earlier paragraph."""
        if self._paragraphs and self.chance(self.repeat_rate / 2):
            return self.rng.choice(self._paragraphs)
        sentences = [self.sentence(templates, slots)]
        size = count_tokens(sentences[0])
        for _ in range(self.sentences_per_paragraph() - 1):
            if size >= self.room() - reserve:
                break
            sentences.append(self.sentence(templates, slots))
            size += count_tokens(sentences[-1]) + 1
        self._paragraphs.append(joiner.join(sentences))
        return self._paragraphs[-1]

    def sentences_per_paragraph(self) -> int:
        low = 3 + round((1.0 - self.quality) * 5)
        return self.rng.randint(low, low + 2)

    def text(self) -> str:
        return "\n\n".join(self.blocks)


def topic_terms(prompt: str, limit: int = 8) -> list[str]:
    """Distinctive words of the prompt, nouns first, each group in order of appearance."""
    seen: list[str] = []
    for word in _WORD.findall(prompt):
        lower = word.lower().strip("-")
        if lower not in _STOPWORDS and lower not in seen:
            seen.append(lower)
    nouns = [w for w in seen if w.endswith(_NOUN_ENDINGS)]
    if len(nouns) >= 3:
        return nouns[:limit]
    return (nouns + [w for w in seen if w not in nouns])[:limit]


def decapitalise(text: str) -> str:
    """Lower-case a leading capital unless the word is an acronym (``AI``)."""
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


def clauses(prompt: str, limit: int = 6) -> list[str]:
    """The prompt cut at sentence and clause punctuation, for prompts without list items."""
    parts = [p.strip(" 「」\"'") for p in re.split(r"[、。,.;:!?？！\n]+", prompt)]
    return [p for p in parts if len(p) >= 4][:limit]


def numbered_items(prompt: str, limit: int = 8) -> list[str]:
    """The prompt's list items (``1. ...``, ``- ...``, ``(a) ...``), shortened to titles."""
    items = []
    for match in _ITEM.finditer(prompt):
        text = match.group(1).rstrip(".:;")
        items.append(text if len(text) <= 70 else text[:67].rsplit(" ", 1)[0] + "...")
        if len(items) == limit:
            break
    return items


def first_line(prompt: str, width: int = 90) -> str:
    line = prompt.strip().splitlines()[0] if prompt.strip() else ""
    return line if len(line) <= width else line[: width - 3].rsplit(" ", 1)[0] + "..."

"""The context ladder: prompts filled to target lengths (1K, 4K ... 128K tokens), each hiding
facts at several depths and asking for them back, so one run measures what a long context costs
(TTFT, prefill and decode speed by length) and whether the model still finds what it was told
far into it (recall by length and depth, checked exactly).

``--context-lengths 1k,4k,16k,max`` (or ``[run] context_lengths``) makes one suite per rung,
``context_1k``, ``context_4k``..., so each length runs as its own phase at each load level: the
server's queue and KV cache can then be read per length (``core.figures.context``'s capacity).
``max`` is each endpoint's own context (``max_model_len`` from ``/v1/models``, less the answer
and the chat template's room); a longer rung is capped to it, so ``128k`` on a model of 128K
tokens runs as long as that model can take.

A prompt is short common words (one token each, ``config.synthetic``) with a sentence per fact
("The pass code of the amber fox is 482913.") set at its depth (0: the first words, 1: the
last), then a question naming every fact. Its text is built when it is sent, never held: a 128K
prompt is half a megabyte. The scorer ``recall`` looks for each fact's code after a mention of
its name, on the same line; a fact found is exactly that, never partly.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from random import Random

from nvfp4_tui.config.checks import RecallFact
from nvfp4_tui.config.synthetic import words_of
from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.core.figures.context import CONTEXT_SUITE_PREFIX

MIN_CONTEXT = 256  # tokens: below this the facts and the question are most of the prompt
MAX_CONTEXT = 1 << 21
DEPTHS = (0.0, 0.5, 1.0)  # start, middle, end
PROMPTS_PER_RUNG = 2
ANSWER_TOKENS = 256  # three "name: code" lines, with room for a short thought before them
# Tokens of a prompt that are not filler: the header, the question and each fact's sentence
# and mention, estimated high for tokenizers that cut digits one by one; the chat template's
# own few come on top, which the server's usage shows.
_FIXED_TOKENS = 100
TEMPLATE_ROOM = 64  # the chat template's tokens around the prompt, with room to spare
_TOKENS_PER_FACT = 24
_HEAD_WORDS = 64
_BASE_WORDS = 16_384
_LENGTH = re.compile(r"^(\d+)(k?)$")
CONTEXT_EXAMPLE = "1k,4k,16k,max"
_COLOURS = [
    "amber",
    "azure",
    "black",
    "coral",
    "green",
    "grey",
    "ivory",
    "olive",
    "pink",
    "red",
    "silver",
    "white",
]
_ANIMALS = [
    "badger",
    "crane",
    "deer",
    "eagle",
    "falcon",
    "fox",
    "heron",
    "lynx",
    "otter",
    "owl",
    "raven",
    "wolf",
]


@dataclass(frozen=True)
class ContextLadder:
    """The rungs asked for, in tokens; None is each endpoint's own context."""

    lengths: tuple[int | None, ...]
    prompts: int = PROMPTS_PER_RUNG
    depths: tuple[float, ...] = DEPTHS
    seed: int = 0


def rung_label(length: int | None) -> str:
    """``1k`` for 1024, ``1500`` for 1500, ``max`` for the endpoint's own context."""
    if length is None:
        return "max"
    return f"{length // 1024}k" if length % 1024 == 0 else str(length)


def rung_suite(length: int | None) -> str:
    return f"{CONTEXT_SUITE_PREFIX}{rung_label(length)}"


def rungs(ladder: ContextLadder) -> list[int | None]:
    """Its lengths, shortest first, ``max`` last."""
    return sorted(ladder.lengths, key=lambda length: (length is None, length or 0))


def ladder_suites(ladder: ContextLadder) -> list[str]:
    """The names of the suites it makes, in the order they run."""
    return [rung_suite(length) for length in rungs(ladder)]


def parse_context_lengths(text: str, where: str) -> ContextLadder:
    """``1k,4k,16k,max`` as a ladder (k is 1024 tokens); ConfigError names ``where``."""
    lengths: list[int | None] = []
    for part in (p.strip().lower() for p in text.split(",")):
        found = _LENGTH.match(part)
        length = None if found is None else int(found[1]) * (1024 if found[2] else 1)
        if part != "max" and (length is None or not MIN_CONTEXT <= length <= MAX_CONTEXT):
            raise ConfigError(
                [
                    f"{where}: expected lengths from {MIN_CONTEXT} to {MAX_CONTEXT // 1024}k "
                    f"tokens or max, such as {CONTEXT_EXAMPLE}, got {part!r}"
                ]
            )
        if length in lengths:
            raise ConfigError([f"{where}: {rung_label(length)} is given twice"])
        lengths.append(length)
    return ContextLadder(tuple(lengths))


def longest(max_model_len: int) -> int:
    """The longest prompt whose template and answer fit an endpoint's context, with 2% of it
    to spare for a tokenizer that cuts one filler otherwise than another."""
    return max_model_len - ANSWER_TOKENS - TEMPLATE_ROOM - max_model_len // 50


@dataclass(frozen=True)
class PromptTokens:
    """How an endpoint's tokenizer counts a ladder prompt: the tokens of all but its filler
    (header, facts, question and the chat template) and the tokens a filler word takes,
    each None until its usage told (``learned``). The models we serve take a token a word;
    the real-server stage's tiny tokenizer, trained on a small corpus, about three."""

    fixed: float | None = None
    per_word: float | None = None

    def filler_words(self, tokens_in: int, facts: int) -> int:
        fixed = self.fixed if self.fixed is not None else _FIXED_TOKENS + _TOKENS_PER_FACT * facts
        return max(int((tokens_in - fixed) / (self.per_word or 1.0)), 0)

    def learned(self, haystack: Haystack, counted: int) -> PromptTokens:
        """With the server's count of ``haystack`` as sent: a prompt of no filler tells the
        fixed part, one with filler the tokens a word over it."""
        words = haystack.filler_words
        if words == 0:
            return replace(self, fixed=float(counted))
        if words is None or self.fixed is None:
            return self
        return replace(self, per_word=max((counted - self.fixed) / words, 0.1))


@dataclass(frozen=True)
class Haystack:
    """One ladder prompt: ``tokens_in`` tokens (None: sized to the endpoint when sent) of filler
    with ``facts`` set at their depths. ``text()`` builds it; the filler is its ``key``'s."""

    tokens_in: int | None
    facts: tuple[RecallFact, ...]
    key: str
    filler_words: int | None = None  # what sizing to an endpoint's tokenizer set (``sized``)

    def sized(
        self, max_model_len: int | None, tokens: PromptTokens = PromptTokens()
    ) -> Haystack | None:
        """This prompt as one endpoint is sent it: as many filler words as make ``tokens_in``
        of its tokens; the ``max`` rung, and any longer, filled to its context. None when that
        is unknown (``max``) or too short for a ladder prompt. A context unknown leaves a rung
        as asked: the server judges."""
        length = self.tokens_in
        if max_model_len is not None:
            cap = longest(max_model_len)
            if cap < MIN_CONTEXT:
                return None
            length = cap if length is None else min(length, cap)
        if length is None:
            return None
        return replace(
            self, tokens_in=length, filler_words=tokens.filler_words(length, len(self.facts))
        )

    def probe(self, filler_words: int) -> Haystack:
        """A short prompt of this kind with ``filler_words`` (the warm-up's, a calibration's)."""
        return replace(
            self, tokens_in=MIN_CONTEXT, key=f"probe|{self.key}", filler_words=filler_words
        )

    def sent(self, salt: str) -> Haystack:
        """This prompt with filler of its own for one send: the same facts at the same depths,
        but no prefix a server cached from an earlier send (vLLM caches by default), so every
        send's TTFT is a whole prefill."""
        return replace(self, key=f"{self.key}|{salt}")

    def text(self) -> str:
        if self.tokens_in is None:
            raise ValueError(f"haystack {self.key}: sized() gives it its length first")
        filler = self.filler_words
        if filler is None:
            filler = PromptTokens().filler_words(self.tokens_in, len(self.facts))
        facts = sorted(self.facts, key=lambda f: f.depth)
        pieces = _filler(
            Random(f"haystack|{self.key}"), filler, [round(f.depth * filler) for f in facts]
        )
        filled = [pieces[0]]
        for fact, piece in zip(facts, pieces[1:], strict=True):
            filled += [fact_sentence(fact), piece]
        names = _listed([f"the {fact.name}" for fact in self.facts])
        return (
            f"Below is a long text of words. Hidden in it are {len(self.facts)} sentences, each "
            "giving the pass code of a named animal. Read all of it, then answer the question "
            f"at the end.\n\n{' '.join(part for part in filled if part)}\n\nQuestion: what are the pass codes of {names}? "
            "Answer with one line for each, written as name: code, and nothing else."
        )


@lru_cache(maxsize=1)
def _base_cycle() -> tuple[str, tuple[int, ...]]:
    """The shared filler: its words as one text (each with a space after it), and where each
    word starts in it."""
    words = words_of(Random("haystack-base"), _BASE_WORDS).split(" ")
    starts = tuple(itertools.accumulate((len(w) + 1 for w in words[:-1]), initial=0))
    return "".join(f"{w} " for w in words), starts


def _filler(rng: Random, count: int, cuts: Sequence[int]) -> list[str]:
    """``count`` words as text, in pieces cut before each word index of ``cuts`` (ascending):
    a head drawn for this prompt (its own first blocks, so nothing of it is in a server's
    prefix cache, whose block names chain from the first), then the shared words from a place
    of its own, repeated as far as needed. Sliced from one text, not joined word by word: a
    128K-token prompt is built in a millisecond or two, on the loop that times the rest."""
    head = words_of(rng, min(count, _HEAD_WORDS)).split(" ") if count else []
    cycle, starts = _base_cycle()
    start = rng.randrange(len(starts))
    body = cycle * ((start + count) // len(starts) + 1)

    def offset(word: int) -> int:
        at = start + word
        return at // len(starts) * len(cycle) + starts[at % len(starts)]

    def span(low: int, high: int) -> str:
        parts = [" ".join(head[low:high])] if low < len(head) else []
        first, last = max(low - len(head), 0), max(high - len(head), 0)
        if last > first:
            parts.append(body[offset(first) : offset(last) - 1])  # less the last word's space
        return " ".join(part for part in parts if part)

    edges = [0, *cuts, count]
    return [span(low, high) for low, high in itertools.pairwise(edges)]


def fact_sentence(fact: RecallFact) -> str:
    return f"The pass code of the {fact.name} is {fact.code}."


_SENTENCE = re.compile(r"The pass code of the ([a-z]+ [a-z]+) is (\d{6})\.")
QUESTION_MARK = "Question: what are the pass codes of "


def hidden_facts(text: str) -> list[tuple[float, str, str]]:
    """The facts a ladder prompt hides, as (depth, name, code): what a simulated model reads.
    Depth is the sentence's place in the text, 0 to 1; none for any other prompt."""
    if QUESTION_MARK not in text:
        return []
    end = text.index(QUESTION_MARK)
    return [
        (round(m.start() / max(end, 1), 3), m[1], m[2]) for m in _SENTENCE.finditer(text, 0, end)
    ]


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def ladder_facts(ladder: ContextLadder, length: int | None, index: int) -> tuple[RecallFact, ...]:
    """One prompt's facts: a distinct name and a six-digit code at each depth."""
    rng = Random(f"ladder-facts|{ladder.seed}|{rung_label(length)}|{index}")
    names = rng.sample([f"{c} {a}" for c in _COLOURS for a in _ANIMALS], len(ladder.depths))
    return tuple(
        RecallFact(depth, name, str(rng.randint(100_000, 999_999)))
        for depth, name in zip(ladder.depths, names, strict=True)
    )


__all__ = [
    "ANSWER_TOKENS",
    "CONTEXT_EXAMPLE",
    "CONTEXT_SUITE_PREFIX",
    "ContextLadder",
    "Haystack",
    "PromptTokens",
    "hidden_facts",
    "ladder_facts",
    "ladder_suites",
    "longest",
    "parse_context_lengths",
    "rung_label",
    "rung_suite",
    "rungs",
]

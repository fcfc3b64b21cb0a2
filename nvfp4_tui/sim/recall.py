"""What a simulated model recalls of the facts a context-ladder prompt hides
(``config.context_ladder``): each fact is found with a chance that falls with the context's
length (``SimSpec.recall_curve``, the chance mid-context, linear between its points and flat
past its ends) and with the fact's depth, models missing most in the middle and least at the
ends ("lost in the middle"); a weaker model (lower ``quality``) misses more. A miss gives a
wrong code, as a model that half-remembers does. The KV cache's dtype changes nothing: the
seed's FP8-KV experiment found quality preserved.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from random import Random

from nvfp4_tui.config.context_ladder import hidden_facts
from nvfp4_tui.config.profile import SimSpec

_END_SHARE = 0.4  # a fact at the very start or end is missed this share as often as mid-context


def _mid_chance(curve: Sequence[tuple[int, float]], tokens: int) -> float:
    if tokens <= curve[0][0]:
        return curve[0][1]
    for (t0, c0), (t1, c1) in pairwise(curve):
        if tokens <= t1:
            return c0 + (c1 - c0) * (tokens - t0) / (t1 - t0)
    return curve[-1][1]


def recall_chance(spec: SimSpec, tokens: int, depth: float) -> float:
    """The chance of recalling a fact at ``depth`` (0 to 1) of a ``tokens``-long context."""
    miss = (1.0 - _mid_chance(spec.recall_curve, tokens)) * (1.5 - spec.quality)
    shape = _END_SHARE + (1.0 - _END_SHARE) * 4.0 * depth * (1.0 - depth)
    return min(max(1.0 - miss * shape, 0.0), 1.0)


def recall_answer(spec: SimSpec, prompt: str, rng: Random) -> str | None:
    """One line per fact the prompt hides, "name: code", the code right when recalled; None
    for a prompt that hides none."""
    facts = hidden_facts(prompt)
    if not facts:
        return None
    tokens = prompt.count(" ") + 1  # the filler's words are a token each
    lines = []
    for depth, name, code in facts:
        said = code
        if rng.random() >= recall_chance(spec, tokens, depth):
            said = str((int(code) + rng.randint(1, 899_998) - 100_000) % 900_000 + 100_000)
        lines.append(f"{name}: {said}")
    return "\n".join(lines)

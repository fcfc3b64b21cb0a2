"""A guess at a model's class (MoE or dense) and active parameters from its name, for ``init``.

Names say more than nothing: ``Qwen3-30B-A3B`` is a mixture of experts with 3B active,
``Llama-4-Scout-17B-16E`` has 16 experts, ``Mixtral-8x7B`` 8, and a name with only a size
(``Qwen3.5-27B``) is most likely dense. A few well-known families say nothing in their names
(``gpt-oss-20b``, the seed's ``gemma-4-26B``) and are looked up. The profile says it is a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nvfp4_tui.config.profile import ModelClass

_NUMBER = r"(\d+(?:\.\d+)?)"
_ALONE = r"(?![a-z0-9])"  # no letter or digit of the name's own after (case aside)
# "-A3B", "_a22b" after a total: billions active.
_ACTIVE = re.compile(r"(?<![a-z0-9])a" + _NUMBER + "b" + _ALONE, re.I)
_EXPERTS = re.compile(r"(?<![a-z0-9.])" + _NUMBER + r"b[-_](\d+)e" + _ALONE, re.I)  # "17B-16E"
_TIMES = re.compile(r"(?<![a-z0-9.])(\d+)x" + _NUMBER + "b" + _ALONE, re.I)  # "8x7B"
_MOE = re.compile(r"(?<![a-z])moe(?![a-z])", re.I)
_SIZE = re.compile(r"(?<![a-z0-9.])" + _NUMBER + "b" + _ALONE, re.I)  # "27B", "1.5b"
# Families whose names give no hint: (family, pattern, active billions, experts), the makers'
# figures (the seed's for gemma-4 26B).
_FAMILIES: tuple[tuple[str, re.Pattern[str], float, int], ...] = (
    ("gpt-oss-20b", re.compile(r"gpt-oss-20b", re.I), 3.6, 32),
    ("gpt-oss-120b", re.compile(r"gpt-oss-120b", re.I), 5.1, 128),
    ("gemma 4 26B", re.compile(r"gemma-?4\b.*?26b", re.I), 3.8, 128),
    ("Mixtral 8x7B", re.compile(r"mixtral-8x7b", re.I), 12.9, 8),
    ("Mixtral 8x22B", re.compile(r"mixtral-8x22b", re.I), 39.0, 8),
    ("Llama 4 Scout", re.compile(r"llama-4-scout", re.I), 17.0, 16),
    ("Llama 4 Maverick", re.compile(r"llama-4-maverick", re.I), 17.0, 128),
    ("DeepSeek V3/R1", re.compile(r"deepseek-(?:v3|r1)(?!.*distill)", re.I), 37.0, 256),
    ("Kimi K2", re.compile(r"kimi-k2", re.I), 32.0, 384),
)


@dataclass(frozen=True, slots=True)
class ClassGuess:
    name: str  # the name it was read from
    why: str  # what in the name it rests on
    model_class: ModelClass
    active_params_b: float | None = None
    experts: int | None = None


def _guess_one(name: str) -> ClassGuess | None:
    for family, pattern, active, experts in _FAMILIES:
        if pattern.search(name):
            return ClassGuess(name, f"a known family: {family}", "moe", active, experts)
    if found := _EXPERTS.search(name):
        why = f'"{found[0]}": {found[1]}B active, {found[2]} experts'
        return ClassGuess(name, why, "moe", float(found[1]), int(found[2]))
    if found := _ACTIVE.search(name):
        return ClassGuess(name, f'"{found[0]}": {found[1]}B active', "moe", float(found[1]))
    if found := _TIMES.search(name):
        return ClassGuess(name, f'"{found[0]}": {found[1]} experts', "moe", experts=int(found[1]))
    if found := _MOE.search(name):
        return ClassGuess(name, f'"{found[0]}"', "moe")
    if found := _SIZE.search(name):
        why = f'"{found[0]}" and no sign of experts'
        return ClassGuess(name, why, "dense", float(found[1]))
    return None


def guess_class(*names: str | None) -> ClassGuess | None:
    """A guess from the first of ``names`` (most telling first) that one can rest on."""
    for name in names:
        if name and (guess := _guess_one(name)) is not None:
            return guess
    return None

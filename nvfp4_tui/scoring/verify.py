"""Verifying scores: the scorer a suite declares, applied to one answer, off the event loop.

``score_verified`` is the blocking form (a code answer waits on its sandbox); the runner calls
``score_verified_async``, which runs it on a small module-level thread pool (``VERIFY_WORKERS``
threads), so at most that many sandboxes run at once and the loop that times requests never
waits on one. Each scorer gives 0-1 and a detail string; see the scorer modules:

- ``math`` (``math_check``): final answers compared numerically, credit per sub-question.
- ``code_tests`` (``code_check``): hidden tests run in the sandbox, passed / total.
- ``tool_schema`` (``tool_check``): calls validated against the tools' JSON Schemas and matched.
- ``japanese`` (``japanese``): length in characters, kana/kanji share, register.
- ``choice`` (``choice_check``): the option letter chosen, right or wrong.
- ``recall`` (``recall_check``): a context-ladder prompt's hidden facts found, share of them.
- ``coverage`` (english, design): the mean of the seed-comparable text heuristic and the share
  of the required parts addressed.

Reasoning is never scored as the answer: the server's ``reasoning_content`` is not passed to the
scorers, and ``<think>...</think>`` blocks left in the content (a server without a reasoning
parser) are cut out first. Their combined length is reported apart, as ``reasoning_chars:N`` at
the end of the detail.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from nvfp4_tui.config.checks import PromptCheck, ScorerName
from nvfp4_tui.config.suites import Prompt, Suite
from nvfp4_tui.scoring.choice_check import score_choice
from nvfp4_tui.scoring.code_check import score_code
from nvfp4_tui.scoring.coverage import coverage
from nvfp4_tui.scoring.heuristic import score_text
from nvfp4_tui.scoring.japanese import score_japanese
from nvfp4_tui.scoring.math_check import score_math
from nvfp4_tui.scoring.recall_check import score_recall
from nvfp4_tui.scoring.sandbox import SandboxLimits
from nvfp4_tui.scoring.tool_check import score_tool_schema

VERIFY_WORKERS = 2
_POOL = ThreadPoolExecutor(max_workers=VERIFY_WORKERS, thread_name_prefix="nvfp4-verify")
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)

Verdict = tuple[float | None, str]  # (score 0-1, detail); None only when the scorer failed


def split_reasoning(answer_text: str) -> tuple[str, int]:
    """The answer without ``<think>`` blocks (an unclosed one runs to the end), and their length."""
    cut = sum(len(m.group(0)) for m in _THINK.finditer(answer_text))
    return (_THINK.sub("", answer_text), cut) if cut else (answer_text, 0)


@dataclass(frozen=True)
class Answered:
    """One answer to score, with what its scorer may need."""

    suite: Suite
    prompt: Prompt
    answer: str
    tool_calls: Sequence[dict[str, Any]]
    limits: SandboxLimits | None
    use_bwrap: bool | None

    @property
    def check(self) -> PromptCheck:
        check = self.prompt.check
        if check is None:
            raise ValueError(
                f"{self.suite.name}/{self.prompt.id}: no [prompt.check] for scorer "
                f"{self.suite.scorer}"
            )
        return check


Scorer = Callable[[Answered], tuple[float, str]]


def _covered(answered: Answered) -> tuple[float, str]:
    min_words = answered.suite.min_words
    if min_words is None:
        raise ValueError(f"suite {answered.suite.name!r} of kind text has no min_words")
    heuristic, _ = score_text(answered.answer, min_words)
    part_score, part_detail = coverage(answered.check.parts, answered.answer)
    return (heuristic + part_score) / 2, f"{part_detail}|heuristic:{heuristic:.2f}"


# Each scorer a suite may name (config.checks.SCORER_NAMES), by that name: a new one is its
# module under scoring/, its name and check keys in config.checks, and its line here.
SCORERS: dict[ScorerName, Scorer] = {
    "math": lambda a: score_math(a.check, a.answer),
    "code_tests": lambda a: score_code(a.check, a.answer, limits=a.limits, use_bwrap=a.use_bwrap),
    "tool_schema": lambda a: score_tool_schema(a.prompt, a.answer, a.tool_calls),
    "japanese": lambda a: score_japanese(a.check, a.answer),
    "choice": lambda a: score_choice(a.check, a.answer),
    "coverage": _covered,
    "recall": lambda a: score_recall(a.check, a.answer),
}
# Scorers that judge an empty answer themselves: one of calls alone is no empty one
# (tool_schema); recall says per depth that nothing was found, for the ladder's heatmap.
SCORES_EMPTY: frozenset[ScorerName] = frozenset({"tool_schema", "recall"})


def _score(scorer: ScorerName, answered: Answered) -> tuple[float, str]:
    if scorer not in SCORES_EMPTY and not answered.answer.strip():
        return 0.0, "empty"
    return SCORERS[scorer](answered)


def score_verified(
    suite: Suite,
    prompt: Prompt,
    answer_text: str,
    tool_calls: Sequence[dict[str, Any]] | None,
    reasoning_text: str = "",
    *,
    limits: SandboxLimits | None = None,
    use_bwrap: bool | None = None,
) -> tuple[float, str] | None:
    """The verified score of one answer and its detail; None when the suite declares no scorer.

    Blocks while a code answer runs in its sandbox: call it from a worker thread, or use
    ``score_verified_async``. ``use_bwrap`` is passed to ``sandbox.sandbox_kind``.
    """
    if suite.scorer is None:
        return None
    answer, inline_reasoning_chars = split_reasoning(answer_text)
    answered = Answered(suite, prompt, answer, tool_calls or (), limits, use_bwrap)
    score, detail = _score(suite.scorer, answered)
    reasoning_chars = len(reasoning_text) + inline_reasoning_chars
    if reasoning_chars:
        detail += f"|reasoning_chars:{reasoning_chars}"
    return score, detail


async def score_verified_async(
    suite: Suite,
    prompt: Prompt,
    answer_text: str,
    tool_calls: Sequence[dict[str, Any]] | None,
    reasoning_text: str = "",
    *,
    limits: SandboxLimits | None = None,
    use_bwrap: bool | None = None,
) -> Verdict | None:
    """``score_verified`` on the verify pool; a scorer that fails gives (None, its error)."""
    job = functools.partial(
        score_verified,
        suite,
        prompt,
        answer_text,
        tool_calls,
        reasoning_text,
        limits=limits,
        use_bwrap=use_bwrap,
    )
    try:
        return await asyncio.get_running_loop().run_in_executor(_POOL, job)
    except Exception as e:  # a scorer bug must cost one score, not the run
        return None, f"scorer_error:{type(e).__name__}: {e}"[:200]

"""How a phase of multi-turn sessions (``config.sessions``) is sent: each slot takes the next
conversation and sends its turns one after another, each with the conversation so far (every
earlier turn's message and the answer the server gave), waiting the think time between them.
A turn that fails ends its conversation: the next turn would carry a history it never had.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from itertools import groupby

from nvfp4_tui.config.suites import Prompt
from nvfp4_tui.core.events import RequestFinished

Conversation = list[tuple[int, Prompt]]  # (request index, turn), turn 1 first


def conversations(prompts: Sequence[Prompt]) -> Iterator[Conversation]:
    """The suite's turns grouped by session (a prompt with ``turn`` 1 starts one)."""
    starts = 0

    def session_of(item: tuple[int, Prompt]) -> int:
        nonlocal starts
        starts += item[1].turn == 1
        return starts

    for _, turns in groupby(enumerate(prompts), key=session_of):
        yield list(turns)


def with_history(turn: Prompt, history: tuple[dict[str, str], ...]) -> Prompt:
    return replace(turn, prior=history)


def after(
    history: tuple[dict[str, str], ...], turn: Prompt, record: RequestFinished
) -> tuple[dict[str, str], ...]:
    """The conversation once ``turn`` was answered by ``record``."""
    user = turn.messages(None)[-1]
    return (*history, user, {"role": "assistant", "content": record.answer_text})

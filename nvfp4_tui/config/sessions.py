"""Multi-turn sessions: conversations of ``turns`` turns, each sending the history so far (every
earlier user message and the answer the server gave to it) and one new user message, with a
think time between turns. A session is the unit of concurrency: a level of 4 holds four
conversations in flight, each one request at a time.

Each turn's new message is ``turn_isl`` short common words (``config.synthetic``) and asks for
``turn_osl`` tokens with ignore_eos, so the history grows by a known amount a turn and the
per-turn TTFT shows what the server's prefix cache saves (the history was prefilled before).
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from nvfp4_tui.config.synthetic import Asked, words_of

SESSIONS_SUITE = "sessions"  # the suite ``--sessions`` and ``[run] sessions`` make
MAX_SESSIONS = 10_000
MAX_TURNS = 100
MAX_THINK_S = 3600.0
DEFAULT_TURN_TOKENS = 64


@dataclass(frozen=True)
class SessionsSpec:
    sessions: int
    turns: int
    think_s: float = 0.0  # between a turn's answer and the next turn's send, in modelled seconds
    turn_isl: int = DEFAULT_TURN_TOKENS  # each new user message, in words (a token each)
    turn_osl: int = DEFAULT_TURN_TOKENS  # each answer, in tokens
    seed: int = 0
    ignore_eos: bool = True


@dataclass(frozen=True)
class Turn:
    session: int
    turn: int  # from 1
    asked: Asked  # this turn's new message and answer; its history comes on top
    text: str


def session_turns(spec: SessionsSpec) -> list[Turn]:
    """Every session's turns, session by session; the same for a seed."""
    rng = Random(f"sessions|{spec.seed}")
    return [
        Turn(s, t, Asked(spec.turn_isl, spec.turn_osl), words_of(rng, spec.turn_isl))
        for s in range(spec.sessions)
        for t in range(1, spec.turns + 1)
    ]

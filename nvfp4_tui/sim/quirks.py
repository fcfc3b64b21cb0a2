"""What a simulated endpoint does when its profile names a real server's quirk (``QuirkSpec``).

Each quirk was seen on a server nobody here wrote (README "The simulator"); the simulator plays
it so that the fast tests meet it without that server.
"""

from __future__ import annotations

from dataclasses import replace

from nvfp4_tui.sim.answers import Answer, Piece

# What vLLM 0.32's API server streams when its engine process dies under a request.
ENGINE_CRASH_MESSAGE = (
    "EngineCore encountered an issue. See stack trace (above) for the root cause."
)
# How long, in modelled seconds, its API server goes on (HTTP 500, /health 200) before it exits:
# 0.3 to 0.9 s on a 2-core machine.
ENGINE_EXIT_S = 0.5


def with_utf8_fragments(answer: Answer) -> Answer:
    """``answer`` sent a token a chunk, as llama.cpp's server does: a chunk of k tokens becomes
    k - 1 chunks of empty text (tokens ending inside a UTF-8 character, held back) and the one
    that completes the text. Tool calls keep their chunks; every token is still sent."""
    pieces: list[Piece] = []
    for piece in answer.pieces:
        if piece.tokens > 1 and piece.kind in ("content", "reasoning"):
            fragment = replace(piece, text="", tokens=1)
            pieces += [fragment] * (piece.tokens - 1)
            pieces.append(replace(piece, tokens=1))
        else:
            pieces.append(piece)
    return replace(answer, pieces=tuple(pieces))

"""A meter the client ticks per chunk and the runner reads a few times a second."""

from __future__ import annotations

from time import perf_counter


class TokenMeter:
    """Tokens and requests in flight on one endpoint during one phase; no locking: the client
    and the runner share one event loop, so updates never race.

    Besides counting, it integrates over time the number of streams that are decoding (past
    their first generated chunk) and, for a closed loop, the time with all ``full_level``
    requests in flight. Decode tokens over decoding stream-seconds is the per-stream decode rate
    of whatever streamed in a window, however many streams started or ended inside it: dividing
    the window's tokens by the streams in flight at its end jumps whenever one does.
    """

    __slots__ = (
        "_changed_at",
        "decode_s",
        "decode_tokens",
        "decoding",
        "full_level",
        "full_s",
        "in_flight",
        "tokens",
    )

    def __init__(self, full_level: int = 0) -> None:
        self.tokens = 0  # every generated token
        self.decode_tokens = 0  # those after each stream's first generated chunk
        self.decode_s = 0.0  # stream-seconds spent decoding
        self.in_flight = 0
        self.decoding = 0
        self.full_level = full_level  # 0: an open loop, no level to hold
        self.full_s = 0.0  # seconds with at least ``full_level`` requests in flight
        self._changed_at = perf_counter()

    def advance(self, now: float | None = None) -> None:
        """Bring the time integrals up to ``now`` (the runner does before reading them)."""
        now = perf_counter() if now is None else now
        elapsed = now - self._changed_at
        if elapsed > 0:
            self.decode_s += self.decoding * elapsed
            if self.full_level and self.in_flight >= self.full_level:
                self.full_s += elapsed
        self._changed_at = max(self._changed_at, now)

    def request_started(self) -> None:
        self.advance()
        self.in_flight += 1

    def request_answered(self, decoding: bool) -> None:
        """The server ended its answer ([DONE], the body closed, or a failure): the request is
        no longer in flight, nor decoding if it had begun to (``decoding``), though the client
        may still drain and measure it."""
        self.advance()
        self.in_flight -= 1
        if decoding:
            self.decoding -= 1

    def first_chunk(self, tokens: int) -> None:
        """A stream's first generated chunk arrived with ``tokens``: from now on it decodes."""
        self.advance()
        self.decoding += 1
        self.tokens += tokens

    def decoded(self, tokens: int) -> None:
        self.tokens += tokens
        self.decode_tokens += tokens

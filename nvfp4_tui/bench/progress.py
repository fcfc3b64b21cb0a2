"""A meter the client ticks per chunk and the runner reads a few times a second."""

from __future__ import annotations


class TokenMeter:
    """Tokens generated and requests in flight on one endpoint; plain counters, no locking.

    The client and the runner share one event loop, so increments never race.
    """

    __slots__ = ("in_flight", "tokens")

    def __init__(self) -> None:
        self.tokens = 0
        self.in_flight = 0

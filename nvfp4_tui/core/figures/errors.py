"""What the servers said when requests failed: per endpoint and error kind, how many and the
first message; per phase, the most frequent message. A count alone hides the one line that says
what to fix ("'auto' tool choice requires --enable-auto-tool-choice").

Messages come from the servers: each is made one safe line (``outside_text``) and cut at a word
before it is counted, so messages that differ only past the cut count as one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from nvfp4_tui.core.events import RequestFinished
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.core.text_fit import fit_words

ERROR_MESSAGE_CHARS = 100  # a report cell or a headless line quotes at most this much
NO_MESSAGE = "(no message)"


def shown_error_message(raw: str | None, width: int = ERROR_MESSAGE_CHARS) -> str:
    """A server's error message as every view shows it: scrubbed, one line, cut at a word."""
    return fit_words(outside_line(raw), width) or NO_MESSAGE


@dataclass(frozen=True, slots=True)
class ErrorRow:
    """One endpoint's errors of one kind."""

    endpoint_id: str
    error_kind: str
    count: int
    first_message: str  # the earliest, as shown

    def json(self) -> dict[str, Any]:
        return {
            "kind": "error",
            "endpoint": self.endpoint_id,
            "error_kind": self.error_kind,
            "count": self.count,
            "first_message": self.first_message,
        }


class ErrorTally:
    """Errors counted per endpoint and kind; fed failed requests in the order they ended."""

    def __init__(self) -> None:
        self._counts: Counter[tuple[str, str]] = Counter()
        self._first: dict[tuple[str, str], str] = {}

    def add(self, endpoint_id: str, error_kind: str | None, message: str | None) -> None:
        key = (endpoint_id, error_kind or "error")
        self._counts[key] += 1
        self._first.setdefault(key, shown_error_message(message))

    def rows(self, endpoint_order: tuple[str, ...] = ()) -> list[ErrorRow]:
        """Endpoints in ``endpoint_order`` (the others after, by id), each kind most frequent
        first."""
        order = {endpoint_id: i for i, endpoint_id in enumerate(endpoint_order)}
        keys = sorted(
            self._counts,
            key=lambda k: (order.get(k[0], len(order)), k[0], -self._counts[k], k[1]),
        )
        return [ErrorRow(k[0], k[1], self._counts[k], self._first[k]) for k in keys]


class PhaseErrors:
    """The messages of each running phase's failed requests, until the phase is over."""

    def __init__(self) -> None:
        self._messages: dict[tuple[str, int], Counter[str]] = {}

    def add(self, request: RequestFinished) -> None:
        if request.status != "error":
            return
        key = (request.endpoint_id, request.phase_index)
        self._messages.setdefault(key, Counter())[shown_error_message(request.error_message)] += 1

    def most_frequent(self, endpoint_id: str, phase_index: int) -> tuple[str, int] | None:
        """The phase's most frequent message and its count (the first seen of equals), and
        forgets the phase; None when none of its requests failed."""
        messages = self._messages.pop((endpoint_id, phase_index), None)
        return messages.most_common(1)[0] if messages else None

"""Synthetic prompts' lengths, asked against received: per endpoint and suite, the mean input and
output tokens each prompt asked for (``config.synthetic``) beside what the server counted in its
``usage``, and how many answers came back exactly as long as asked.

A gap in input tokens is the server's chat template (a few tokens) or a tokenizer that cuts our
words otherwise; a gap in output tokens is a server that stopped early (``ignore_eos`` refused
or ignored) or a cap (``run.max_tokens``) under the length asked. Only answered requests count;
a count the client had to estimate (no ``usage``) is counted apart and left out of the means.
An endpoint that refused the length fields (``bench.length_fields``) says so on its rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nvfp4_tui.core.events import ProbeFinished
from nvfp4_tui.core.stats import RunningStats

# A probe's purpose: the request a server refused for ignore_eos or min_tokens, sent again without.
LENGTH_FIELDS_REFUSED = "length_fields"


@dataclass(frozen=True, slots=True)
class LengthRow:
    """One endpoint's synthetic requests of one suite."""

    endpoint_id: str
    suite: str
    requests: int  # answered, with lengths asked
    counted: int  # of those, with the server's own token counts
    in_asked_mean: float | None
    in_received_mean: float | None
    out_asked_mean: float | None
    out_received_mean: float | None
    out_exact: int  # answers exactly as long as asked
    out_short: int  # answers shorter than asked
    # The server's message refusing ignore_eos and min_tokens; None: it took them (or was not
    # asked, ignore_eos = false).
    refused: str | None = None

    @property
    def in_gap_mean(self) -> float | None:
        """Mean received − asked input tokens (the chat template's share, mostly)."""
        return _gap(self.in_received_mean, self.in_asked_mean)

    @property
    def out_gap_mean(self) -> float | None:
        return _gap(self.out_received_mean, self.out_asked_mean)

    def json(self) -> dict[str, Any]:
        return {
            "kind": "lengths",
            "endpoint": self.endpoint_id,
            "suite": self.suite,
            "requests": self.requests,
            "counted": self.counted,
            "input_asked_mean": self.in_asked_mean,
            "input_received_mean": self.in_received_mean,
            "input_gap_mean": self.in_gap_mean,
            "output_asked_mean": self.out_asked_mean,
            "output_received_mean": self.out_received_mean,
            "output_gap_mean": self.out_gap_mean,
            "output_exact": self.out_exact,
            "output_short": self.out_short,
            "length_fields_refused": self.refused,
        }


def _gap(received: float | None, asked: float | None) -> float | None:
    return None if received is None or asked is None else received - asked


class _Cell:
    __slots__ = (
        "counted",
        "exact",
        "in_asked",
        "in_received",
        "out_asked",
        "out_received",
        "short",
    )

    def __init__(self) -> None:
        self.counted = 0
        self.exact = 0
        self.short = 0
        # Asked and received over the same rows (those the server counted), so their gap is
        # the server's doing, not a difference of samples.
        self.in_asked, self.in_received = RunningStats(), RunningStats()
        self.out_asked, self.out_received = RunningStats(), RunningStats()


class LengthTally:
    """Asked and received lengths per (endpoint, suite); fed answered requests in any order."""

    def __init__(self) -> None:
        self._cells: dict[tuple[str, str], _Cell] = {}
        self._requests: dict[tuple[str, str], int] = {}
        self._refused: dict[str, str | None] = {}

    def probe(self, event: ProbeFinished) -> None:
        """A probe of the run: the first refusal of the length fields is the endpoint's."""
        if event.purpose == LENGTH_FIELDS_REFUSED:
            self._refused.setdefault(event.endpoint_id, event.error_message)

    def add(
        self,
        endpoint_id: str,
        suite: str,
        asked: tuple[int | None, int | None],
        received: tuple[int | None, int | None],
        estimated: bool,
    ) -> None:
        """One answered request: its (input, output) tokens as asked and as the server counted."""
        in_asked, out_asked = asked
        if in_asked is None or out_asked is None:
            return
        key = (endpoint_id, suite)
        self._requests[key] = self._requests.get(key, 0) + 1
        cell = self._cells.setdefault(key, _Cell())
        in_received, out_received = received
        if estimated or in_received is None or out_received is None:
            return
        cell.counted += 1
        cell.exact += out_received == out_asked
        cell.short += out_received < out_asked
        cell.in_asked.add(in_asked)
        cell.in_received.add(in_received)
        cell.out_asked.add(out_asked)
        cell.out_received.add(out_received)

    def rows(self, endpoint_order: tuple[str, ...] = ()) -> list[LengthRow]:
        """Endpoints in ``endpoint_order`` (the others after, by id), suites by name."""
        order = {endpoint_id: i for i, endpoint_id in enumerate(endpoint_order)}
        keys = sorted(self._cells, key=lambda k: (order.get(k[0], len(order)), k))
        return [self._row(key) for key in keys]

    def _row(self, key: tuple[str, str]) -> LengthRow:
        cell = self._cells[key]
        return LengthRow(
            endpoint_id=key[0],
            suite=key[1],
            requests=self._requests[key],
            counted=cell.counted,
            in_asked_mean=_mean(cell.in_asked),
            in_received_mean=_mean(cell.in_received),
            out_asked_mean=_mean(cell.out_asked),
            out_received_mean=_mean(cell.out_received),
            out_exact=cell.exact,
            out_short=cell.short,
            refused=self._refused.get(key[0]),
        )


def _mean(stats: RunningStats) -> float | None:
    return stats.mean if stats.n else None

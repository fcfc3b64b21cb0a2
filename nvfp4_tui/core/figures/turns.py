"""Multi-turn sessions by turn: per endpoint, level (conversations in flight) and turn, the
requests answered and failed (a failed turn ends its conversation: its later turns are not
sent), their TTFT (mean and p50) and their input tokens (mean, the history included). The input grows with each turn;
a server whose prefix cache holds the history keeps TTFT from growing with it, which shows here
as a TTFT flat or falling across turns.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from nvfp4_tui.core.stats import finite, mean, percentile


@dataclass(frozen=True, slots=True)
class TurnRow:
    endpoint_id: str
    concurrency: int  # conversations in flight
    turn: int
    requests: int  # answered
    errors: int
    ttft_mean_s: float | None
    ttft_p50_s: float | None
    tokens_in_mean: float | None

    def json(self) -> dict[str, Any]:
        return {
            "kind": "turns",
            "endpoint": self.endpoint_id,
            "concurrency": self.concurrency,
            "turn": self.turn,
            "requests": self.requests,
            "errors": self.errors,
            "ttft_mean_s": self.ttft_mean_s,
            "ttft_p50_s": self.ttft_p50_s,
            "input_tokens_mean": self.tokens_in_mean,
        }


def turn_rows(
    sent: Iterable[tuple[str, int, int, bool, float | None, int | None]],
    endpoint_order: tuple[str, ...] = (),
) -> list[TurnRow]:
    """Rows of sent turns (endpoint, concurrency, turn, failed, ttft_s, tokens_in); endpoints in
    ``endpoint_order``, then levels and turns in order."""
    ttfts: dict[tuple[str, int, int], list[float]] = {}
    inputs: dict[tuple[str, int, int], list[float]] = {}
    counts: dict[tuple[str, int, int], list[int]] = {}  # [answered, failed]
    for endpoint_id, concurrency, turn, failed, ttft_s, tokens_in in sent:
        key = (endpoint_id, concurrency, turn)
        counts.setdefault(key, [0, 0])[failed] += 1
        if failed:
            continue
        if (ttft := finite(ttft_s)) is not None:
            ttfts.setdefault(key, []).append(ttft)
        if tokens_in is not None:
            inputs.setdefault(key, []).append(float(tokens_in))
    order = {endpoint_id: i for i, endpoint_id in enumerate(endpoint_order)}
    return [
        TurnRow(
            endpoint_id=key[0],
            concurrency=key[1],
            turn=key[2],
            requests=counts[key][0],
            errors=counts[key][1],
            ttft_mean_s=mean(ttfts.get(key, [])),
            ttft_p50_s=percentile(ttfts.get(key, []), 50),
            tokens_in_mean=mean(inputs.get(key, [])),
        )
        for key in sorted(counts, key=lambda k: (order.get(k[0], len(order)), k))
    ]

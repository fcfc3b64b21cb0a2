"""Every phase cut into slices of S seconds (``report --slice S``, ``[run] slice_s``): warm-up,
drift and a server's slow degradation show as figures that move from slice to slice.

A request belongs to the slice it was sent in, counted from its phase's start in the model's
seconds (a simulator's time scale applied), for its latencies; its output tokens count in the
slice its answer ended in, so a slice's throughput is the tokens that arrived in it over S.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from nvfp4_tui.core.stats import finite, mean, percentile

MAX_SLICES = 10_000  # a phase cut finer than this is refused: no table of that is read


@dataclass(frozen=True, slots=True)
class SlicedRequest:
    endpoint_id: str
    suite: str
    phase_index: int
    sent_s: float  # from the phase's start, model seconds
    ended_s: float | None  # when its answer ended, on the same clock
    failed: bool
    tokens_out: int | None
    ttft_s: float | None
    e2e_s: float | None
    decode_tps: float | None


@dataclass(frozen=True, slots=True)
class SliceRow:
    endpoint_id: str
    suite: str
    phase_index: int
    index: int  # from 0
    start_s: float
    slice_s: float
    requests: int  # sent in the slice
    errors: int
    throughput_tps: float  # output tokens of answers ending in the slice, over slice_s
    ttft_mean_s: float | None
    ttft_p50_s: float | None
    e2e_mean_s: float | None
    decode_p50_tps: float | None

    def json(self) -> dict[str, Any]:
        return {
            "kind": "slice",
            "endpoint": self.endpoint_id,
            "suite": self.suite,
            "phase": self.phase_index,
            "slice": self.index,
            "start_s": self.start_s,
            "slice_s": self.slice_s,
            "requests": self.requests,
            "errors": self.errors,
            "throughput_tps": self.throughput_tps,
            "ttft_mean_s": self.ttft_mean_s,
            "ttft_p50_s": self.ttft_p50_s,
            "e2e_mean_s": self.e2e_mean_s,
            "decode_p50_tps": self.decode_p50_tps,
        }


@dataclass
class _Cell:
    requests: int = 0
    errors: int = 0
    tokens: int = 0
    ttft: list[float] = field(default_factory=list)
    e2e: list[float] = field(default_factory=list)
    decode: list[float] = field(default_factory=list)


def _index(offset_s: float, slice_s: float) -> int:
    return max(0, min(math.floor(offset_s / slice_s), MAX_SLICES - 1))


def slice_rows(
    requests: Iterable[SlicedRequest], slice_s: float, endpoint_order: tuple[str, ...] = ()
) -> list[SliceRow]:
    """Per endpoint, phase and slice (empty slices inside a phase included), in order."""
    if not slice_s > 0:
        raise ValueError(f"slice must be > 0 seconds, got {slice_s!r}")
    cells: dict[tuple[str, int, int], _Cell] = {}
    suites: dict[tuple[str, int], str] = {}
    last: dict[tuple[str, int], int] = {}  # each phase's last slice with anything in it
    for r in requests:
        phase = (r.endpoint_id, r.phase_index)
        suites[phase] = r.suite
        index = _index(r.sent_s, slice_s)
        last[phase] = max(last.get(phase, 0), index)
        sent = cells.setdefault((*phase, index), _Cell())
        sent.requests += 1
        sent.errors += r.failed
        if r.failed:
            continue
        for values, value in (
            (sent.ttft, r.ttft_s),
            (sent.e2e, r.e2e_s),
            (sent.decode, r.decode_tps),
        ):
            if (number := finite(value)) is not None:
                values.append(number)
        if r.tokens_out and r.ended_s is not None:
            index = _index(r.ended_s, slice_s)
            last[phase] = max(last[phase], index)
            cells.setdefault((*phase, index), _Cell()).tokens += r.tokens_out
    order = {endpoint_id: i for i, endpoint_id in enumerate(endpoint_order)}
    rows = []
    for endpoint_id, phase_index in sorted(suites, key=lambda k: (order.get(k[0], len(order)), k)):
        for index in range(last[(endpoint_id, phase_index)] + 1):
            cell = cells.get((endpoint_id, phase_index, index), _Cell())
            rows.append(
                SliceRow(
                    endpoint_id=endpoint_id,
                    suite=suites[(endpoint_id, phase_index)],
                    phase_index=phase_index,
                    index=index,
                    start_s=index * slice_s,
                    slice_s=slice_s,
                    requests=cell.requests,
                    errors=cell.errors,
                    throughput_tps=cell.tokens / slice_s,
                    ttft_mean_s=mean(cell.ttft),
                    ttft_p50_s=percentile(cell.ttft, 50),
                    e2e_mean_s=mean(cell.e2e),
                    decode_p50_tps=percentile(cell.decode, 50),
                )
            )
    return rows

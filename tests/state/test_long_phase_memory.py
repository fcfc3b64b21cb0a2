"""A long phase keeps FleetState's memory flat, and folding its streams keeps every number."""

from __future__ import annotations

import math
import random
import tracemalloc
from dataclasses import replace

import pytest

from nvfp4_tui.core.events import PhaseFinished, PhaseStarted, RequestFinished
from nvfp4_tui.core.slo import LoadTracker
from nvfp4_tui.core.state import FleetState
from tests.support.factories import T0

from .builders import plan, request, three_endpoint_run

WARM_UP = 12_000  # past QuantileSketch's exact cap (10,000): its values are in buckets by now
MEASURED = 20_000
MAX_GROWTH_BYTES = 256 * 1024  # 20,000 kept streams would hold ~2 MB


def _request(i: int, *, trimmed: bool | None = None) -> RequestFinished:
    # Sent every 0.25 s by 4 workers, replies of 0.6-1.5 s: they finish out of send order.
    record = request(
        "a",
        t=T0 + i * 0.25,
        concurrency=4,
        request_index=i,
        ttft_s=0.1 + (i % 100) / 1000,
        e2e_s=0.6 + (i * 7919 % 90) / 100,
        tokens_out=1 + i % 300,
    )
    return replace(record, trimmed=trimmed)


def test_a_long_phase_holds_no_memory_per_request() -> None:
    state = FleetState()
    state.apply(three_endpoint_run())
    state.apply(PhaseStarted(T0, "a", "english", 4, 0))
    for i in range(WARM_UP):
        state.apply(_request(i))
    tracemalloc.start()
    try:
        for i in range(WARM_UP, WARM_UP + MEASURED):
            state.apply(_request(i))
        grown, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert state.endpoints["a"].requests_done == WARM_UP + MEASURED
    assert grown < MAX_GROWTH_BYTES, f"{MEASURED} more requests held {grown:,} bytes"


def _window_tokens_by_definition(records: list[RequestFinished]) -> float:
    """Output tokens inside the window of the counted requests, straight from slo's definition:
    the first token at TTFT, the rest spread evenly until E2E."""
    counted = [r for r in records if not r.trimmed]
    a = min(r.t for r in counted)
    b = max(r.t + r.e2e_s for r in counted)
    parts = []
    for r in records:
        first, end = r.t + r.ttft_s, r.t + r.e2e_s
        inside = 1.0 if a <= first <= b else 0.0
        overlap = max(0.0, min(b, end) - max(a, first))
        parts.append(inside + (r.tokens_out - 1) * overlap / (end - first))
    return math.fsum(parts)


@pytest.mark.parametrize("shuffled", [False, True])
def test_folded_streams_give_the_same_throughput(shuffled: bool) -> None:
    # Trimmed warm-up and cool-down requests reach outside the window and stay partial.
    records = [_request(i, trimmed=i < 40 or i >= 1_960) for i in range(2_000)]
    if shuffled:
        random.Random(4).shuffle(records)
    tracker = LoadTracker([plan("a", "english", 4, None)])
    for record in records:
        tracker.add(record)
    live = tracker.phase(0)
    assert live is not None and live.window_s is not None and live.throughput_tps is not None
    expected = _window_tokens_by_definition(records)
    assert live.throughput_tps * live.window_s == pytest.approx(expected, rel=1e-12)
    tracker.finish(PhaseFinished(T0 + 600, "a", "english", 4, 0, 2_000, 0, 300_000, 600.0))
    done = tracker.phase(0)
    assert done is not None and done.throughput_tps == live.throughput_tps

"""The sample event list: deterministic, shaped like the demo run, and read by the state cleanly."""

from __future__ import annotations

import itertools
from collections import Counter

from nvfp4_tui.core.events import (
    EndpointStatus,
    GpuSample,
    PhaseFinished,
    RequestFinished,
    RunFinished,
    RunStarted,
    ServerSample,
    encode,
)
from nvfp4_tui.core.state import FleetState
from tests.support.sample_events import PARTWAY_S, START_T, sample_events


def test_same_events_every_call() -> None:
    first = b"".join(encode(e) for e in sample_events())
    second = b"".join(encode(e) for e in sample_events())
    assert first == second


def test_plan_is_the_demo_run() -> None:
    started = sample_events()[0]
    assert isinstance(started, RunStarted)
    assert started.t == START_T
    assert [e.gpu for e in started.endpoints] == list(range(7))
    assert {e.model_class for e in started.endpoints} == {"moe", "dense"}
    # 6 suites x concurrency 1 and 4, 2 requests per prompt x 3 prompts per phase.
    assert len(started.phases) == 7 * 12
    assert {p.requests for p in started.phases} == {6}
    assert started.total_requests == 7 * 12 * 6


def test_partway_run_is_in_motion() -> None:
    events = sample_events()
    assert events[-1].t <= START_T + PARTWAY_S
    assert not any(isinstance(e, RunFinished) for e in events)
    state = FleetState()
    state.apply_all(events)
    assert state.dropped == 0
    now = START_T + PARTWAY_S
    assert 0.2 < state.progress_fraction(now) < 0.8
    concurrencies = {e.target_concurrency for e in state.endpoints.values()}
    assert {1, 4} <= concurrencies, "some endpoints at c=1, others already at c=4"
    assert all(e.status == "running" for e in state.endpoints.values())
    errors = {e.id: e.requests_error for e in state.endpoints.values()}
    assert errors["moe_huihui"] > 0
    assert sum(errors.values()) == errors["moe_huihui"]
    assert state.endpoints["moe_huihui"].last_error.kind == "http_4xx"


def test_sample_rates() -> None:
    events = sample_events()
    counts = Counter(type(e) for e in events)
    seconds = PARTWAY_S
    # 2 Hz of GPU samples for each of the 7 endpoints, 1 Hz of server samples for the 6 that
    # serve /metrics.
    assert abs(counts[GpuSample] / 7 / seconds - 2) < 0.1
    assert abs(counts[ServerSample] / 6 / seconds - 1) < 0.1


def test_events_arrive_in_order() -> None:
    # A RequestFinished is sent when its request ends; its ``t`` is when the request was sent.
    arrivals = [
        e.t + (e.e2e_s or 0.0) if isinstance(e, RequestFinished) else e.t for e in sample_events()
    ]
    assert all(a <= b + 1e-9 for a, b in itertools.pairwise(arrivals))


def test_complete_run_finishes_every_phase() -> None:
    events = sample_events(None)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "complete"
    finished = [e for e in events if isinstance(e, PhaseFinished)]
    assert len(finished) == 7 * 12
    done = [e for e in events if isinstance(e, EndpointStatus) and e.status == "done"]
    assert len(done) == 7
    state = FleetState()
    state.apply_all(events)
    assert state.requests_done == state.total_requests
    assert state.progress_fraction(events[-1].t) == 1.0


def test_verified_scores_are_shaped_as_their_verifiers_give_them() -> None:
    requests = [e for e in sample_events(None) if isinstance(e, RequestFinished)]
    for request in requests:
        if request.status == "error":
            assert request.score_verified is None and request.score_heuristic is None
            continue
        score = request.score_verified
        assert score is not None and 0.0 <= score <= 1.0
        if request.suite == "math":
            assert round(score * 3, 6) in (0, 1, 2, 3)  # credit per sub-question
        elif request.suite == "coding":
            assert round(score * 5, 6) in range(6)  # hidden tests passed of five
        elif request.suite == "tool_call":
            assert score in (0.5, 1.0)
    ok = [r for r in requests if r.status == "ok"]
    differ = sum(r.score_verified != r.score_heuristic for r in ok)
    assert differ > 0.9 * len(ok), "verified scores are not the heuristic ones renamed"

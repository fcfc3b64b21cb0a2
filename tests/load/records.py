"""A fixed set of request records with known SLO outcomes, worked out by hand in the tests."""

from __future__ import annotations

from dataclasses import replace

from nvfp4_tui.core.events import (
    EndpointInfo,
    Event,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RequestStatus,
    RunFinished,
    RunStarted,
)
from nvfp4_tui.core.figures.leaderboard import LeaderboardFold, RequestFacts
from tests.support.factories import T0, endpoint_info, request

TARGETS = {"slo_ttft_s": 0.5, "slo_tpot_s": 0.05, "slo_e2e_s": 30.0, "slo_attainment": 0.9}


def info(endpoint_id: str) -> EndpointInfo:
    return endpoint_info(endpoint_id, None, model="m")


def record(
    phase_index: int,
    request_index: int,
    t: float,
    status: RequestStatus,
    ttft_s: float | None,
    e2e_s: float | None,
    tokens_out: int | None,
    *,
    endpoint_id: str = "a",
    concurrency: int = 4,
    trimmed: bool | None = None,
    late_s: float | None = None,
) -> RequestFinished:
    return request(
        endpoint_id,
        t=T0 + t,
        suite="essay",
        concurrency=concurrency,
        phase_index=phase_index,
        request_index=request_index,
        status=status,
        ttft_s=ttft_s,
        e2e_s=e2e_s,
        tokens_out=tokens_out,
        error_kind="http_5xx" if status == "error" else None,
        trimmed=trimmed,
        late_s=late_s,
    )


# Phase 0 at c=4. Outcomes against TTFT <= 0.5 s, TPOT <= 0.05 s, E2E <= 30 s:
PHASE_0 = [
    record(0, 0, 0.5, "ok", 0.2, 0.6, 9, trimmed=True),  # TPOT 0.05, met; in the warm-up
    record(0, 1, 1.0, "ok", 0.2, 5.2, 101, trimmed=False),  # TPOT 5.0/100 = 0.05: met
    record(0, 2, 2.0, "ok", 0.6, 1.0, 11, trimmed=False),  # TTFT 0.6: missed (TPOT 0.04)
    record(0, 3, 3.0, "ok", 0.3, 10.3, 101, trimmed=False),  # TPOT 0.1: missed
    record(0, 4, 4.0, "ok", 0.1, 31.0, 1000, trimmed=False),  # E2E 31: missed (TPOT 0.031)
    record(0, 5, 5.0, "error", None, 0.5, None, trimmed=False),  # failed: missed
    record(0, 6, 6.0, "incomplete", 0.4, 2.4, 41, trimmed=False),  # TPOT 0.05, cut: met
    record(0, 7, 7.0, "ok", 0.45, 0.45, 1, trimmed=False),  # one token, TPOT vacuous: met
]
# Counted: requests 1-7 (7), met: 1, 6, 7 (3). Window: first counted send 1.0 s to last counted
# end 4.0 + 31.0 = 35.0 s: 34 s.
PHASE_0_COUNTED = 7
PHASE_0_MET = 3
PHASE_0_WINDOW_S = 34.0

# Phase 1 at c=8, no windows: every request counts; all meet the SLO. Eight requests, so
# that the phase can hold its load (fewer would leave it out of the load points).
PHASE_1_REQUESTS = 8
PHASE_1 = [
    record(1, i, 40.0 + i, "ok", 0.2, 2.2, 41, concurrency=8) for i in range(PHASE_1_REQUESTS)
]
# Window 40.0 -> 47.0 + 2.2 = 49.2 s: 9.2 s; 8 met.
PHASE_1_WINDOW_S = 9.2


def run_events() -> list[Event]:
    plans = (
        PhasePlan("a", "essay", 4, 8, **TARGETS),
        PhasePlan("a", "essay", 8, PHASE_1_REQUESTS, **TARGETS),
    )
    phase_0_tokens = sum(r.tokens_out or 0 for r in PHASE_0 if r.status != "error")
    return [
        RunStarted(T0, "slo", "slo", (info("a"),), plans),
        PhaseStarted(T0, "a", "essay", 4, 0),
        *PHASE_0,
        PhaseFinished(T0 + 36.0, "a", "essay", 4, 0, 8, 1, phase_0_tokens, 35.5),
        PhaseStarted(T0 + 40.0, "a", "essay", 8, 1),
        *PHASE_1,
        PhaseFinished(
            T0 + 50.0, "a", "essay", 8, 1, PHASE_1_REQUESTS, 0, 41 * PHASE_1_REQUESTS, 9.5
        ),
        RunFinished(T0 + 50.0, "complete"),
    ]


# Two open-loop phases per endpoint, 1 then 2 requests/s, no cap on requests in flight (their
# concurrency is 0): four requests each, 30 tokens in 1.5 s. Endpoint "b" scores lower.
RATES = (1.0, 2.0)
RATE_REQUESTS = 4


def rate_run() -> list[Event]:
    endpoints = (info("a"), info("b"))
    plans = tuple(
        PhasePlan(e.id, "essay", 0, RATE_REQUESTS, rate_rps=rate, arrivals="constant")
        for e in endpoints
        for rate in RATES
    )
    events: list[Event] = [RunStarted(T0, "rates", "rates", endpoints, plans)]
    for e in endpoints:
        start = 0.0
        for index, rate in enumerate(RATES):
            events.append(PhaseStarted(T0 + start, e.id, "essay", 0, index))
            for i in range(RATE_REQUESTS):
                row = record(index, i, start + i / rate, "ok", 0.2, 1.5, 30, endpoint_id=e.id)
                score = (0.9 if e.id == "a" else 0.6) - 0.1 * index
                events.append(replace(row, concurrency=0, score_heuristic=score, decode_tps=20.0))
            wall_s = (RATE_REQUESTS - 1) / rate + 1.5
            events.append(
                PhaseFinished(
                    T0 + start + wall_s, e.id, "essay", 0, index, RATE_REQUESTS, 0, 120, wall_s
                )
            )
            start += 10.0
    events.append(RunFinished(T0 + 30.0, "complete"))
    return events


def leaderboard_json_keys() -> set[str]:
    """The keys of a leaderboard row in ``report --format json`` (rows beside it have a kind)."""
    fold = LeaderboardFold()
    fold.add_request(RequestFacts("a", "s", "p", 1, None, 0, "ok", None, None, 0.0, *[None] * 8))
    return set(fold.rows()[0].json("score_heuristic"))

"""A fixed set of request records with known SLO outcomes, worked out by hand in the tests."""

from __future__ import annotations

from nvfp4_tui.events import (
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

T0 = 1_796_203_800.0
TARGETS = {"slo_ttft_s": 0.5, "slo_tpot_s": 0.05, "slo_e2e_s": 30.0, "slo_attainment": 0.9}


def info(endpoint_id: str) -> EndpointInfo:
    return EndpointInfo(endpoint_id, endpoint_id.upper(), "http://127.0.0.1:9", "m", None, "moe")


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
    return RequestFinished(
        t=T0 + t,
        endpoint_id=endpoint_id,
        suite="essay",
        prompt_id="p0",
        concurrency=concurrency,
        phase_index=phase_index,
        request_index=request_index,
        status=status,
        queue_s=0.0,
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

# Phase 1 at c=8, no windows: every request counts; all meet the SLO.
PHASE_1 = [record(1, i, 40.0 + i, "ok", 0.2, 2.2, 41, concurrency=8) for i in range(4)]
# Window 40.0 -> 43.0 + 2.2 = 45.2 s: 5.2 s; 4 met.
PHASE_1_WINDOW_S = 5.2


def run_events() -> list[Event]:
    plans = (
        PhasePlan("a", "essay", 4, 8, **TARGETS),
        PhasePlan("a", "essay", 8, 4, **TARGETS),
    )
    phase_0_tokens = sum(r.tokens_out or 0 for r in PHASE_0 if r.status != "error")
    return [
        RunStarted(T0, "slo", "slo", (info("a"),), plans),
        PhaseStarted(T0, "a", "essay", 4, 0),
        *PHASE_0,
        PhaseFinished(T0 + 36.0, "a", "essay", 4, 0, 8, 1, phase_0_tokens, 35.5),
        PhaseStarted(T0 + 40.0, "a", "essay", 8, 1),
        *PHASE_1,
        PhaseFinished(T0 + 46.0, "a", "essay", 8, 1, 4, 0, 164, 5.5),
        RunFinished(T0 + 46.0, "complete"),
    ]

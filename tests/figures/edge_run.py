"""A run made of edge values, for the figures that must draw whatever a run holds: cells with no
success (0 of 3, Wilson's lower bound 0), single-request cells, an endpoint whose every request
failed, a suite planned and run with no request, and the vLLM server's view of one endpoint."""

from __future__ import annotations

from pathlib import Path

from nvfp4_tui.core.events import (
    BenchmarkSuite,
    Event,
    GpuSample,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RunFinished,
    RunStarted,
    ServerSample,
)
from tests.support.factories import T0, endpoint_info, request, write_snapshot

HUMANEVAL = BenchmarkSuite("humaneval", "HumanEval", "pass@1", "greedy", "", 3, 3)
ERROR_MESSAGE = "HTTP 400: 'auto' tool choice requires --enable-auto-tool-choice to be set"


def _ok(endpoint_id: str, t: float, suite: str, i: int, level: int, index: int, **more: float):
    return request(
        endpoint_id,
        t=t,
        suite=suite,
        prompt_id=f"{suite}-{i}",
        concurrency=level,
        phase_index=index,
        request_index=i,
        ttft_s=0.2,
        e2e_s=1.2,
        chunks=100,
        tokens_out=100,
        decode_tps=99.0,
        e2e_tps=83.0,
        itl_p50_s=0.01,
        **more,
    )


def _failed(endpoint_id: str, t: float, suite: str, i: int, index: int) -> RequestFinished:
    return request(
        endpoint_id,
        t=t,
        suite=suite,
        prompt_id=f"{suite}-{i}",
        phase_index=index,
        request_index=i,
        status="error",
        error_kind="http_4xx",
        error_message=ERROR_MESSAGE,
        http_status=400,
    )


def edge_events() -> list[Event]:
    endpoints = (
        endpoint_info("zero", 0, label="Zero MoE", model_class="moe"),
        endpoint_info("single", 1, label="Single Dense", model_class="dense"),
        endpoint_info("broken", 2, label="Broken Dense", model_class="dense"),
    )
    plans = (
        PhasePlan("zero", "coding", 1, 3),
        PhasePlan("zero", "humaneval", 1, 3),
        PhasePlan("zero", "math", 1, 0),  # planned, run with no request
        PhasePlan("zero", "coding", 4, 1),
        PhasePlan("single", "coding", 1, 1),
        PhasePlan("broken", "coding", 1, 3),
        PhasePlan("broken", "humaneval", 1, 3),
    )
    events: list[Event] = [RunStarted(T0, "edge", "edge", endpoints, plans, (), (HUMANEVAL,))]
    events.append(GpuSample(T0, 0, vram_used_mib=90_000.0, source="sim"))  # one GPU, one sample
    t = T0 + 1
    for index, (suite, level, count) in enumerate(
        (("coding", 1, 3), ("humaneval", 1, 3), ("math", 1, 0), ("coding", 4, 1))
    ):
        events.append(PhaseStarted(t, "zero", suite, level, index))
        for i in range(count):
            events.append(_ok("zero", t + i * 1.2, suite, i, level, index, score_verified=0.0))
        events.append(ServerSample(t + 0.5, "zero", 1.0, 0.0, 10.0, 0.0, 0.0))
        wall_s = max(count, 1) * 1.2
        t += wall_s
        events.append(
            ServerSample(t, "zero", float(level), 0.0, 30.0, 0.0, 50.0, ttft_count=count,
                         ttft_mean_s=0.15 if count else None, itl_count=99 * count,
                         itl_mean_s=0.01 if count else None)
        )  # fmt: skip
        events.append(PhaseFinished(t, "zero", suite, level, index, count, 0, 100 * count, wall_s))
    events.append(PhaseStarted(t, "single", "coding", 1, 0))
    events.append(_ok("single", t, "coding", 0, 1, 0, score_verified=1.0))
    events.append(PhaseFinished(t + 1.2, "single", "coding", 1, 0, 1, 0, 100, 1.2))
    t += 1.2
    for index, suite in enumerate(("coding", "humaneval")):
        events.append(PhaseStarted(t, "broken", suite, 1, index))
        for i in range(3):
            events.append(_failed("broken", t + i * 0.01, suite, i, index))
        events.append(PhaseFinished(t + 0.1, "broken", suite, 1, index, 3, 3, 0, 0.1))
        t += 0.1
    events.append(RunFinished(t, "complete"))
    return sorted(events, key=lambda e: e.t)


def edge_snapshot(root: Path) -> Path:
    return write_snapshot(root, "edge", edge_events())

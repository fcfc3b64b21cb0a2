"""Hand-built events for the state tests, and a small deterministic simulated run."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from nvfp4_tui.core.events import (
    EndpointInfo,
    EndpointStatus,
    Event,
    GpuSample,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RunFinished,
    RunStarted,
    ServerSample,
    TokenProgress,
)
from tests.support import factories
from tests.support.factories import T0, endpoint_info


def info(endpoint_id: str, gpu: int | None) -> EndpointInfo:
    return endpoint_info(endpoint_id, gpu, model=f"model-{endpoint_id}")


def plan(
    endpoint_id: str,
    suite: str,
    concurrency: int,
    requests: int | None,
    duration_s: float | None = None,
) -> PhasePlan:
    return PhasePlan(endpoint_id, suite, concurrency, requests, duration_s)


def three_endpoint_run(t: float = T0) -> RunStarted:
    """a (GPU 0): 3 phases, b (GPU 1): 2 phases, c (no GPU index): 1 phase; 16 requests."""
    return RunStarted(
        t=t,
        run_id="run-1",
        run_name="demo",
        endpoints=(info("a", 0), info("b", 1), info("c", None)),
        phases=(
            plan("a", "english", 1, 3),
            plan("a", "math", 1, 2),
            plan("a", "english", 2, 4),
            plan("b", "english", 1, 3),
            plan("b", "math", 1, 2),
            plan("c", "english", 1, 2),
        ),
    )


def request(endpoint_id: str = "a", *, score: float | None = 0.5, **fields: Any) -> RequestFinished:
    """A typical answered request of these tests: 90 tokens in 1 s after a TTFT of 0.1 s; any
    field (``score`` is the heuristic score) as given."""
    typical: dict[str, Any] = {
        "ttft_s": 0.1,
        "e2e_s": 1.0,
        "itl_p50_s": 0.01,
        "decode_tps": 100.0,
        "e2e_tps": 90.0,
        "tokens_out": 90,
    }
    return factories.request(endpoint_id, score_heuristic=score, **(typical | fields))


def failed(endpoint_id: str = "a", **kwargs) -> RequestFinished:
    """An error row as the client writes it: no timings past the failure, no score."""
    defaults = dict(
        status="error",
        ttft_s=None,
        itl_p50_s=None,
        decode_tps=None,
        e2e_tps=None,
        tokens_out=None,
        score=None,
        error_kind="http_5xx",
        error_message="503 Service Unavailable",
    )
    defaults.update(kwargs)
    return request(endpoint_id, **defaults)


@dataclass
class SimulatedRun:
    """Events of a run in the order a live UI receives them, TokenProgress included."""

    events: list[Event] = field(default_factory=list)

    @property
    def persisted(self) -> list[Event]:
        return [e for e in self.events if not isinstance(e, TokenProgress)]


def simulated_run(seed: int = 7, requests_per_phase: int = 12) -> SimulatedRun:
    """Three endpoints, two suites at concurrency 1 then 3, with errors, incomplete replies,
    out-of-order completions, GPU and server samples, and TokenProgress every 0.25 s."""
    rng = random.Random(seed)
    endpoints = (info("a", 0), info("b", 1), info("c", 2))
    suites = ("english", "math")
    levels = (1, 3)
    plans = tuple(
        plan(e.id, suite, c, requests_per_phase)
        for e in endpoints
        for c in levels
        for suite in suites
    )
    timed: list[tuple[float, int, Event]] = []
    seq = 0

    def emit(at: float, event: Event) -> None:
        nonlocal seq
        timed.append((at, seq, event))
        seq += 1

    emit(T0, RunStarted(T0, "run-sim", "sim", endpoints, plans))
    end_t = T0
    for gpu, endpoint in enumerate(endpoints):
        speed = 140.0 - 40 * gpu
        clock = T0 + 0.5
        emit(clock, EndpointStatus(clock, endpoint.id, "running"))
        for index, phase in enumerate(p for p in plans if p.endpoint_id == endpoint.id):
            emit(clock, PhaseStarted(clock, endpoint.id, phase.suite, phase.concurrency, index))
            phase_start = clock
            slots = [clock] * phase.concurrency
            output_tokens = errors = 0
            assert phase.requests is not None
            for request_index in range(phase.requests):
                slot = min(range(len(slots)), key=slots.__getitem__)
                sent = slots[slot]
                ttft = rng.uniform(0.05, 0.4)
                tokens = rng.randint(20, 200)
                decode = speed * rng.uniform(0.8, 1.1) / phase.concurrency**0.3
                e2e = ttft + (tokens - 1) / decode
                roll = rng.random()
                if roll < 0.1:
                    e2e = rng.uniform(0.01, 0.5)
                    row = failed(
                        endpoint.id,
                        t=sent,
                        e2e_s=e2e,
                        suite=phase.suite,
                        concurrency=phase.concurrency,
                        phase_index=index,
                        request_index=request_index,
                        error_kind=rng.choice(["http_5xx", "reset", "timeout"]),
                        prompt_id=f"p{request_index % 4}",
                    )
                    errors += 1
                else:
                    output_tokens += tokens
                    row = request(
                        endpoint.id,
                        t=sent,
                        suite=phase.suite,
                        concurrency=phase.concurrency,
                        phase_index=index,
                        request_index=request_index,
                        status="incomplete" if roll < 0.2 else "ok",
                        ttft_s=ttft,
                        e2e_s=e2e,
                        itl_p50_s=1 / decode,
                        decode_tps=decode,
                        e2e_tps=tokens / e2e,
                        tokens_out=tokens,
                        score=round(rng.uniform(0, 1), 3),
                        answer_text=f"answer {endpoint.id} {index} {request_index}",
                        prompt_id=f"p{request_index % 4}",
                    )
                slots[slot] = sent + e2e
                emit(sent + e2e, row)
            clock = max(slots)
            tick = phase_start + 0.25
            while tick < clock:
                in_flight = sum(1 for s in slots if s > tick)
                emit(
                    tick,
                    TokenProgress(
                        tick,
                        endpoint.id,
                        in_flight,
                        speed * in_flight,
                        decode_tokens=round(speed * in_flight * 0.25),
                        decode_s=in_flight * 0.25,
                    ),
                )
                tick += 0.25
            emit(
                clock,
                PhaseFinished(
                    clock,
                    endpoint.id,
                    phase.suite,
                    phase.concurrency,
                    index,
                    phase.requests,
                    errors,
                    output_tokens,
                    clock - phase_start,
                ),
            )
        emit(clock, EndpointStatus(clock, endpoint.id, "done"))
        end_t = max(end_t, clock)
    sample_t = T0
    while sample_t <= end_t:
        for gpu in range(len(endpoints)):
            emit(
                sample_t,
                GpuSample(
                    sample_t,
                    gpu,
                    vram_used_mib=80_000 + gpu * 1000 + (sample_t - T0),
                    power_w=300 + rng.uniform(-20, 20),
                    util_gpu_pct=rng.uniform(80, 100),
                ),
            )
        if sample_t == int(sample_t):
            for endpoint in endpoints:
                emit(sample_t, ServerSample(sample_t, endpoint.id, kv_cache_pct=rng.uniform(0, 50)))
        sample_t += 0.5
    emit(end_t + 0.1, RunFinished(end_t + 0.1, "complete"))
    timed.sort(key=lambda item: (item[0], item[1]))
    return SimulatedRun([event for _, _, event in timed])

"""A hand-built run whose every published figure is known: two endpoints (a fast MoE and a slow
dense one), two suites of six prompts, three closed-loop levels, an SLO on TTFT, VRAM samples.

Every request of an endpoint has the same timings, and every answer of an (endpoint, suite)
the same score, so each figure's value can be written down here:

- fast: TTFT 0.1 s, decode 120 tok/s, 100 tokens; coding 0.9, math 0.3 (heuristic)
- slow: TTFT 0.3 s, decode 50 tok/s, 100 tokens; coding 0.8, math 0.9
- the SLO (TTFT <= 0.2 s, 90% of requests) holds for fast at every level, never for slow
- route by task (6 prompts each, Wilson interval over 6): coding to fast (slow's 0.8 is
  within the best's interval, fast is faster), math to slow (fast's 0.3 is not)
"""

from __future__ import annotations

import math
from pathlib import Path

from nvfp4_tui.core.events import (
    Event,
    GpuSample,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RunFinished,
    RunStarted,
)
from tests.support.factories import T0, endpoint_info, request, write_snapshot

LEVELS = (1, 2, 4)
SUITES = ("coding", "math")
PROMPTS = 6
TOKENS = 100
SLO_TTFT_S = 0.2
TIMING = {"fast": (0.1, 120.0), "slow": (0.3, 50.0)}  # TTFT s, decode tok/s
SCORES = {("fast", "coding"): 0.9, ("fast", "math"): 0.3, ("slow", "coding"): 0.8}
SCORES[("slow", "math")] = 0.9
VRAM_MIB = {
    0: (90_000.0, 90_500.0, 91_000.0),
    1: (80_000.0, 80_000.0, 80_200.0),
}  # first, last, peak
# Markup, a terminal escape and broken mathtext: shown as text everywhere, drawn without error.
HOSTILE_LABEL = 'Fast $x^{$ <script>alert("x")</script> \x1b[31mMoE'


def e2e_s(endpoint_id: str) -> float:
    ttft, decode = TIMING[endpoint_id]
    return ttft + (TOKENS - 1) / decode


def published_events(*, fast_label: str = "Fast MoE") -> list[Event]:
    endpoints = (
        endpoint_info("fast", 0, label=fast_label, model_class="moe", active_params_b=3.0),
        endpoint_info("slow", 1, label="Slow Dense", model_class="dense"),
    )
    plans = tuple(
        PhasePlan(e.id, suite, level, PROMPTS, slo_ttft_s=SLO_TTFT_S)
        for e in endpoints
        for level in LEVELS
        for suite in SUITES
    )
    events: list[Event] = [RunStarted(T0, "published", "published", endpoints, plans)]
    for gpu, (first, _, peak) in VRAM_MIB.items():
        events.append(GpuSample(T0, gpu, vram_used_mib=first, source="sim"))
        events.append(GpuSample(T0 + 1, gpu, vram_used_mib=peak, source="sim"))
    t = T0 + 2
    for e in endpoints:
        ttft, decode = TIMING[e.id]
        length = e2e_s(e.id)
        index = 0
        for level in LEVELS:
            for suite in SUITES:
                events.append(PhaseStarted(t, e.id, suite, level, index))
                for i in range(PROMPTS):
                    events.append(
                        request(
                            e.id,
                            t=t + (i // level) * length,  # waves of `level` at once
                            suite=suite,
                            prompt_id=f"{suite}-{i}",
                            concurrency=level,
                            phase_index=index,
                            request_index=i,
                            ttft_s=ttft,
                            e2e_s=length,
                            itl_p50_s=1 / decode,
                            tokens_out=TOKENS,
                            decode_tps=decode,
                            e2e_tps=TOKENS / length,
                            score_heuristic=SCORES[(e.id, suite)],
                        )
                    )
                wall_s = math.ceil(PROMPTS / level) * length
                t += wall_s
                events.append(
                    PhaseFinished(
                        t, e.id, suite, level, index, PROMPTS, 0, PROMPTS * TOKENS, wall_s
                    )
                )
                index += 1
    for gpu, (_, last, _) in VRAM_MIB.items():
        events.append(GpuSample(t, gpu, vram_used_mib=last, source="sim"))
    events.append(RunFinished(t, "complete"))
    return sorted(events, key=lambda e: e.t)


def published_snapshot(root: Path, *, fast_label: str = "Fast MoE") -> Path:
    return write_snapshot(root, "published", published_events(fast_label=fast_label))

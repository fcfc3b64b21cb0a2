"""A deterministic event list of the demo fleet, for tests, snapshot SVGs and screenshots.

The list is what the live runner would have streamed for the demo profile: seven endpoints,
six suites at concurrency 1 then 4, two requests per prompt (six per phase). Each endpoint's run is
simulated on its own seeded ``random.Random``, so the same call gives the same events, and changing
one endpoint leaves the others alone. By default the list stops partway through the run (the fast
MoE endpoints are in their concurrency-4 phases, the dense ones still at concurrency 1), so the
statuses, in-flight counts and progress are all in motion; ``until_s=None`` gives the whole run.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace

from nvfp4_tui.core.events import (
    EndpointConfig,
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
from nvfp4_tui.sim.metrics import TTFT_BUCKETS_S
from nvfp4_tui.telemetry.prometheus import LatencyInterval, observed_interval

START_T = 1_780_000_000.0
PARTWAY_S = 110.0
VRAM_TOTAL_MIB = 97887.0
GPU_NAME = "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"
SERVER_VERSION = "nvfp4-tui-sim 0.1.0"  # fixed, so that a new release draws the same pictures
RUN_ID = "20260528-demo-7gpu"
RUN_NAME = "demo-7gpu"
SUITES = ("english", "japanese", "math", "coding", "design", "tool_call")
CONCURRENCY = (1, 4)
REQUESTS_PER_PROMPT = 2
GPU_SAMPLE_S = 0.5
PROGRESS_WINDOW_S = 2 * GPU_SAMPLE_S  # token progress every other GPU sample
SERVER_SAMPLE_S = 1.0
PHASE_GAP_S = 0.05

PROMPTS: dict[str, tuple[str, ...]] = {
    "english": ("public-libraries", "unreliable-narrators", "cities-after-remote-work"),
    "japanese": ("town-bookshop", "punctual-railways", "letter-on-cooking"),
    "math": ("primes-4k-plus-3", "dice-seven-before-eight", "linear-recurrence"),
    "coding": ("merge-intervals", "lru-cache-ttl", "async-token-bucket"),
    "design": ("url-shortener", "concert-ticketing", "gpu-telemetry-pipeline"),
    "tool_call": ("stock-two-warehouses", "schedule-review", "convert-currency"),
}
# Output tokens per suite (low, high): demo-sized answers, capped by the demo's max_tokens.
TOKENS_OUT: dict[str, tuple[int, int]] = {
    "english": (380, 640),
    "japanese": (300, 500),
    "math": (220, 460),
    "coding": (260, 540),
    "design": (300, 560),
    "tool_call": (28, 90),
}
# Per-request decode speed relative to concurrency 1 (the seed's Qwen3.6 scaling run).
SPEED_AT = {1: 1.0, 4: 135 / 170}
TOOL_ERROR = (
    'HTTP 400: "auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser'
)


@dataclass(frozen=True)
class SampleEndpoint:
    """One simulated endpoint: the demo profile's figures, the seed's quality per suite (the
    heuristic score) and how often its answers pass the suites' checks (the verified score).

    ``client_share`` is the part of the client's TTFT spent outside the server (network, the
    client's own queue): the server's /metrics report the rest. ``server_metrics`` False stands
    for an OpenAI-compatible server that serves no /metrics."""

    info: EndpointInfo
    decode_tps: float
    ttft_s: float
    vram_used_mib: float
    reasoning: bool
    quality: dict[str, float]
    verified: dict[str, float]
    tool_calls_fail: bool = False
    client_share: float = 0.04
    server_metrics: bool = True


def _endpoint(
    id: str, label: str, gpu: int, model_class: str, active_b: float, experts: int | None
) -> EndpointInfo:
    return EndpointInfo(
        id=id,
        label=label,
        url=f"http://127.0.0.1:{18016 + gpu}",
        model="current",
        gpu=gpu,
        model_class=model_class,
        active_params_b=active_b,
        experts=experts,
        simulated=True,
    )


def _configuration(endpoints: tuple[EndpointInfo, ...]) -> tuple[EndpointConfig, ...]:
    """What the demo's simulated servers say of themselves (a simulated card names no driver)."""
    return tuple(
        EndpointConfig(
            info.id,
            server_version=SERVER_VERSION,
            model_root=info.model,
            max_model_len=131_072,
            kv_cache_dtype="fp8",
            gpu_name=GPU_NAME,
        )
        for info in endpoints
    )


def _quality(
    english: float, japanese: float, math: float, coding: float, design: float, tool: float
):
    return {
        "english": english,
        "japanese": japanese,
        "math": math,
        "coding": coding,
        "design": design,
        "tool_call": tool,
    }


# Heuristic quality means follow the seed's table at concurrency 1, tool calls are this sample's
# own; the second table is each endpoint's chance to pass one check of a suite's verifier.
FLEET: tuple[SampleEndpoint, ...] = (
    SampleEndpoint(
        _endpoint("moe_qwen36", "Qwen3.6-35B-A3B", 0, "moe", 3.0, 256),
        144.0,
        0.12,
        92316,
        True,
        _quality(0.93, 0.74, 0.75, 0.80, 0.78, 0.95),
        _quality(0.80, 0.70, 0.90, 0.80, 0.75, 0.95),
    ),
    SampleEndpoint(
        _endpoint("moe_redhat", "RedHatAI Gemma4-26B-A4B", 1, "moe", 3.8, 128),
        130.0,
        0.11,
        92862,
        False,
        _quality(0.91, 0.73, 0.80, 0.85, 0.80, 0.92),
        _quality(0.78, 0.66, 0.72, 0.76, 0.74, 0.92),
    ),
    SampleEndpoint(
        _endpoint("moe_huihui", "Huihui Gemma4-26B-A4B", 2, "moe", 3.8, 128),
        130.0,
        0.11,
        92862,
        False,
        _quality(0.82, 0.73, 0.75, 0.78, 0.80, 0.0),
        _quality(0.70, 0.64, 0.68, 0.70, 0.72, 0.00),
        tool_calls_fail=True,
    ),
    SampleEndpoint(
        _endpoint("dense_qwen35", "Qwen3.5-27B", 3, "dense", 27.0, None),
        56.0,
        0.22,
        92470,
        True,
        _quality(0.97, 0.90, 0.73, 0.90, 0.79, 0.97),
        _quality(0.86, 0.88, 0.93, 0.90, 0.80, 0.97),
    ),
    SampleEndpoint(
        _endpoint("dense_qwopus", "Qwopus3.5-27B", 4, "dense", 27.0, None),
        57.0,
        0.22,
        92470,
        True,
        _quality(0.65, 0.83, 0.90, 0.85, 0.71, 0.93),
        _quality(0.60, 0.78, 0.95, 0.86, 0.66, 0.90),
        client_share=0.7,
    ),
    SampleEndpoint(
        _endpoint("dense_gemma31", "Gemma4-31B", 5, "dense", 31.0, None),
        50.0,
        0.25,
        94210,
        False,
        _quality(0.98, 0.74, 0.65, 0.90, 0.80, 0.94),
        _quality(0.84, 0.70, 0.62, 0.83, 0.78, 0.93),
    ),
    SampleEndpoint(
        _endpoint("moe_jiunsong", "Jiunsong SuperGemma4-26B", 6, "moe", 3.8, 128),
        129.0,
        0.11,
        84195,
        False,
        _quality(0.78, 0.75, 0.63, 0.90, 0.84, 0.90),
        _quality(0.68, 0.70, 0.55, 0.80, 0.76, 0.88),
        server_metrics=False,
    ),
)

ANSWERS: dict[str, str] = {
    "english": (
        "# What a library is for\n\nA public library is the last indoor place where nobody "
        "asks you to buy anything. Its shelves matter less than its hours: a warm room, a "
        "quiet table and a librarian who treats every question as a serious one.\n\n"
        "The case against it is usually made by people who already own the books."
    ),
    "japanese": (
        "町の小さな本屋は、本を売るだけの場所ではありません。\n\n"
        "店主が選んだ棚には、その町の好奇心が映っています。"
        "検索では出会えない一冊に、偶然出会える場所なのです。"
    ),
    "math": (
        "Suppose there are finitely many primes p_1, ..., p_k of the form 4k + 3.\n"
        "Let N = 4(p_1 p_2 ... p_k) - 1. Then N ≡ 3 (mod 4), so N is odd and has a prime "
        "factor q ≡ 3 (mod 4) [a product of primes ≡ 1 (mod 4) is ≡ 1].\n"
        "No p_i divides N, so q is a new prime of the form 4k + 3: a contradiction. ∎"
    ),
    "coding": (
        "```python\ndef merge(intervals: list[list[int]]) -> list[list[int]]:\n"
        "    merged: list[list[int]] = []\n"
        "    for start, end in sorted(intervals):\n"
        "        if merged and start <= merged[-1][1]:\n"
        "            merged[-1][1] = max(merged[-1][1], end)\n"
        "        else:\n"
        "            merged.append([start, end])\n"
        "    return merged\n```\n\nSorting costs O(n log n); the sweep is linear."
    ),
    "design": (
        "## URL shortener\n\n- Write path: POST /links -> base62 id from a sequence, stored in "
        "a key-value table.\n- Read path: GET /{id} -> 301 from an edge cache; a miss falls "
        "through to the store.\n- Scale: reads outnumber writes 100:1, so cache first."
    ),
    "tool_call": "",
}
TOOL_CALLS = (
    '[{"name": "check_stock", "arguments": {"sku": "A-100", "warehouse": "east"}}, '
    '{"name": "check_stock", "arguments": {"sku": "A-100", "warehouse": "west"}}]'
)
REASONING = (
    "The user wants a complete answer. First restate the problem, then check the edge cases, "
    "then write the answer plainly. Keep it within the token budget."
)


@dataclass
class _Request:
    sent_t: float
    first_token_t: float
    end_t: float
    decode_tps: float
    event: RequestFinished


def _verified_score(rng: random.Random, suite: str, pass_rate: float, heuristic: float) -> float:
    """A score shaped as the suite's verifier gives it: credit per sub-question (math), tests
    passed (coding), a call right or half right (tools), coverage blended with the heuristic."""
    if suite == "math":
        return sum(rng.random() < pass_rate for _ in range(3)) / 3
    if suite == "coding":
        return sum(rng.random() < pass_rate for _ in range(5)) / 5
    if suite == "tool_call":
        return 1.0 if rng.random() < pass_rate else 0.5
    if suite == "japanese":
        return round(min(1.0, max(0.0, rng.gauss(pass_rate, 0.06))), 3)
    parts = sum(rng.random() < pass_rate for _ in range(4)) / 4
    return round((heuristic + parts) / 2, 3)


def _request(
    rng: random.Random,
    verify_rng: random.Random,
    spec: SampleEndpoint,
    suite: str,
    concurrency: int,
    phase_index: int,
    request_index: int,
    sent_t: float,
) -> _Request:
    prompt_id = PROMPTS[suite][request_index % len(PROMPTS[suite])]
    tokens_in = rng.randint(90, 320)
    ttft_s = spec.ttft_s * (1 + 0.6 * (concurrency - 1) / 3) * rng.uniform(0.9, 1.25)
    base = dict(
        endpoint_id=spec.info.id,
        suite=suite,
        prompt_id=prompt_id,
        concurrency=concurrency,
        phase_index=phase_index,
        request_index=request_index,
        queue_s=0.0,
        tokens_in=tokens_in,
    )
    if spec.tool_calls_fail and suite == "tool_call":
        e2e_s = rng.uniform(0.004, 0.012)
        event = RequestFinished(
            t=sent_t,
            status="error",
            e2e_s=e2e_s,
            error_kind="http_4xx",
            error_message=TOOL_ERROR,
            **base,
        )
        return _Request(sent_t, sent_t + e2e_s, sent_t + e2e_s, 0.0, event)
    low, high = TOKENS_OUT[suite]
    tokens_out = rng.randint(low, high)
    decode_tps = spec.decode_tps * SPEED_AT[concurrency] * rng.uniform(0.96, 1.04)
    itl_p50_s = 1 / decode_tps
    e2e_s = ttft_s + (tokens_out - 1) / decode_tps
    reasoning_tokens = rng.randint(60, 180) if spec.reasoning else None
    score = min(1.0, max(0.0, rng.gauss(spec.quality[suite], 0.045)))
    event = RequestFinished(
        t=sent_t,
        status="ok",
        ttft_s=ttft_s,
        ttfa_s=ttft_s + (reasoning_tokens or 0) / decode_tps,
        e2e_s=e2e_s,
        itl_p50_s=itl_p50_s,
        itl_p95_s=itl_p50_s * rng.uniform(1.15, 1.35),
        itl_p99_s=itl_p50_s * rng.uniform(1.5, 2.0),
        itl_max_s=itl_p50_s * rng.uniform(2.5, 6.0),
        itl_per_token=True,
        chunks=tokens_out,
        tokens_out=tokens_out,
        reasoning_tokens=reasoning_tokens,
        decode_tps=decode_tps,
        e2e_tps=tokens_out / e2e_s,
        finish_reason="tool_calls" if suite == "tool_call" else "stop",
        answer_text=ANSWERS[suite],
        reasoning_text=REASONING if spec.reasoning else "",
        tool_calls_json=TOOL_CALLS if suite == "tool_call" else None,
        score_heuristic=round(score, 3),
        score_heuristic_detail=f"sample|q={spec.quality[suite]:.2f}",
        score_verified=_verified_score(verify_rng, suite, spec.verified[suite], score),
        score_verified_detail=f"sample|pass={spec.verified[suite]:.2f}",
        **base,
    )
    return _Request(sent_t, sent_t + ttft_s, sent_t + e2e_s, decode_tps, event)


def _plans(fleet: tuple[SampleEndpoint, ...]) -> tuple[PhasePlan, ...]:
    per_phase = REQUESTS_PER_PROMPT * 3
    return tuple(
        PhasePlan(spec.info.id, suite, c, per_phase)
        for spec in fleet
        for c in CONCURRENCY
        for suite in SUITES
    )


def _run_endpoint(
    spec: SampleEndpoint, seed: int
) -> tuple[list[tuple[float, Event]], list[_Request]]:
    """The endpoint's run as (emit time, event) pairs and its requests (for the samplers)."""
    rng = random.Random(seed)
    # Its own generator, so that the verified scores leave every other sampled value as it was.
    verify_rng = random.Random(3000 + seed)
    out: list[tuple[float, Event]] = []
    eid = spec.info.id
    t = START_T + 0.02 + 0.01 * seed
    out.append((t, EndpointStatus(t, eid, "waiting")))
    t += 0.3
    out.append((t, EndpointStatus(t, eid, "warmup")))
    t += spec.ttft_s + 16 / spec.decode_tps
    out.append((t, EndpointStatus(t, eid, "running")))
    requests: list[_Request] = []
    phase_index = 0
    for concurrency in CONCURRENCY:
        for suite in SUITES:
            t += PHASE_GAP_S
            phase_start = t
            out.append((t, PhaseStarted(t, eid, suite, concurrency, phase_index)))
            # Closed loop: each slot sends its next request the moment the last one ends.
            slots = [phase_start + 0.002 * k for k in range(concurrency)]
            finished: list[_Request] = []
            for request_index in range(REQUESTS_PER_PROMPT * len(PROMPTS[suite])):
                slot = min(range(concurrency), key=slots.__getitem__)
                request = _request(
                    rng,
                    verify_rng,
                    spec,
                    suite,
                    concurrency,
                    phase_index,
                    request_index,
                    slots[slot],
                )
                slots[slot] = request.end_t
                finished.append(request)
                out.append((request.end_t, request.event))
            t = max(slots)
            errors = sum(r.event.status == "error" for r in finished)
            tokens = sum(r.event.tokens_out or 0 for r in finished if r.event.status != "error")
            out.append(
                (
                    t,
                    PhaseFinished(
                        t,
                        eid,
                        suite,
                        concurrency,
                        phase_index,
                        len(finished),
                        errors,
                        tokens,
                        t - phase_start,
                    ),
                )
            )
            requests.extend(finished)
            phase_index += 1
    out.append((t, EndpointStatus(t, eid, "done")))
    return out, requests


def _active(requests: list[_Request], t: float) -> tuple[int, int, float]:
    """Requests in flight at ``t``, those of them decoding, and their combined decode rate."""
    in_flight = [r for r in requests if r.sent_t <= t < r.end_t]
    decoding = [r for r in in_flight if t >= r.first_token_t]
    return len(in_flight), len(decoding), sum(r.decode_tps for r in decoding)


def _server_ttft(
    spec: SampleEndpoint, requests: list[_Request], after_t: float, until_t: float
) -> LatencyInterval:
    """The server's TTFT over the first tokens of (after_t, until_t], as its histogram gives it
    with the buckets the simulator serves; failed requests never produced a token."""
    ttfts = [
        (r.first_token_t - r.sent_t) * (1 - spec.client_share)
        for r in requests
        if r.event.status != "error" and after_t < r.first_token_t <= until_t
    ]
    buckets = tuple(
        (bound, float(sum(ttft <= bound for ttft in ttfts)))
        for bound in (*TTFT_BUCKETS_S, math.inf)
    )
    return observed_interval(buckets, len(ttfts), sum(ttfts))


def _samplers(
    spec: SampleEndpoint, requests: list[_Request], end_t: float, seed: int
) -> list[tuple[float, Event]]:
    """GPU samples at 2 Hz, server samples at 1 Hz and token progress at 2 Hz, until ``end_t``."""
    rng = random.Random(1000 + seed)
    gpu = spec.info.gpu or 0
    eid = spec.info.id
    dense = spec.info.model_class == "dense"
    out: list[tuple[float, Event]] = []
    temperature_c = 34.0 + gpu
    steps = int((end_t - START_T) / GPU_SAMPLE_S) + 1
    for step in range(steps):
        t = START_T + 0.1 + 0.013 * gpu + step * GPU_SAMPLE_S
        in_flight, decoding, rate = _active(requests, t)
        load = 0.0 if in_flight == 0 else min(1.0, (0.78 if dense else 0.55) + 0.06 * in_flight)
        power_w = 38 + 540 * load * rng.uniform(0.94, 1.03)
        temperature_c += (42 + 36 * load - temperature_c) * 0.02
        out.append(
            (
                t,
                GpuSample(
                    t=t,
                    gpu=gpu,
                    name=GPU_NAME,
                    uuid=f"GPU-5a1e{gpu:04d}-0000-4000-8000-00000000000{gpu}",
                    vram_used_mib=spec.vram_used_mib + (24 * in_flight if in_flight else 0),
                    vram_total_mib=VRAM_TOTAL_MIB,
                    util_gpu_pct=0.0
                    if in_flight == 0
                    else min(100.0, 88 + 3 * in_flight + rng.uniform(0, 4)),
                    util_mem_pct=0.0
                    if in_flight == 0
                    else (58 if dense else 41) + rng.uniform(0, 6),
                    power_w=round(power_w, 1),
                    power_limit_w=600.0,
                    temperature_c=round(temperature_c, 1),
                    sm_clock_mhz=2617.0 if in_flight else 1200.0,
                    mem_clock_mhz=14001.0,
                    source="sim",
                ),
            )
        )
        if step % 2 == 0:
            # One progress window a second: its decode tokens and decoding stream-seconds.
            progress = TokenProgress(
                t + 0.2,
                eid,
                in_flight,
                round(rate, 1),
                decode_tokens=round(rate * PROGRESS_WINDOW_S),
                decode_s=decoding * PROGRESS_WINDOW_S,
            )
            out.append((t + 0.2, progress))
        if step % int(SERVER_SAMPLE_S / GPU_SAMPLE_S) == 1:
            sample_t = t + 0.3
            ttft = _server_ttft(spec, requests, sample_t - SERVER_SAMPLE_S, sample_t)
            # Drawn whether or not it is sent, so the endpoint's other samples stay the same.
            server = ServerSample(
                t=sample_t,
                endpoint_id=eid,
                requests_running=float(in_flight),
                requests_waiting=0.0,
                kv_cache_pct=round(in_flight * (0.9 if dense else 0.4) + rng.uniform(0, 0.3), 2),
                preemptions_total=0.0,
                prefix_cache_hit_pct=round(rng.uniform(10, 30), 1) if in_flight else 0.0,
                generation_tps=round(rate, 1),
                ttft_count=ttft.count,
                ttft_mean_s=None if ttft.mean_s is None else round(ttft.mean_s, 4),
                ttft_p50_low_s=ttft.p50_low_s,
                ttft_p50_high_s=ttft.p50_high_s,
                ttft_p95_low_s=ttft.p95_low_s,
                ttft_p95_high_s=ttft.p95_high_s,
            )
            if spec.server_metrics:
                out.append((sample_t, server))
    return out


def large_fleet(count: int, nodes: int) -> tuple[SampleEndpoint, ...]:
    """``count`` endpoints spread evenly over ``nodes`` nodes ("node-a", "node-b", …): the demo
    fleet's endpoints over and over, each copy with an id, a GPU and a label of its own."""
    per_node = math.ceil(count / nodes)
    fleet = []
    for index in range(count):
        spec = FLEET[index % len(FLEET)]
        copy = index // len(FLEET)
        node = f"node-{chr(ord('a') + index // per_node)}"
        info = replace(
            spec.info,
            id=f"{spec.info.id}_{copy}" if copy else spec.info.id,
            label=f"{spec.info.label} #{copy + 1}" if copy else spec.info.label,
            gpu=index,  # one index per GPU of the fleet: the state keys telemetry by it
            url=f"http://{node}:{18016 + index % per_node}",
            node=node,
        )
        fleet.append(replace(spec, info=info))
    return tuple(fleet)


def sample_events(
    until_s: float | None = PARTWAY_S, fleet: tuple[SampleEndpoint, ...] = FLEET
) -> list[Event]:
    """The demo fleet's run (or ``fleet``'s) as the UI would receive it, cut ``until_s`` seconds
    in (None: all)."""
    per_endpoint = [_run_endpoint(spec, seed) for seed, spec in enumerate(fleet)]
    run_end_t = max(pairs[-1][0] for pairs, _ in per_endpoint)
    end_t = run_end_t if until_s is None else START_T + until_s
    timeline: list[tuple[float, Event]] = []
    for seed, (spec, (pairs, requests)) in enumerate(zip(fleet, per_endpoint, strict=True)):
        timeline.extend(pairs)
        timeline.extend(_samplers(spec, requests, end_t, seed))
    kept = sorted((p for p in timeline if p[0] <= end_t), key=lambda p: p[0])
    endpoints = tuple(s.info for s in fleet)
    events: list[Event] = [
        RunStarted(START_T, RUN_ID, RUN_NAME, endpoints, _plans(fleet), _configuration(endpoints))
    ]
    events.extend(event for _, event in kept)
    if until_s is None:
        events.append(RunFinished(run_end_t + 0.1, "complete"))
    return events

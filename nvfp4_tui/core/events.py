"""Event records: the one stream that live runs, followers and replays all produce.

Every event is a frozen dataclass with a wall-clock timestamp ``t`` (Unix seconds, UTC) that places
it on the run's timeline. Durations inside events come from ``time.perf_counter`` and are never
mixed with ``t``. ``encode``/``decode`` turn events into JSON lines for the pipe between the runner
process and the UI, and for the snapshot's ``events`` table.

``SamplesSkipped`` is the one record that is not an ``Event``: a replay makes it when it jumps
over telemetry samples, the reducer counts it, and nothing pipes or persists it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

EndpointStatusKind = Literal["waiting", "warmup", "running", "paused", "done", "error", "down"]
RequestStatus = Literal["ok", "incomplete", "error"]
# "suspect" marks rows whose numbers cannot be believed: a legacy script's 0 tokens with no error
# (silent failures), or a token count the stream contradicts. "too_large": a reply past one of
# the run's reply limits (answer bytes, event bytes, chunks); what came before the cut is kept.
# "truncated": a stream that ended, by [DONE] or by closing, before any chunk gave a finish_reason
# (llama.cpp's server ends a stream that way when a new request aborts it): never an answer.
ErrorKind = Literal[
    "http_4xx",
    "http_5xx",
    "timeout",
    "connect",
    "protocol",
    "reset",
    "truncated",
    "too_large",
    "suspect",
]
SUSPECT_ERROR_KIND: ErrorKind = "suspect"
RunStatus = Literal["running", "complete", "aborted"]
RunOutcome = Literal["complete", "aborted"]  # how a run that has finished ended


@dataclass(frozen=True, slots=True)
class EndpointInfo:
    """What the UI and the snapshot know of an endpoint (never its secret)."""

    id: str
    label: str
    url: str
    model: str
    gpu: int | None
    model_class: str  # "moe" | "dense"
    active_params_b: float | None = None
    experts: int | None = None
    simulated: bool = False
    # A simulator run faster than real time (demo --time-scale): its plan and every duration
    # and speed recorded are in modelled seconds, this many times real ones (bench.model_time);
    # the run's timeline (every event's t) is real.
    time_scale: float = 1.0
    # The GPU host it runs on (the profile's `node`, else its URL's host); "" in older runs.
    node: str = ""


@dataclass(frozen=True, slots=True)
class PhasePlan:
    """One phase of one endpoint's plan: a suite at one load level.

    Closed loop (``rate_rps`` None): ``concurrency`` requests held in flight. Open loop: requests
    sent at ``rate_rps`` on a ``constant``, ``poisson`` or ``gamma`` schedule, ``concurrency`` the cap on
    those in flight (0: none). The SLO targets are the endpoint's (see ``nvfp4_tui.core.slo``).
    """

    endpoint_id: str
    suite: str
    concurrency: int
    requests: int | None  # planned request count, None when the phase is bounded by duration_s
    duration_s: float | None = None
    rate_rps: float | None = None
    # "constant" | "poisson" | "gamma" with rate_rps; "trace": a trace's own times, rate_rps
    # its mean rate
    arrivals: str | None = None
    burstiness: float | None = None  # gamma arrivals: the gaps' shape
    # A linear ramp over the phase's first seconds: the rate climbs from 0 (open loop), or
    # the slots start one after another (closed loop).
    ramp_s: float | None = None
    sweep: bool = False  # a sweep step: not run once a stop rule fires below it
    slo_ttft_s: float | None = None
    slo_tpot_s: float | None = None
    slo_e2e_s: float | None = None
    slo_attainment: float | None = None


@dataclass(frozen=True, slots=True)
class EndpointConfig:
    """What an endpoint's server and GPU said of themselves at run start: the manifest's
    ``configuration`` (bench.provenance) in brief, for the views of a run that has no manifest
    at hand. None where nothing answered; every text came from outside."""

    endpoint_id: str
    server_version: str | None = None
    model_root: str | None = None
    max_model_len: int | None = None
    kv_cache_dtype: str | None = None
    kv_block_size: int | None = None  # tokens a KV cache block holds (cache_config_info)
    kv_blocks: int | None = None  # the blocks the cache holds (num_gpu_blocks)
    gpu_name: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None


@dataclass(frozen=True, slots=True)
class BenchmarkSuite:
    """A suite that runs a dataset (HumanEval, or a JSONL file): its scores are shown in a
    section of their own under this label, never pooled with the seed's suites."""

    suite: str
    benchmark: str  # "HumanEval"
    metric: str  # what one answer's verified score is: "pass@1", "exact match", "accuracy"
    sampling: str  # "greedy" (temperature 0) or "temperature 0.8"
    protocol: str  # how the prompts are put: "chat prompt v1" ("" when the suite says nothing)
    problems: int  # prompts planned (a sample may take fewer than the dataset's rows)
    dataset_rows: int  # usable rows in the dataset
    rows_skipped: int = 0  # rows left out as unusable


@dataclass(frozen=True, slots=True)
class RunStarted:
    t: float
    run_id: str
    run_name: str
    endpoints: tuple[EndpointInfo, ...]
    phases: tuple[PhasePlan, ...]
    # Empty in a run recorded before it was carried, in an import, or where probing failed.
    configuration: tuple[EndpointConfig, ...] = ()
    benchmarks: tuple[BenchmarkSuite, ...] = ()  # its dataset suites (empty in older runs)
    # Suites whose answers are never scored (synthetic lengths, a trace, sessions): no pane
    # shows them a quality row that would stay empty.
    unscored: tuple[str, ...] = ()

    @property
    def total_requests(self) -> int | None:
        counts = [p.requests for p in self.phases]
        if any(c is None for c in counts):
            return None
        return sum(c for c in counts if c is not None)


@dataclass(frozen=True, slots=True)
class PhaseStarted:
    t: float
    endpoint_id: str
    suite: str
    concurrency: int
    phase_index: int


@dataclass(frozen=True, slots=True)
class PhaseFinished:
    t: float
    endpoint_id: str
    suite: str
    concurrency: int
    phase_index: int
    requests: int
    errors: int
    output_tokens: int
    wall_s: float
    late_requests: int = 0  # open loop: sent more than slo.LATE_AFTER_S after their slot
    unsent_requests: int = 0  # open loop: due before the phase stopped sending, never sent
    limit: str | None = None  # what cut the phase short: max_duration, max_requests, max_errors
    sweep_stop: str | None = None  # the rule that ended a sweep here: errors, slo, throughput
    # Seconds (summed over the phase's senders) that sends waited for answer verification to
    # catch up (bench.verify_backlog): while they wait, fewer than N requests are in flight.
    verify_wait_s: float = 0.0
    # Closed loop: seconds of ``wall_s`` with all ``concurrency`` requests in flight, each from
    # its send to the end of the server's answer ([DONE] or the body closed). A short phase's last wave runs with fewer, and its throughput is no
    # capacity figure; None in snapshots recorded before it was counted.
    full_load_s: float | None = None
    # How late the runner's event loop ran what became ready while the phase ran (seconds; see
    # ``bench.loop_lag``): every TTFT and ITL of the phase may read up to this much long. None
    # in runs recorded before it was measured. ``timing_doubt`` says when it matters.
    loop_lag_p99_s: float | None = None
    loop_lag_max_s: float | None = None
    # Seconds the loop's thread waited for a CPU while the phase ran (the kernel's run-queue
    # wait): a lag this explains came from the box, not from the client's own work. None where
    # the kernel does not say (not Linux) and in runs recorded before it was measured.
    cpu_wait_s: float | None = None

    @property
    def throughput_tps(self) -> float | None:
        """Aggregate throughput: the phase's output tokens over its wall time."""
        return self.output_tokens / self.wall_s if self.wall_s > 0 else None


# The bases below hold no storage of their own (``__slots__ = ()``): each concrete class that
# takes their fields (RequestFinished here, the client's Measurement) gets one slot per field.
@dataclass(frozen=True)
class RequestKey:
    """Which request a row is: when it was sent, where, and its place in the plan."""

    __slots__ = ()
    t: float  # wall clock when the request was sent
    endpoint_id: str
    suite: str
    prompt_id: str
    concurrency: int
    phase_index: int
    request_index: int


@dataclass(frozen=True)
class MeasuredFields:
    """What the client measures of one request (DESIGN.md "Metric definitions"), defined once
    for the client's Measurement and the RequestFinished row that carries it."""

    __slots__ = ()
    status: RequestStatus
    queue_s: float
    # From handing the request to the HTTP client to its bytes reaching the socket: taking a
    # pooled connection or opening one (TCP, TLS). Kept out of TTFT and E2E, which start there.
    setup_s: float | None = None
    ttft_s: float | None = None
    ttfa_s: float | None = None
    # To the chunk that brought the second generated token (TTFT's when the first chunk held
    # two or more): the first gap a user feels, apart from the prefill.
    ttst_s: float | None = None
    e2e_s: float | None = None
    itl_p50_s: float | None = None
    itl_p95_s: float | None = None
    itl_p99_s: float | None = None
    itl_max_s: float | None = None
    # vLLM's TPOT (AIPerf's ITL): (e2e − TTFT) / (output tokens − 1), of a finished answer.
    tpot_s: float | None = None
    itl_per_token: bool = False  # True when per-chunk usage let gaps be split per token
    chunks: int = 0
    # Cumulative usage.completion_tokens of the first chunk that carried generated text: the
    # tokens decoded before TTFT (a tool-call head arrives as 8-9 at once). Decode tok/s leaves
    # them out; None when the server sent no per-chunk usage, and decode then assumes 1.
    first_chunk_tokens: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    reasoning_tokens: int | None = None
    tokens_estimated: bool = False
    decode_tps: float | None = None
    e2e_tps: float | None = None
    prefill_tps: float | None = None  # prompt tokens (the server's count) over TTFT
    finish_reason: str | None = None
    answer_text: str = ""
    reasoning_text: str = ""
    tool_calls_json: str | None = None
    error_kind: ErrorKind | None = None
    error_message: str | None = None
    http_status: int | None = None  # the reply's HTTP status; None when no reply came
    retry_after_s: float | None = None  # the server's Retry-After on a 429/503, in seconds


@dataclass(frozen=True, slots=True)
class RequestFinished(MeasuredFields, RequestKey):
    """One finished request: exactly one row of the snapshot's ``requests`` table. Its columns
    are the key's, the measured fields, then what the run adds: scores, lateness, trimming."""

    score_heuristic: float | None = None
    score_heuristic_detail: str | None = None
    score_verified: float | None = None  # the suite's verifying scorer (nvfp4_tui.scoring.verify)
    score_verified_detail: str | None = None
    score_judge: float | None = None  # an LLM judge's rubric score, when a profile asks for one
    score_judge_detail: str | None = None
    late_s: float | None = None  # open loop: how long after its scheduled time it was sent
    # True: in the phase's warm-up or cool-down window, left out of timing statistics; False:
    # inside the measured window; None: the phase has no such windows.
    trimmed: bool | None = None
    attempt: int = 0  # 0 for the first send; 1, 2... for each retry of a 429/503 (run.retries)
    # A synthetic, trace or context-ladder prompt's lengths as asked (config.synthetic,
    # config.context_ladder: a rung has no output length), beside what the server counted
    # (tokens_in, tokens_out); None for every other suite's prompts.
    tokens_in_asked: int | None = None
    tokens_out_asked: int | None = None
    turn: int | None = None  # a multi-turn session's turn (from 1); its session is in prompt_id


def measured_fields(measured: MeasuredFields) -> dict[str, Any]:
    """The measured fields of ``measured`` by name, to make a row of them (no deep copy)."""
    return {f.name: getattr(measured, f.name) for f in fields(MeasuredFields)}


@dataclass(frozen=True, slots=True)
class ProbeFinished:
    """A request the tool sent on its own account before a plan's phases (the warm-up): on the
    wire and in the server's counters, in no row and no figure. Kept so that the server's
    token counters can be reconciled with the run, and so that a probe that failed is seen (the
    runner also records a failed one as the endpoint's first error row)."""

    t: float  # wall clock when its bytes went out
    endpoint_id: str
    purpose: str  # "warmup"
    status: RequestStatus
    http_status: int | None = None
    ttft_s: float | None = None
    e2e_s: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_estimated: bool = False
    finish_reason: str | None = None
    error_kind: ErrorKind | None = None
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class TokenProgress:
    """Throttled progress of the requests in flight on one endpoint (not persisted)."""

    t: float
    endpoint_id: str
    in_flight: int
    tokens_per_s: float  # generated tokens per second across the in-flight streams, last window
    # In the same window: tokens that came after each stream's first generated chunk, and the
    # stream-seconds spent decoding them. Their ratio is the per-stream decode rate, steady
    # while streams start and end inside the window.
    decode_tokens: int = 0
    decode_s: float = 0.0


@dataclass(frozen=True, slots=True)
class ClientHealth:
    """The load generator's own state, once a second from each process that sends requests
    (not persisted): whether the tool, rather than the server, is what limits the run. Real
    seconds, whatever the simulator's time scale: they are the client's, not the model's."""

    t: float
    pid: int  # the sending process (a --workers run has one per shard)
    cpu_pct: float | None  # the process's CPU time over the window, in % of one core
    loop_lag_p99_s: float | None  # how late its event loop ran what was ready, p99 and max
    loop_lag_max_s: float | None
    cpu_wait_s: float | None  # seconds its loop's thread waited for a CPU (Linux), in the window
    queued: int  # requests waiting for a connection slot of their endpoint's client
    in_flight: int  # requests sent and not yet answered


@dataclass(frozen=True, slots=True)
class GpuSample:
    t: float
    gpu: int
    name: str | None = None
    uuid: str | None = None
    vram_used_mib: float | None = None
    vram_total_mib: float | None = None
    util_gpu_pct: float | None = None
    util_mem_pct: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    temperature_c: float | None = None
    sm_clock_mhz: float | None = None
    mem_clock_mhz: float | None = None
    source: str = "nvml"  # nvml | dcgm | sim
    host: str | None = None


@dataclass(frozen=True, slots=True)
class ServerSample:
    t: float
    endpoint_id: str
    requests_running: float | None = None
    requests_waiting: float | None = None
    kv_cache_pct: float | None = None
    preemptions_total: float | None = None
    prefix_cache_hit_pct: float | None = None
    prompt_tps: float | None = None
    generation_tps: float | None = None
    # The latency histograms over the observations since the previous poll; all None on the
    # first poll and across a server restart. A mean is exact (the _sum and _count deltas) and
    # comes with its count so spans of polls can be averaged exactly. A histogram places a
    # quantile only in a bucket: (low, high], high None when it is above the top finite bound.
    ttft_count: int | None = None
    ttft_mean_s: float | None = None
    ttft_p50_low_s: float | None = None
    ttft_p50_high_s: float | None = None
    ttft_p95_low_s: float | None = None
    ttft_p95_high_s: float | None = None
    itl_count: int | None = None
    itl_mean_s: float | None = None
    itl_p50_low_s: float | None = None
    itl_p50_high_s: float | None = None
    itl_p95_low_s: float | None = None
    itl_p95_high_s: float | None = None
    e2e_count: int | None = None
    e2e_mean_s: float | None = None
    e2e_p50_low_s: float | None = None
    e2e_p50_high_s: float | None = None
    e2e_p95_low_s: float | None = None
    e2e_p95_high_s: float | None = None
    # Where a request's time went inside the server (vLLM's request_queue_time, _prefill_time
    # and _decode_time histograms), over the requests that finished since the previous poll.
    queue_count: int | None = None
    queue_mean_s: float | None = None
    prefill_count: int | None = None
    prefill_mean_s: float | None = None
    decode_count: int | None = None
    decode_mean_s: float | None = None
    # Prompt tokens looked up in the prefix cache since the previous poll: the weight of
    # ``prefix_cache_hit_pct`` when polls are pooled (None where only the old gauge is served).
    prefix_cache_queries: float | None = None


@dataclass(frozen=True, slots=True)
class EndpointStatus:
    t: float
    endpoint_id: str
    status: EndpointStatusKind
    message: str | None = None


@dataclass(frozen=True, slots=True)
class RunFinished:
    t: float
    status: RunStatus
    message: str | None = None


HISTORY_LEN = 600  # points per ring: 5 min of GPU samples at 2/s, well over a 60 s sparkline


@dataclass(frozen=True, slots=True)
class SamplesSkipped:
    """Telemetry samples a replay jumped over: counted, not folded in (never persisted).

    Only their count outlives the jump: their points would have left the ``HISTORY_LEN`` rings
    of the state, and the samples that set the latest, first and last values are folded in as
    usual.
    """

    t: float
    count: int
    gpu: int | None = None  # a GPU's samples, or else
    endpoint_id: str | None = None  # an endpoint's server samples
    host: str | None = None  # with ``gpu``: the host its samples named


Event = (
    RunStarted
    | PhaseStarted
    | PhaseFinished
    | RequestFinished
    | ProbeFinished
    | TokenProgress
    | ClientHealth
    | GpuSample
    | ServerSample
    | EndpointStatus
    | RunFinished
)

EVENT_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        RunStarted,
        PhaseStarted,
        PhaseFinished,
        RequestFinished,
        ProbeFinished,
        TokenProgress,
        ClientHealth,
        GpuSample,
        ServerSample,
        EndpointStatus,
        RunFinished,
    )
}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in fields(cls)) for cls in EVENT_TYPES.values()
}


def to_dict(event: Event) -> dict[str, Any]:
    """The event's fields as plain JSON-ready values, plus its ``type`` name."""
    body = {name: getattr(event, name) for name in _FIELD_NAMES[type(event)]}
    if any(isinstance(value, (tuple, list, dict)) for value in body.values()):
        body = asdict(event)  # nested records (RunStarted's): asdict copies them deeply
    body["type"] = type(event).__name__
    return body


def from_dict(body: dict[str, Any]) -> Event:
    """Rebuild an event from ``to_dict``'s output; raises ValueError naming what is wrong."""
    body = dict(body)
    name = body.pop("type", None)
    cls = EVENT_TYPES.get(str(name))
    if cls is None:
        raise ValueError(f"unknown event type {name!r}")
    if cls is RunStarted:
        body["endpoints"] = tuple(EndpointInfo(**e) for e in body["endpoints"])
        body["phases"] = tuple(PhasePlan(**p) for p in body["phases"])
        body["configuration"] = tuple(EndpointConfig(**c) for c in body.get("configuration", ()))
        body["benchmarks"] = tuple(BenchmarkSuite(**b) for b in body.get("benchmarks", ()))
        body["unscored"] = tuple(s for s in body.get("unscored", ()) if isinstance(s, str))
    known = {f.name for f in fields(cls)}
    unknown = set(body) - known
    if unknown:
        raise ValueError(f"{name}: unexpected fields {sorted(unknown)}")
    return cls(**body)


def encode(event: Event) -> bytes:
    """One JSON line, newline-terminated."""
    return json.dumps(to_dict(event), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes | str) -> Event:
    return from_dict(json.loads(line))

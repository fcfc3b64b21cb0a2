"""Fleet profiles: a TOML file naming the endpoints and the run plan, read into typed objects."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlparse, urlsplit, urlunsplit

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.arrivals import ARRIVALS, MAX_BURSTINESS, Arrivals
from nvfp4_tui.config.context_ladder import (
    CONTEXT_EXAMPLE,
    ContextLadder,
    ladder_suites,
    parse_context_lengths,
)
from nvfp4_tui.config.levels import load_levels
from nvfp4_tui.config.sessions import (
    DEFAULT_TURN_TOKENS,
    MAX_SESSIONS,
    MAX_THINK_S,
    MAX_TURNS,
    SESSIONS_SUITE,
    SessionsSpec,
)
from nvfp4_tui.config.synthetic import (
    SYNTHETIC_EXAMPLE,
    SYNTHETIC_SUITE,
    Synthetic,
    parse_synthetic,
)
from nvfp4_tui.config.telemetry_choice import (
    EXPECTED as TELEMETRY_EXPECTED,
)
from nvfp4_tui.config.telemetry_choice import (
    ON_THIS_HOST,
    URL_KINDS,
    Telemetry,
    TelemetryKind,
    parse_telemetry,
)
from nvfp4_tui.config.tomlcheck import (
    ConfigError,
    Problems,
    Table,
    a_bool,
    a_list_of,
    a_number,
    a_string,
    an_int,
    load_toml,
    one_of,
    spelt_out,
)
from nvfp4_tui.config.trace import (
    MAX_BLOCK_TOKENS,
    MAX_SPEEDUP,
    MOONCAKE_BLOCK_TOKENS,
    TRACE_SUITE,
    TraceSpec,
)
from nvfp4_tui.core.events import EndpointInfo
from nvfp4_tui.core.slo import SloTargets

ModelClass = Literal["moe", "dense"]
_BURSTINESS = f"a number above 0 and at most {MAX_BURSTINESS:g}"

# A long-context model's recall of a fact mid-context, falling past 32K (needle tests find
# this shape; the numbers are the simulator's, no measurement).
DEFAULT_RECALL_CURVE: tuple[tuple[int, float], ...] = ((4096, 1.0), (32768, 0.96), (131072, 0.8))
# The seed's scaling run for Qwen3.6 (per-request decode tok/s 170/140/135/73 at c=1/2/4/8),
# as each request's speed relative to concurrency 1.
SEED_CONCURRENCY_CURVE: tuple[tuple[int, float], ...] = (
    (1, 1.0),
    (2, 140 / 170),
    (4, 135 / 170),
    (8, 73 / 170),
)
RTX_PRO_6000_TOTAL_MIB = 97887
MAX_RETRIES = 10
# Upper bounds far past any real run: a typo such as 10**18 gets a one-line error, not an
# event loop asked to hold that many requests in flight.
MAX_CONCURRENCY = 4096
MAX_REQUESTS = 1_000_000
MAX_RATE_RPS = 10_000.0
MAX_SECONDS = 7 * 24 * 3600.0
MAX_TOKENS = 1 << 20
MIN_REPLY_BYTES = 1 << 10
MAX_REPLY_BYTES = 1 << 32
MAX_REPLY_CHUNKS = 1 << 27
_REPLY_BYTES = f"an integer number of bytes from {MIN_REPLY_BYTES} to {MAX_REPLY_BYTES}"
_REPLY_CHUNKS = f"an integer from 1 to {MAX_REPLY_CHUNKS}"
MAX_WORKERS = 256
_WORKERS = f"an integer from 1 to {MAX_WORKERS}"
_seconds = a_number(above=0, maximum=MAX_SECONDS)
_SECONDS = f"a number of seconds > 0 and <= {MAX_SECONDS:g}"
_requests = an_int(1, MAX_REQUESTS)
_REQUESTS = f"an integer from 1 to {MAX_REQUESTS}"
_CONCURRENCY = f"an integer from 1 to {MAX_CONCURRENCY}"
_concurrency_list = a_list_of(an_int(1, MAX_CONCURRENCY))
_CONCURRENCY_LIST = f"a non-empty list of integers from 1 to {MAX_CONCURRENCY}"
_RATES = f"a number of requests/s > 0 and <= {MAX_RATE_RPS:g}, or a list of them"
_ID = re.compile(r"^[A-Za-z0-9_.-]+$")
# vLLM's --kv-cache-dtype choices: the simulator labels its cache with one, as vLLM does.
KV_CACHE_DTYPES = ("auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc")


@dataclass(frozen=True)
class FaultSpec:
    """Faults the simulator injects on one endpoint; all off by default."""

    down: bool = False  # connection refused
    http_status: int | None = None  # 429, 500 or 503 answered at error_rate
    error_rate: float = 0.0
    stall_s: float = 0.0  # a pause mid-stream, at stall_rate
    stall_rate: float = 0.0
    reset_rate: float = 0.0  # connection reset mid-stream
    malformed_rate: float = 0.0  # a chunk that is not JSON
    cutoff_rate: float = 0.0  # the stream ends before finish_reason and [DONE]
    drip_s: float = 0.0  # extra delay before every chunk (slow drip)


UsageQuirk = Literal["separate", "finish", "none"]
USAGE_QUIRKS: tuple[UsageQuirk, ...] = ("separate", "finish", "none")


@dataclass(frozen=True)
class QuirkSpec:
    """How a simulated endpoint's server differs from vLLM's ways: what real servers were seen
    to do (README "The simulator"). The defaults are vLLM's."""

    # Where usage goes, when the request asks for it: a chunk of its own with `choices: []`
    # (vLLM, transformers serve), inside the finish_reason chunk, or nowhere (llama.cpp).
    usage: UsageQuirk = "separate"
    continuous_usage: bool = True  # honours stream_options.continuous_usage_stats, as vLLM does
    done: bool = True  # ends a stream with `data: [DONE]` (transformers serve does not)
    metrics: bool = True  # serves /metrics (transformers serve answers 404)
    serial: bool = False  # one request at a time, the others queue (transformers serve)
    # The Nth chat request (from 1; 0: never) kills the engine: HTTP 200, one SSE error object,
    # [DONE], and the server stops listening (vLLM's EngineCore crash).
    engine_crash_at: int = 0
    # A request arriving ends every stream in flight with [DONE] and no finish_reason (llama.cpp).
    new_request_aborts: bool = False
    # A chunk per token, where tokens that end inside a UTF-8 character come as chunks of empty
    # content before the one with the text (llama.cpp).
    utf8_fragments: bool = False
    # Takes vLLM's own sampling fields (ignore_eos, min_tokens, top_k, ...); transformers serve
    # answers HTTP 422 "Unexpected fields in the request" to any of them.
    vllm_sampling_fields: bool = True
    # Its tokenizer cuts text this many times finer than the simulator's (prompts only): the
    # real-server stage's tiny model, trained on a small corpus, cuts a short word in ~3.
    token_scale: float = 1.0


@dataclass(frozen=True)
class ServerSettings:
    """The vLLM settings a simulated endpoint's figures depend on (see sim.kv_cache)."""

    kv_cache_dtype: str = "auto"
    gpu_memory_utilization: float = 0.9  # vLLM's default


@dataclass(frozen=True)
class SimSpec:
    """How the built-in simulator serves one endpoint."""

    decode_tps: float
    ttft_s: float
    vram_used_mib: float
    vram_total_mib: float = RTX_PRO_6000_TOTAL_MIB
    prefill_tps: float = 8000.0  # TTFT grows by prompt_tokens / prefill_tps
    # vLLM's automatic prefix caching: a prompt's cached leading blocks are not prefilled
    # again, so its TTFT grows by the uncached tokens only (on by default in vLLM).
    prefix_caching: bool = True
    concurrency_curve: tuple[tuple[int, float], ...] = SEED_CONCURRENCY_CURVE
    reasoning: bool = False
    tools: bool = True
    quality: float = 0.8  # 0..1: how good its answers are
    # The chance it recalls a fact hidden in the middle of a context of so many tokens (the
    # context ladder's); at the start and the end it misses less (``sim.recall``).
    recall_curve: tuple[tuple[int, float], ...] = DEFAULT_RECALL_CURVE
    # Its KV cache's tokens in an 8-bit dtype (a 16-bit one holds half: the same bytes); None:
    # a 96 GB card's pool (``sim.kv_cache``).
    kv_cache_tokens: int | None = None
    power_limit_w: float = 600.0
    gpu_name: str = "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"
    # What it serves; decode_tps, concurrency_curve and vram_used_mib were measured with
    # measured_with (None: these same settings), and sim.kv_cache moves them by the difference.
    kv_cache_dtype: str = ServerSettings.kv_cache_dtype
    gpu_memory_utilization: float = ServerSettings.gpu_memory_utilization
    measured_with: ServerSettings | None = None
    seed: int = 0
    faults: FaultSpec = field(default_factory=FaultSpec)
    quirks: QuirkSpec = field(default_factory=QuirkSpec)

    @property
    def served(self) -> ServerSettings:
        return ServerSettings(self.kv_cache_dtype, self.gpu_memory_utilization)

    @property
    def measured(self) -> ServerSettings:
        return self.measured_with or self.served


@dataclass(frozen=True)
class Endpoint:
    id: str
    label: str
    url: str  # base URL without a trailing /v1
    model: str
    gpu: int | str | None  # index, UUID, "auto" or None
    model_class: ModelClass
    active_params_b: float | None = None
    experts: int | None = None
    api_key_env: str | None = None
    telemetry: Telemetry = ON_THIS_HOST
    extra_body: dict[str, Any] = field(default_factory=dict)
    sim: SimSpec | None = None
    slo: SloTargets | None = None  # None: the run's
    verify_tls: bool = True  # False: an https endpoint's certificate is not checked (said loudly)
    time_scale: float = 1.0  # a simulator's clock factor (demo --time-scale)
    node: str = ""  # the GPU host it runs on; the profile's `node`, else the URL's host

    @property
    def info(self) -> EndpointInfo:
        return EndpointInfo(
            id=self.id,
            label=self.label,
            url=self.url,
            model=self.model,
            gpu=self.gpu if isinstance(self.gpu, int) else None,
            model_class=self.model_class,
            active_params_b=self.active_params_b,
            experts=self.experts,
            simulated=self.sim is not None,
            time_scale=self.time_scale,
            node=self.node,
        )

    def with_url(self, url: str) -> Endpoint:
        return replace(self, url=url)


@dataclass(frozen=True)
class SweepSpec:
    """How a sweep climbs (when the profile lists one level) and when it stops before the top.

    Stop rules, checked after each step: the step's error share passed ``max_error_share``, its
    SLO attainment fell below the target, or aggregate throughput grew < 5% over the last step.
    """

    factor: float = 2.0
    max_steps: int = 8
    max_error_share: float = 0.05


@dataclass(frozen=True)
class ReplyLimits:
    """What one reply may make the client hold; past any of them the request ends ``too_large``
    with what arrived before the cut kept. The ``[run]`` keys of the same names raise them.

    The defaults sit far past a real answer: 131,072 tokens of text are about 0.5 MiB, streamed
    one chunk each.
    """

    max_answer_bytes: int = 16 << 20  # answer, reasoning and tool-call text together, as UTF-8
    max_event_bytes: int = 16 << 20  # one SSE event's data lines, or one line without its end
    max_chunks: int = 1 << 18  # SSE events in one reply


@dataclass(frozen=True)
class RunPlan:
    name: str
    suites: tuple[str, ...]
    concurrency: tuple[int, ...] = (1,)
    requests: int | None = 2  # per prompt per phase; None when duration_s bounds phases
    duration_s: float | None = None
    temperature: float = 0.3
    timeout_s: float = 300.0
    max_tokens: int | None = None
    warmup: bool = True
    seed: int = 0
    rate_rps: tuple[float, ...] = ()  # open-loop levels; empty: closed loop at ``concurrency``
    arrivals: Arrivals = "poisson"
    burstiness: float = 1.0  # gamma arrivals only
    max_concurrency: int | None = None  # open loop: the cap on requests in flight
    sweep: SweepSpec | None = None
    # Left out of timing statistics: the first / last requests of each phase, by count or time.
    warmup_requests: int = 0
    warmup_s: float = 0.0
    cooldown_requests: int = 0
    cooldown_s: float = 0.0
    max_duration_s: float | None = None  # per phase: stop sending once reached
    max_requests: int | None = None
    max_errors: int | None = None
    slo: SloTargets = field(default_factory=SloTargets)
    retries: int = 0  # resends of a request answered 429 or 503; every attempt is its own row
    # An endpoint refusing connections is probed this long: past a large model's reload.
    outage_give_up_s: float = 600.0
    limits: ReplyLimits = field(default_factory=ReplyLimits)
    # Runner processes the endpoints are shared out over; None: from the endpoint count and
    # the cores (``bench.shards.worker_count``).
    workers: int | None = None
    # The GPU telemetry of every endpoint that sets none (and is not simulated): a Prometheus
    # server that scrapes the whole fleet is named once. None: "nvml".
    telemetry: Telemetry | None = None
    sample: int | None = None  # at most this many prompts per suite, picked by ``seed``
    # Generated prompts by length (``--synthetic``, ``[run] synthetic``): the suite named
    # SYNTHETIC_SUITE in ``suites`` is made from it rather than read from a file.
    synthetic: Synthetic | None = None
    # A trace to replay (``--trace``, ``[run] trace``): the suite named TRACE_SUITE, one
    # open-loop phase at the trace's own times.
    trace: TraceSpec | None = None
    # Multi-turn conversations (``--sessions``, ``[run] sessions``): the suite SESSIONS_SUITE,
    # sent a conversation at a time per slot (``bench.sessions``).
    sessions: SessionsSpec | None = None
    # The context ladder (``--context-lengths``, ``[run] context_lengths``): a suite per rung,
    # ``config.context_ladder.rung_suite`` of each length.
    context: ContextLadder | None = None
    slice_s: float | None = None  # the report's time slices (``report --slice``), seconds
    ramp_s: float | None = None  # each phase climbs to its level over its first seconds
    trials: int = 1  # the plan run this many times, each to its own snapshot (headless)


@dataclass(frozen=True)
class JudgeSpec:
    """An OpenAI-compatible endpoint that grades answers by a rubric per suite (off when absent)."""

    url: str
    model: str
    rubrics: dict[str, str]
    api_key_env: str | None = None
    timeout_s: float = 60.0
    max_tokens: int = 512


@dataclass(frozen=True)
class Profile:
    path: Path
    run: RunPlan
    endpoints: tuple[Endpoint, ...]
    judge: JudgeSpec | None = None

    @property
    def suite_dirs(self) -> tuple[Path, ...]:
        """Where its suites are found: the built-in ones, then the profile's own ``suites/``
        folder, whose files add suites or replace built-in ones of the same name."""
        return (BUILTIN_SUITES, self.path.parent / "suites")

    def with_gpus(self, gpus: dict[str, int]) -> Profile:
        """The profile with endpoints' GPUs replaced by resolved indices (UUID or "auto")."""
        endpoints = tuple(replace(e, gpu=gpus.get(e.id, e.gpu)) for e in self.endpoints)
        return replace(self, endpoints=endpoints)

    def with_telemetry(self, kind: TelemetryKind) -> Profile:
        """Every endpoint's GPU telemetry from one kind of host source ("sim" only where
        simulated)."""
        endpoints = tuple(
            replace(e, telemetry=Telemetry("none" if kind == "sim" and e.sim is None else kind))
            for e in self.endpoints
        )
        return replace(self, endpoints=endpoints)


def _url(raw: Any) -> str | None:
    if not isinstance(raw, str):
        return None
    parsed = urlparse(raw.strip())
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return None
    try:
        parsed.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return None
    base = raw.strip().rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def _refuse_credentials(table: Table, key: str, prefix: str = "") -> None:
    """A URL with ``user:password@`` is an error naming the key; its credentials are taken out
    before anything can echo, store or send them."""
    raw = table.data.get(key)
    if not isinstance(raw, str) or not raw.startswith(prefix):
        return
    parts = urlsplit(raw[len(prefix) :].strip())
    if "@" not in parts.netloc:
        return
    table.problems.add(
        f"{table.key}.{key}",
        "expected a URL without user:password@ (keys belong in env vars: api_key_env)",
    )
    host = parts.netloc.rpartition("@")[2]
    table.data[key] = prefix + urlunsplit(parts._replace(netloc=host))


def _refuse_telemetry_credentials(table: Table) -> None:
    for prefix in (f"{kind}:" for kind in URL_KINDS):
        _refuse_credentials(table, "telemetry", prefix)


def _gpu(raw: Any) -> int | str | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if raw >= 0 else None
    if isinstance(raw, str) and (raw == "auto" or raw.startswith(("GPU-", "MIG-"))):
        return raw
    return None


def _telemetry(raw: Any) -> Telemetry | None:
    return parse_telemetry(raw, lambda url: _url(url) is not None)


def _an_id(raw: Any) -> str | None:
    return raw if isinstance(raw, str) and _ID.match(raw) else None


def _recall_curve(raw: Any) -> tuple[tuple[int, float], ...] | None:
    if not isinstance(raw, list) or not raw:
        return None
    points = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 2):
            return None
        tokens, chance = an_int(1)(item[0]), _rate(item[1])
        if tokens is None or chance is None:
            return None
        points.append((tokens, chance))
    lengths = [tokens for tokens, _ in points]
    return tuple(points) if lengths == sorted(set(lengths)) else None


def _curve(raw: Any) -> tuple[tuple[int, float], ...] | None:
    if not isinstance(raw, list) or not raw:
        return None
    points: list[tuple[int, float]] = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 2):
            return None
        c, factor = an_int(1)(item[0]), a_number(above=0)(item[1])
        if c is None or factor is None:
            return None
        points.append((c, factor))
    concurrencies = [c for c, _ in points]
    if concurrencies != sorted(set(concurrencies)) or concurrencies[0] != 1:
        return None
    return tuple(points)


def _rate(raw: Any) -> float | None:
    return a_number(minimum=0, maximum=1)(raw)


def _read_faults(table: Table | None) -> FaultSpec:
    if table is None:
        return FaultSpec()
    spec = FaultSpec(
        down=table.get("down", a_bool, "true or false", False),
        http_status=table.get(
            "http_status",
            lambda v: v if v in (400, 404, 422, 429, 500, 503) else None,
            "one of 400, 404, 422, 429, 500, 503",
            None,
        ),
        error_rate=table.get("error_rate", _rate, "a number from 0 to 1", 0.0),
        stall_s=table.get("stall_s", a_number(minimum=0), "a number of seconds >= 0", 0.0),
        stall_rate=table.get("stall_rate", _rate, "a number from 0 to 1", 0.0),
        reset_rate=table.get("reset_rate", _rate, "a number from 0 to 1", 0.0),
        malformed_rate=table.get("malformed_rate", _rate, "a number from 0 to 1", 0.0),
        cutoff_rate=table.get("cutoff_rate", _rate, "a number from 0 to 1", 0.0),
        drip_s=table.get("drip_s", a_number(minimum=0), "a number of seconds >= 0", 0.0),
    )
    table.finish()
    return spec


def _read_quirks(table: Table | None) -> QuirkSpec:
    if table is None:
        return QuirkSpec()
    flag = "true or false"
    spec = QuirkSpec(
        usage=table.get("usage", one_of(*USAGE_QUIRKS), spelt_out(USAGE_QUIRKS), "separate"),
        continuous_usage=table.get("continuous_usage", a_bool, flag, True),
        done=table.get("done", a_bool, flag, True),
        metrics=table.get("metrics", a_bool, flag, True),
        serial=table.get("serial", a_bool, flag, False),
        engine_crash_at=table.get(
            "engine_crash_at", an_int(0), "an integer >= 0 (the request that crashes; 0: none)", 0
        ),
        new_request_aborts=table.get("new_request_aborts", a_bool, flag, False),
        utf8_fragments=table.get("utf8_fragments", a_bool, flag, False),
        vllm_sampling_fields=table.get("vllm_sampling_fields", a_bool, flag, True),
        token_scale=table.get(
            "token_scale", a_number(minimum=1, maximum=16), "a number from 1 to 16", 1.0
        ),
    )
    table.finish()
    return spec


def _kv_cache_dtype(value: object) -> str | None:
    return value if isinstance(value, str) and value in KV_CACHE_DTYPES else None


_KV_CACHE_DTYPE = "one of " + ", ".join(KV_CACHE_DTYPES)
_utilization = a_number(above=0, maximum=1)
_UTILIZATION = "a share of the GPU's memory > 0 and <= 1"


def _read_sim(table: Table | None) -> SimSpec | None:
    if table is None:
        return None
    positive = a_number(above=0)
    spec = SimSpec(
        decode_tps=table.get("decode_tps", positive, "a number of tokens/s > 0", 1.0),
        ttft_s=table.get("ttft_s", a_number(minimum=0), "a number of seconds >= 0", 0.1),
        vram_used_mib=table.get("vram_used_mib", a_number(minimum=0), "a number of MiB >= 0", 0.0),
        vram_total_mib=table.get(
            "vram_total_mib", positive, "a number of MiB > 0", RTX_PRO_6000_TOTAL_MIB
        ),
        prefill_tps=table.get("prefill_tps", positive, "a number of tokens/s > 0", 8000.0),
        prefix_caching=table.get("prefix_caching", a_bool, "true or false", True),
        concurrency_curve=table.get(
            "concurrency_curve",
            _curve,
            "a list of [concurrency, speed factor] pairs, increasing, starting at [1, 1.0]",
            SEED_CONCURRENCY_CURVE,
        ),
        reasoning=table.get("reasoning", a_bool, "true or false", False),
        tools=table.get("tools", a_bool, "true or false", True),
        quality=table.get("quality", _rate, "a number from 0 to 1", 0.8),
        recall_curve=table.get(
            "recall_curve",
            _recall_curve,
            "a list of [context tokens, recall chance 0-1] pairs, by increasing tokens",
            DEFAULT_RECALL_CURVE,
        ),
        kv_cache_tokens=table.get("kv_cache_tokens", an_int(1), "an integer of tokens >= 1", None),
        power_limit_w=table.get("power_limit_w", positive, "a number of watts > 0", 600.0),
        gpu_name=table.get("gpu_name", a_string, "a non-empty string", SimSpec.gpu_name),
        kv_cache_dtype=table.get(
            "kv_cache_dtype", _kv_cache_dtype, _KV_CACHE_DTYPE, SimSpec.kv_cache_dtype
        ),
        gpu_memory_utilization=table.get(
            "gpu_memory_utilization", _utilization, _UTILIZATION, SimSpec.gpu_memory_utilization
        ),
        seed=table.get("seed", an_int(0), "an integer >= 0", 0),
        faults=_read_faults(table.table("faults")),
        quirks=_read_quirks(table.table("quirks")),
    )
    spec = replace(spec, measured_with=_read_measured_with(table.table("measured_with"), spec))
    table.finish()
    return spec


def _read_measured_with(table: Table | None, served: SimSpec) -> ServerSettings | None:
    """The settings a sim table's figures were measured with; a key left out is the served."""
    if table is None:
        return None
    settings = ServerSettings(
        kv_cache_dtype=table.get(
            "kv_cache_dtype", _kv_cache_dtype, _KV_CACHE_DTYPE, served.kv_cache_dtype
        ),
        gpu_memory_utilization=table.get(
            "gpu_memory_utilization",
            _utilization,
            _UTILIZATION,
            served.gpu_memory_utilization,
        ),
    )
    table.finish()
    return settings


def _read_slo(table: Table | None, base: SloTargets) -> SloTargets:
    """An ``slo`` table; keys it leaves out keep ``base``'s (the run's, for an endpoint)."""
    if table is None:
        return base
    seconds, expected = a_number(above=0), "a number of seconds > 0"
    targets = SloTargets(
        ttft_s=table.get("ttft_s", seconds, expected, base.ttft_s),
        tpot_s=table.get("tpot_s", seconds, expected, base.tpot_s),
        e2e_s=table.get("e2e_s", seconds, expected, base.e2e_s),
        attainment=table.get(
            "attainment", a_number(above=0, maximum=1), "a share > 0 and <= 1", base.attainment
        ),
    )
    table.finish()
    return targets


def _read_sweep(table: Table) -> SweepSpec | None:
    if not isinstance(table.data.get("sweep"), dict):
        expected = "true, false or a table such as { factor = 2, max_steps = 8 }"
        return SweepSpec() if table.get("sweep", a_bool, expected, False) else None
    sweep = table.table("sweep")
    assert sweep is not None
    spec = SweepSpec(
        factor=sweep.get("factor", a_number(above=1), "a number > 1", 2.0),
        max_steps=sweep.get("max_steps", an_int(2), "an integer >= 2", 8),
        max_error_share=sweep.get(
            "max_error_share", a_number(minimum=0, maximum=1), "a share from 0 to 1", 0.05
        ),
    )
    sweep.finish()
    return spec


def _rates(raw: Any) -> tuple[float, ...] | None:
    rate = a_number(above=0, maximum=MAX_RATE_RPS)
    if isinstance(raw, list):
        return a_list_of(rate)(raw)
    value = rate(raw)
    return (value,) if value is not None else None


def _plan_problems(run: RunPlan) -> list[tuple[str, str]]:
    """What is wrong with the way a plan's keys combine: (key, message) pairs."""
    problems: list[tuple[str, str]] = []
    if run.warmup_requests and run.warmup_s:
        problems.append(("warmup_s", "set either warmup_requests or warmup_s, not both"))
    if run.cooldown_requests and run.cooldown_s:
        problems.append(("cooldown_s", "set either cooldown_requests or cooldown_s, not both"))
    if run.cooldown_requests and run.duration_s is not None:
        problems.append(
            (
                "cooldown_requests",
                "needs phases bounded by requests; with duration_s use cooldown_s",
            )
        )
    if run.cooldown_s and run.duration_s is None and not run.rate_rps:
        problems.append(
            (
                "cooldown_s",
                "a closed loop bounded by requests has no known end; "
                "use cooldown_requests, or duration_s",
            )
        )
    if run.duration_s is not None and run.warmup_s + run.cooldown_s >= run.duration_s:
        problems.append(("cooldown_s", "warmup_s + cooldown_s must be shorter than duration_s"))
    if run.sessions is not None and run.rate_rps:
        problems.append(
            ("sessions", "a conversation is the unit of concurrency: use concurrency, not rate")
        )
    if run.context is not None and run.rate_rps:
        problems.append(
            (
                "context_lengths",
                "the context ladder's capacity is read per level in flight: use concurrency, "
                "not rate",
            )
        )
    levels = run.rate_rps or run.concurrency
    if run.sweep is not None and list(levels) != sorted(set(levels)):
        key = "rate" if run.rate_rps else "concurrency"
        problems.append((key, "a sweep climbs: expected increasing levels"))
    if not run.rate_rps and run.max_requests is not None:
        top = max(level.concurrency for level in load_levels(run))
        if top > run.max_requests:
            # Such a step never holds its load; its flat throughput would read as a knee.
            problems.append(
                (
                    "max_requests",
                    f"{run.max_requests} requests a phase can never hold c={top} in flight; "
                    "raise it, or end the concurrency levels (or sweep.max_steps) lower",
                )
            )
    return problems


def _read_endpoint(table: Table, run: RunPlan) -> Endpoint:
    _refuse_credentials(table, "url")
    _refuse_telemetry_credentials(table)
    sim = _read_sim(table.table("sim"))
    endpoint_id = table.get("id", _an_id, "an id of letters, digits, '_', '.' or '-'")
    endpoint = Endpoint(
        id=endpoint_id or "",
        label=table.get("label", a_string, "a non-empty string", endpoint_id or ""),
        url=table.get("url", _url, "an http(s) URL such as http://127.0.0.1:8016") or "",
        model=table.get("model", a_string, "the served model name, a non-empty string") or "",
        gpu=table.get("gpu", _gpu, 'an integer >= 0, a GPU UUID ("GPU-…") or "auto"', None),
        model_class=table.get("class", one_of("moe", "dense"), '"moe" or "dense"', "dense"),
        active_params_b=table.get("active_params_b", a_number(above=0), "a number > 0", None),
        experts=table.get("experts", an_int(1), "an integer >= 1", None),
        api_key_env=table.get("api_key_env", a_string, "the name of an environment variable", None),
        verify_tls=table.get("verify_tls", a_bool, "true or false", True),
        telemetry=table.get(
            "telemetry",
            _telemetry,
            TELEMETRY_EXPECTED,
            Telemetry("sim") if sim is not None else run.telemetry or ON_THIS_HOST,
        ),
        extra_body=table.get(
            "extra_body", lambda v: v if isinstance(v, dict) else None, "a table", {}
        ),
        sim=sim,
        slo=_read_slo(table.table("slo"), run.slo) if "slo" in table.data else None,
    )
    node = table.get("node", a_string, "a non-empty host name", None)
    endpoint = replace(endpoint, node=node or urlparse(endpoint.url).hostname or "")
    table.finish()
    return endpoint


def _retries(raw: Any) -> int | None:
    count = an_int(0)(raw)
    return count if count is not None and count <= MAX_RETRIES else None


def _read_run(table: Table | None, path: Path) -> RunPlan:
    if table is None:
        return RunPlan(name=path.stem, suites=())
    duration_s = table.get("duration_s", _seconds, _SECONDS, None)
    requests = table.get("requests", _requests, _REQUESTS, None if duration_s else 2)
    if duration_s is not None and requests is not None:
        table.problems.add(f"{table.key}.requests", "set either requests or duration_s, not both")
    _refuse_telemetry_credentials(table)
    synthetic = _read_one_line(table, "synthetic", parse_synthetic, SYNTHETIC_EXAMPLE)
    trace = _read_trace(table, path)
    suite_names = a_list_of(_an_id), "a non-empty list of suite names"
    sessions = _read_sessions(table)
    context = _read_one_line(table, "context_lengths", parse_context_lengths, CONTEXT_EXAMPLE)
    made = any(key in table.data for key in ("synthetic", "trace", "sessions", "context_lengths"))
    suites = table.get("suites", *suite_names, *([()] if made else []))
    plan = RunPlan(
        name=table.get("name", a_string, "a non-empty string", path.stem),
        suites=_with_made(suites or (), synthetic, trace, sessions, context),
        synthetic=synthetic,
        trace=trace,
        sessions=sessions,
        context=context,
        concurrency=table.get("concurrency", _concurrency_list, _CONCURRENCY_LIST, (1,)),
        requests=requests,
        duration_s=duration_s,
        temperature=table.get("temperature", a_number(0, maximum=2), "a number from 0 to 2", 0.3),
        timeout_s=table.get("timeout_s", _seconds, _SECONDS, 300.0),
        max_tokens=table.get(
            "max_tokens", an_int(1, MAX_TOKENS), f"an integer from 1 to {MAX_TOKENS}", None
        ),
        warmup=table.get("warmup", a_bool, "true or false", True),
        seed=table.get("seed", an_int(0), "an integer >= 0", 0),
        retries=table.get("retries", _retries, f"an integer from 0 to {MAX_RETRIES}", 0),
        outage_give_up_s=table.get("outage_give_up_s", _seconds, _SECONDS, 600.0),
        limits=_read_limits(table),
        workers=table.get("workers", an_int(1, MAX_WORKERS), _WORKERS, None),
        telemetry=table.get("telemetry", _telemetry, TELEMETRY_EXPECTED, None),
        sample=table.get("sample", _requests, _REQUESTS, None),
        slice_s=table.get("slice_s", _seconds, _SECONDS, None),
        ramp_s=table.get("ramp_s", _seconds, _SECONDS, None),
        trials=table.get("trials", _trials, _TRIALS, 1),
        **_read_load(table),
    )
    for key, message in _plan_problems(plan):
        table.problems.add(f"{table.key}.{key}", message)
    table.finish()
    return plan


T = TypeVar("T")


def _read_one_line(
    table: Table, key: str, parse: Callable[[str, str], T], example: str
) -> T | None:
    """A key written as one line (``synthetic``, ``context_lengths``), parsed as the command
    line's option of the same meaning is; its problems are the file's."""
    table.read.add(key)
    raw = table.data.get(key)
    if raw is None:
        return None
    where = f"{table.problems.path}: {table.key}.{key}"
    if not isinstance(raw, str):
        table.problems.lines.append(f"{where}: expected a string such as {example!r}")
        return None
    try:
        return parse(raw, where)
    except ConfigError as e:
        table.problems.lines.extend(e.problems)
        return None


def _read_trace(table: Table, path: Path) -> TraceSpec | None:
    """``trace`` (a JSONL file, relative to the profile), ``trace_speedup`` and
    ``trace_block_tokens``; the file itself is read when the run is planned."""
    speedup = table.get("trace_speedup", _speedup, _SPEEDUP, 1.0)
    block_tokens = table.get("trace_block_tokens", _block_tokens, _BLOCK_TOKENS, None)
    name = table.get("trace", a_string, "a JSONL file (relative to this one)", None)
    if name is None:
        for key in ("trace_speedup", "trace_block_tokens"):
            if key in table.data and "trace" not in table.data:
                table.problems.add(f"{table.key}.{key}", "only applies with trace")
        return None
    return TraceSpec(
        path.parent / name,
        speedup or 1.0,
        block_tokens or MOONCAKE_BLOCK_TOKENS,
        origin=f"{path}: {table.key}.trace",
    )


_speedup = a_number(above=0, maximum=MAX_SPEEDUP)
_SPEEDUP = f"a number > 0, at most {MAX_SPEEDUP:g}"
_block_tokens = an_int(1, MAX_BLOCK_TOKENS)
_BLOCK_TOKENS = f"an integer from 1 to {MAX_BLOCK_TOKENS}"


def _read_sessions(table: Table) -> SessionsSpec | None:
    """``sessions`` (conversations), ``turns``, ``think_s``, ``turn_isl`` and ``turn_osl``."""
    count = table.get("sessions", _session_count, _SESSION_COUNT, None)
    turns = table.get("turns", _turn_count, _TURN_COUNT, None)
    think_s = table.get("think_s", _think, _THINK, None)
    turn_isl = table.get("turn_isl", _turn_tokens, _TURN_TOKENS, None)
    turn_osl = table.get("turn_osl", _turn_tokens, _TURN_TOKENS, None)
    if count is None:
        for key in ("turns", "think_s", "turn_isl", "turn_osl"):
            if key in table.data and "sessions" not in table.data:
                table.problems.add(f"{table.key}.{key}", "only applies with sessions")
        return None
    return _sessions_spec(count, turns, think_s, turn_isl, turn_osl)


def _sessions_spec(
    count: int,
    turns: int | None,
    think_s: float | None,
    turn_isl: int | None = None,
    turn_osl: int | None = None,
) -> SessionsSpec:
    return SessionsSpec(
        count,
        turns or DEFAULT_TURNS,
        think_s or 0.0,
        turn_isl or DEFAULT_TURN_TOKENS,
        turn_osl or DEFAULT_TURN_TOKENS,
    )


DEFAULT_TURNS = 3
MAX_TRIALS = 100
_trials = an_int(1, MAX_TRIALS)
_TRIALS = f"an integer from 1 to {MAX_TRIALS}"
_session_count = an_int(1, MAX_SESSIONS)
_SESSION_COUNT = f"an integer from 1 to {MAX_SESSIONS}"
_turn_count = an_int(1, MAX_TURNS)
_TURN_COUNT = f"an integer from 1 to {MAX_TURNS}"
_think = a_number(0, maximum=MAX_THINK_S)
_THINK = f"seconds from 0 to {MAX_THINK_S:g}"
_turn_tokens = an_int(1, MAX_TOKENS)
_TURN_TOKENS = f"an integer from 1 to {MAX_TOKENS}"


def _sessions_over(
    spec: SessionsSpec | None, sessions: int | None, turns: int | None, think_s: float | None
) -> SessionsSpec:
    """The profile's sessions with what the command line gave over them."""
    base = spec or _sessions_spec(sessions or 1, None, None)
    return replace(
        base,
        sessions=base.sessions if sessions is None else sessions,
        turns=base.turns if turns is None else turns,
        think_s=base.think_s if think_s is None else think_s,
    )


def _trace_over(spec: TraceSpec | None, path: Path, speedup: float | None) -> TraceSpec:
    """``--trace PATH``, keeping the profile's speed-up and block size unless given."""
    if str(path).strip() in ("", "."):
        raise ConfigError(["--trace: expected a JSONL file, got an empty path"])
    base = spec or TraceSpec(path)
    chosen = base.speedup if speedup is None else speedup
    return replace(base, path=path, speedup=chosen, origin="--trace")


def _with_made(
    suites: tuple[str, ...],
    synthetic: Synthetic | None,
    trace: TraceSpec | None,
    sessions: SessionsSpec | None = None,
    context: ContextLadder | None = None,
) -> tuple[str, ...]:
    """The run's suites, with those it makes (synthetic prompts, a trace's, sessions', the
    context ladder's rungs)."""
    made = [SYNTHETIC_SUITE] * (synthetic is not None) + [TRACE_SUITE] * (trace is not None)
    made += [SESSIONS_SUITE] * (sessions is not None)
    made += ladder_suites(context) if context is not None else []
    return (*suites, *(name for name in made if name not in suites))


def _read_limits(table: Table) -> ReplyLimits:
    default = ReplyLimits()
    reply_bytes = an_int(MIN_REPLY_BYTES, MAX_REPLY_BYTES)
    return ReplyLimits(
        max_answer_bytes=table.get(
            "max_answer_bytes", reply_bytes, _REPLY_BYTES, default.max_answer_bytes
        ),
        max_event_bytes=table.get(
            "max_event_bytes", reply_bytes, _REPLY_BYTES, default.max_event_bytes
        ),
        max_chunks=table.get(
            "max_chunks", an_int(1, MAX_REPLY_CHUNKS), _REPLY_CHUNKS, default.max_chunks
        ),
    )


def _read_load(table: Table) -> dict[str, Any]:
    """The [run] keys that shape the load, bound each phase and set the SLO."""
    rate = table.get("rate", _rates, _RATES, ())
    open_loop = "rate" in table.data
    if open_loop and "concurrency" in table.data:
        table.problems.add(
            f"{table.key}.rate",
            "set either concurrency (closed loop) or rate (open loop), not both",
        )
    for key in ("arrivals", "burstiness", "max_concurrency"):
        # A trace is an open loop of its own: max_concurrency caps it too.
        applies = open_loop or (key == "max_concurrency" and "trace" in table.data)
        if key in table.data and not applies:
            table.problems.add(f"{table.key}.{key}", "only applies with rate (an open loop)")
    if "burstiness" in table.data and table.data.get("arrivals") != "gamma":
        table.problems.add(f"{table.key}.burstiness", 'only applies with arrivals = "gamma"')
    count, seconds = an_int(0), a_number(minimum=0)
    return {
        "rate_rps": rate,
        "arrivals": table.get("arrivals", one_of(*ARRIVALS), spelt_out(ARRIVALS), "poisson"),
        "burstiness": table.get(
            "burstiness", a_number(above=0, maximum=MAX_BURSTINESS), _BURSTINESS, 1.0
        ),
        "max_concurrency": table.get(
            "max_concurrency", an_int(1, MAX_CONCURRENCY), _CONCURRENCY, None
        ),
        "sweep": _read_sweep(table),
        "warmup_requests": table.get("warmup_requests", count, "an integer >= 0", 0),
        "warmup_s": table.get("warmup_s", seconds, "a number of seconds >= 0", 0.0),
        "cooldown_requests": table.get("cooldown_requests", count, "an integer >= 0", 0),
        "cooldown_s": table.get("cooldown_s", seconds, "a number of seconds >= 0", 0.0),
        "max_duration_s": table.get("max_duration_s", _seconds, _SECONDS, None),
        "max_requests": table.get("max_requests", an_int(1), "an integer >= 1", None),
        "max_errors": table.get("max_errors", an_int(1), "an integer >= 1", None),
        "slo": _read_slo(table.table("slo"), SloTargets()),
    }


def _rubrics(raw: Any) -> dict[str, str] | None:
    if not isinstance(raw, dict) or not raw:
        return None
    if not all(_an_id(k) and a_string(v) for k, v in raw.items()):
        return None
    return dict(raw)


def _read_judge(table: Table | None) -> JudgeSpec | None:
    if table is None:
        return None
    _refuse_credentials(table, "url")
    spec = JudgeSpec(
        url=table.get("url", _url, "an http(s) URL such as http://127.0.0.1:8030") or "",
        model=table.get("model", a_string, "the judge's served model name") or "",
        rubrics=table.get("rubrics", _rubrics, "a table of suite name = rubric text") or {},
        api_key_env=table.get("api_key_env", a_string, "the name of an environment variable", None),
        timeout_s=table.get("timeout_s", a_number(above=0), "a number of seconds > 0", 60.0),
        max_tokens=table.get("max_tokens", an_int(1), "an integer >= 1", 512),
    )
    table.finish()
    return spec


def load_profile(path: Path) -> Profile:
    """Read and validate a fleet profile; raises ConfigError with one line per problem."""
    problems = Problems(path)
    root = Table(load_toml(path), "", problems)
    run = _read_run(root.table("run", required=True), path)
    judge = _read_judge(root.table("judge"))
    endpoints = [_read_endpoint(t, run) for t in root.tables("endpoint")]
    root.finish()
    if not endpoints and "endpoint" not in root.data:
        problems.add("endpoint", "missing; expected at least one [[endpoint]] table")
    _check_unique(problems, endpoints, "id", lambda e: e.id)
    # A GPU index names a card on its node: nodes each have a GPU 0.
    _check_unique(
        problems,
        endpoints,
        "gpu",
        lambda e: (e.node, e.gpu) if isinstance(e.gpu, int) else None,
        lambda key: f"{key[1]!r} on node {key[0]!r}",
    )
    _check_unique(problems, endpoints, "url", lambda e: e.url)
    problems.raise_if_any()
    return Profile(path=path, run=run, endpoints=tuple(endpoints), judge=judge)


def _arrivals_option(value: str) -> Arrivals:
    for shape in ARRIVALS:
        if value == shape:
            return shape
    raise ConfigError([f"--arrivals: expected {spelt_out(ARRIVALS)}, got {value!r}"])


def with_overrides(
    profile: Profile,
    *,
    suites: tuple[str, ...] | None = None,
    concurrency: tuple[int, ...] | None = None,
    requests: int | None = None,
    duration_s: float | None = None,
    rate_rps: tuple[float, ...] | None = None,
    arrivals: str | None = None,
    burstiness: float | None = None,
    sweep: bool = False,
    workers: int | None = None,
    sample: int | None = None,
    synthetic: str | None = None,
    trace: Path | None = None,
    trace_speedup: float | None = None,
    sessions: int | None = None,
    turns: int | None = None,
    think_s: float | None = None,
    slice_s: float | None = None,
    ramp_s: float | None = None,
    trials: int | None = None,
    context_lengths: str | None = None,
) -> Profile:
    """The profile with the command line's plan options applied over its [run] table.

    A rate makes the phases open-loop (``concurrency`` is then ignored); concurrency without a
    rate makes them closed-loop, whatever the profile said. ``sweep`` over a profile that does
    not sweep climbs from the given levels, or else from the profile's first one.
    """
    run = profile.run
    if trace_speedup is not None:
        _check_option("--trace-speedup", trace_speedup, _speedup, _SPEEDUP)
        if trace is None and run.trace is None:
            raise ConfigError(
                ["--trace-speedup: only applies with a trace (--trace, or [run] trace)"]
            )
        if run.trace is not None:
            run = replace(run, trace=replace(run.trace, speedup=trace_speedup))
    for option, value, check, expected in (
        ("--sessions", sessions, _session_count, _SESSION_COUNT),
        ("--turns", turns, _turn_count, _TURN_COUNT),
        ("--think-s", think_s, _think, _THINK),
    ):
        if value is not None:
            _check_option(option, value, check, expected)
    if sessions is None and (turns is not None or think_s is not None):
        if run.sessions is None:
            option = "--turns" if turns is not None else "--think-s"
            raise ConfigError([f"{option}: only applies with sessions (--sessions N)"])
        run = replace(run, sessions=_sessions_over(run.sessions, None, turns, think_s))
    if any(made is not None for made in (synthetic, trace, sessions, context_lengths)):
        # The suites given beside them, else none but them.
        recipe = None if synthetic is None else parse_synthetic(synthetic, "--synthetic")
        replay = None if trace is None else _trace_over(run.trace, trace, trace_speedup)
        talks = None if sessions is None else _sessions_over(run.sessions, sessions, turns, think_s)
        ladder = None
        if context_lengths is not None:
            ladder = parse_context_lengths(context_lengths, "--context-lengths")
        run = replace(
            run,
            synthetic=recipe,
            trace=replay,
            sessions=talks,
            context=ladder,
            suites=_with_made(suites or (), recipe, replay, talks, ladder),
        )
    elif suites:
        run = replace(run, suites=suites)
    if rate_rps:
        _check_option("--rate", list(rate_rps), _rates, _RATES)
        run = replace(run, rate_rps=rate_rps)
    elif concurrency:
        _check_option("--concurrency", list(concurrency), _concurrency_list, _CONCURRENCY_LIST)
        run = replace(run, concurrency=concurrency, rate_rps=())
    if arrivals is not None:
        chosen = _arrivals_option(arrivals)
        if not run.rate_rps:
            raise ConfigError(["--arrivals: only applies with a rate (--rate, or rate in [run])"])
        run = replace(run, arrivals=chosen)
    if burstiness is not None:
        _check_option(
            "--burstiness", burstiness, a_number(above=0, maximum=MAX_BURSTINESS), _BURSTINESS
        )
        if run.arrivals != "gamma":
            raise ConfigError(["--burstiness: only applies with gamma arrivals (--arrivals gamma)"])
        run = replace(run, burstiness=burstiness)
    if sweep and run.sweep is None:
        if not (rate_rps or concurrency):  # climb from the profile's first level, not its list
            run = replace(run, concurrency=run.concurrency[:1], rate_rps=run.rate_rps[:1])
        run = replace(run, sweep=SweepSpec())
    if requests is not None:
        _check_option("--requests", requests, _requests, _REQUESTS)
        run = replace(run, requests=requests, duration_s=None)
    if duration_s is not None:
        _check_option("--duration", duration_s, _seconds, _SECONDS)
        run = replace(run, duration_s=duration_s, requests=None)
    # Options that set one [run] key each, checked as the key is.
    keyed: tuple[tuple[str, str, float | None, Callable[[Any], Any], str], ...] = (
        ("--workers", "workers", workers, an_int(1, MAX_WORKERS), _WORKERS),
        ("--limit", "sample", sample, _requests, _REQUESTS),
        ("--slice", "slice_s", slice_s, _seconds, _SECONDS),
        ("--ramp-s", "ramp_s", ramp_s, _seconds, _SECONDS),
        ("--trials", "trials", trials, _trials, _TRIALS),
    )
    given: dict[str, Any] = {}
    for option, key, value, check, expected in keyed:
        if value is not None:
            _check_option(option, value, check, expected)
            given[key] = value
    run = replace(run, **given)
    problems = [f"{profile.path}: run.{key}: {message}" for key, message in _plan_problems(run)]
    if problems:
        raise ConfigError([f"{line} (with the command line's options)" for line in problems])
    return replace(profile, run=run)


def _check_option(name: str, value: Any, check: Callable[[Any], Any], expected: str) -> None:
    if check(value) is None:
        raise ConfigError([f"{name}: expected {expected}, got {value}"])


def with_urls(profile: Profile, urls: dict[str, str], time_scale: float = 1.0) -> Profile:
    """The profile with some endpoints moved to new base URLs (e.g. where a simulator serves
    them, on a clock ``time_scale`` times real time)."""
    endpoints = tuple(
        replace(e, url=urls[e.id], time_scale=time_scale) if e.id in urls else e
        for e in profile.endpoints
    )
    return replace(profile, endpoints=endpoints)


def _check_unique(
    problems: Problems,
    endpoints: list[Endpoint],
    key: str,
    value: Callable[[Endpoint], Any],
    shown: Callable[[Any], str] = repr,
) -> None:
    seen: dict[Any, int] = {}
    for i, endpoint in enumerate(endpoints):
        v = value(endpoint)
        if v is None or v == "":
            continue
        if v in seen:
            problems.add(
                f"endpoint[{i}].{key}",
                f"duplicate {key} {shown(v)}, already used by endpoint[{seen[v]}]",
            )
        else:
            seen[v] = i


__all__ = [
    "ConfigError",
    "Endpoint",
    "FaultSpec",
    "Profile",
    "ReplyLimits",
    "RunPlan",
    "SimSpec",
    "SloTargets",
    "SweepSpec",
    "load_profile",
    "with_overrides",
    "with_urls",
]

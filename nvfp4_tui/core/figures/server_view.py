"""The server's own view beside the client's, per endpoint and load level: what vLLM's /metrics
said while each level ran (its TTFT, ITL, queue, prefill and decode means, KV cache, running and
waiting, preemptions, prefix-cache hits) next to the client's TTFT and ITL means.

One fold for every view: the report, export and compare feed it a snapshot's events (with the
client's totals summed per level), ``--json`` feeds it a run's events as they come.

A level's window is the time its phases ran. A gauge (KV cache, running, waiting) counts when
its poll falls inside the window. A histogram or counter delta covers the time since the
previous poll, and goes to the phase that interval overlaps most: a poll every second puts the
last requests of a phase in the first poll after it, which belongs to that phase, not to what
runs next. Means are exact (``_sum``/``_count`` deltas weighted by their counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nvfp4_tui.core.events import (
    Event,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RunStarted,
    ServerSample,
)
from nvfp4_tui.core.slo import Load, run_plans
from nvfp4_tui.core.stats import counter_increase, peak
from nvfp4_tui.core.timing_doubt import TIMING_DOUBT_LAG_S

LevelKey = tuple[str, Load]  # (endpoint id, load level)


@dataclass(slots=True)
class _Mean:
    """A mean pooled from parts that each bring their own mean and count."""

    total: float = 0.0
    count: float = 0.0

    def add(self, mean: float | None, count: float | None) -> None:
        if mean is not None and count:
            self.total += mean * count
            self.count += count

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None


@dataclass(slots=True)
class _Level:
    concurrency: int
    lag_p99_s: float | None = None  # the worst of its phases'
    client_ttft: _Mean = field(default_factory=_Mean)
    client_itl: _Mean = field(default_factory=_Mean)
    ttft: _Mean = field(default_factory=_Mean)
    itl: _Mean = field(default_factory=_Mean)
    queue: _Mean = field(default_factory=_Mean)
    prefill: _Mean = field(default_factory=_Mean)
    decode: _Mean = field(default_factory=_Mean)
    kv: _Mean = field(default_factory=_Mean)
    kv_peak_pct: float | None = None
    running_peak: float | None = None
    waiting_peak: float | None = None
    preemptions: float | None = None
    prefix_hits: _Mean = field(default_factory=_Mean)
    polls: int = 0


@dataclass(slots=True)
class _Span:
    key: LevelKey
    phase_index: int
    start: float
    end: float | None = None  # None: still running

    def overlap(self, low: float, high: float) -> float:
        end = high if self.end is None else self.end
        return max(0.0, min(high, end) - max(low, self.start))

    def holds(self, t: float) -> bool:
        return self.start <= t and (self.end is None or t <= self.end)


@dataclass(frozen=True, slots=True)
class ServerViewRow:
    """One endpoint at one load level, the client's view and the server's side by side; a
    server figure is None when the server did not report it."""

    endpoint_id: str
    load: Load
    concurrency: int
    client_ttft_mean_s: float | None
    server_ttft_mean_s: float | None
    client_itl_mean_s: float | None
    server_itl_mean_s: float | None
    server_queue_mean_s: float | None
    server_prefill_mean_s: float | None
    server_decode_mean_s: float | None
    kv_cache_peak_pct: float | None
    kv_cache_mean_pct: float | None
    running_peak: float | None
    waiting_peak: float | None
    preemptions: float | None
    prefix_cache_hit_rate: float | None  # a share, 0 to 1
    timing_doubt_s: float  # how late the client's timings may read: its loop lag p99, or more
    server_polls: int  # polls of /metrics inside the level's window
    server_ttft_count: int  # first tokens the server timed in the level's window

    @property
    def ttft_gap_s(self) -> float | None:
        """Client minus server TTFT mean: time the server did not see (network, proxies, the
        client's own loop)."""
        if self.client_ttft_mean_s is None or self.server_ttft_mean_s is None:
            return None
        return self.client_ttft_mean_s - self.server_ttft_mean_s

    @property
    def note(self) -> str:
        if not self.server_polls:
            return "no server metrics"
        gap = self.ttft_gap_s
        if gap is not None and gap > self.timing_doubt_s:
            return (
                f"client TTFT {gap * 1000:.0f} ms above the server's, more than the timing "
                f"doubt ({self.timing_doubt_s * 1000:.0f} ms): time outside the server"
            )
        return ""

    def json(self) -> dict[str, Any]:
        return {
            "kind": "server",
            "endpoint": self.endpoint_id,
            "load": self.load.label,
            "concurrency": self.concurrency,
            "client_ttft_mean_s": self.client_ttft_mean_s,
            "server_ttft_mean_s": self.server_ttft_mean_s,
            "client_itl_mean_s": self.client_itl_mean_s,
            "server_itl_mean_s": self.server_itl_mean_s,
            "server_queue_mean_s": self.server_queue_mean_s,
            "server_prefill_mean_s": self.server_prefill_mean_s,
            "server_decode_mean_s": self.server_decode_mean_s,
            "kv_cache_peak_pct": self.kv_cache_peak_pct,
            "kv_cache_mean_pct": self.kv_cache_mean_pct,
            "running_peak": self.running_peak,
            "waiting_peak": self.waiting_peak,
            "preemptions": self.preemptions,
            "prefix_cache_hit_rate": self.prefix_cache_hit_rate,
            "ttft_gap_s": self.ttft_gap_s,
            "note": self.note or None,
        }


@dataclass(frozen=True, slots=True)
class ClientTotals:
    """The client's side of one level, summed: TTFTs, and the decode time and inter-chunk gaps
    of its answers (their ratio is the mean gap, the figure vLLM's ITL histogram averages)."""

    ttft_sum_s: float
    ttft_count: int
    decode_sum_s: float
    gaps: int


def request_totals(r: RequestFinished) -> ClientTotals:
    """One request's part of its level's ``ClientTotals``: its TTFT when a first token came
    (the server timed that one too), its decode when it ended without an error (an answer cut
    at ``max_tokens`` too) in two chunks or more."""
    ttft = r.ttft_s
    decoded = r.status != "error" and ttft is not None and r.e2e_s is not None and r.chunks > 1
    return ClientTotals(
        ttft_sum_s=ttft or 0.0,
        ttft_count=int(ttft is not None),
        decode_sum_s=(r.e2e_s or 0.0) - (ttft or 0.0) if decoded else 0.0,
        gaps=r.chunks - 1 if decoded else 0,
    )


class ServerViewFold:
    """Folds a run's events (sorted by time) into one ``ServerViewRow`` per endpoint and level.

    ``apply`` counts a RequestFinished in its level's client figures; a snapshot's reader, which
    sums its requests table instead, passes them by ``add_client`` and leaves them out of
    ``apply``.
    """

    def __init__(self) -> None:
        self._plans: dict[tuple[str, int], PhasePlan] = {}
        self._endpoints: list[str] = []
        self._levels: dict[LevelKey, _Level] = {}
        self._spans: dict[str, list[_Span]] = {}
        self._last: dict[str, ServerSample] = {}

    def apply(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            # A snapshot written to twice holds two runs; their phase indexes start over.
            self._plans = run_plans(event)
            self._endpoints += [e.id for e in event.endpoints if e.id not in self._endpoints]
            self._spans.clear()
            self._last.clear()
        elif isinstance(event, PhaseStarted):
            key = self._key(event.endpoint_id, event.phase_index, event.concurrency)
            self._level(key, event.concurrency)
            self._spans.setdefault(event.endpoint_id, []).append(
                _Span(key, event.phase_index, event.t)
            )
        elif isinstance(event, PhaseFinished):
            self._finish(event)
        elif isinstance(event, RequestFinished):
            key = self._key(event.endpoint_id, event.phase_index, event.concurrency)
            self.add_client(key, event.concurrency, request_totals(event))
        elif isinstance(event, ServerSample):
            self._sample(event)

    def add_client(self, key: LevelKey, concurrency: int, totals: ClientTotals) -> None:
        level = self._level(key, concurrency)
        level.client_ttft.add(totals.ttft_sum_s / max(1, totals.ttft_count), totals.ttft_count)
        level.client_itl.add(totals.decode_sum_s / max(1, totals.gaps), totals.gaps)

    def load_of(self, endpoint_id: str, phase_index: int, concurrency: int) -> Load:
        plan = self._plans.get((endpoint_id, phase_index))
        return Load.of(concurrency, plan.rate_rps if plan is not None else None)

    def _key(self, endpoint_id: str, phase_index: int, concurrency: int) -> LevelKey:
        return endpoint_id, self.load_of(endpoint_id, phase_index, concurrency)

    def _level(self, key: LevelKey, concurrency: int) -> _Level:
        level = self._levels.get(key)
        if level is None:
            level = self._levels[key] = _Level(concurrency)
        level.concurrency = max(level.concurrency, concurrency)
        return level

    def _finish(self, event: PhaseFinished) -> None:
        for span in reversed(self._spans.get(event.endpoint_id, ())):
            if span.phase_index == event.phase_index and span.end is None:
                span.end = event.t
                level = self._levels[span.key]
                level.lag_p99_s = peak(level.lag_p99_s, event.loop_lag_p99_s)
                return

    def _sample(self, sample: ServerSample) -> None:
        spans = self._spans.get(sample.endpoint_id, [])
        before = self._last.get(sample.endpoint_id)
        self._last[sample.endpoint_id] = sample
        at = next((s for s in reversed(spans) if s.holds(sample.t)), None)
        if at is not None:
            level = self._levels[at.key]
            level.polls += 1
            level.kv.add(sample.kv_cache_pct, 1)
            level.kv_peak_pct = peak(level.kv_peak_pct, sample.kv_cache_pct)
            level.running_peak = peak(level.running_peak, sample.requests_running)
            level.waiting_peak = peak(level.waiting_peak, sample.requests_waiting)
        since = sample.t if before is None else before.t
        covering = max(
            (s for s in spans if s.start <= sample.t and (s.end is None or s.end >= since)),
            key=lambda s: s.overlap(since, sample.t),
            default=None,
        )
        if covering is None or (before is not None and not covering.overlap(since, sample.t)):
            return
        level = self._levels[covering.key]
        level.ttft.add(sample.ttft_mean_s, sample.ttft_count)
        level.itl.add(sample.itl_mean_s, sample.itl_count)
        level.queue.add(sample.queue_mean_s, sample.queue_count)
        level.prefill.add(sample.prefill_mean_s, sample.prefill_count)
        level.decode.add(sample.decode_mean_s, sample.decode_count)
        # Old servers serve the hit rate as a gauge without its queries: each poll weighs 1.
        level.prefix_hits.add(sample.prefix_cache_hit_pct, sample.prefix_cache_queries or 1)
        if before is not None:
            grew = counter_increase(sample.preemptions_total, before.preemptions_total)
            if grew is not None:
                level.preemptions = (level.preemptions or 0.0) + grew

    def rows(self) -> list[ServerViewRow]:
        """Every level's row, or none when no endpoint's /metrics was polled in any level."""
        if not any(level.polls for level in self._levels.values()):
            return []
        order = {endpoint_id: i for i, endpoint_id in enumerate(self._endpoints)}
        keys = sorted(self._levels, key=lambda k: (order.get(k[0], len(order)), k[0], k[1].order))
        return [self._row(key) for key in keys]

    def _row(self, key: LevelKey) -> ServerViewRow:
        level = self._levels[key]
        hit_pct = level.prefix_hits.mean
        return ServerViewRow(
            endpoint_id=key[0],
            load=key[1],
            concurrency=level.concurrency,
            client_ttft_mean_s=level.client_ttft.mean,
            server_ttft_mean_s=level.ttft.mean,
            client_itl_mean_s=level.client_itl.mean,
            server_itl_mean_s=level.itl.mean,
            server_queue_mean_s=level.queue.mean,
            server_prefill_mean_s=level.prefill.mean,
            server_decode_mean_s=level.decode.mean,
            kv_cache_peak_pct=level.kv_peak_pct,
            kv_cache_mean_pct=level.kv.mean,
            running_peak=level.running_peak,
            waiting_peak=level.waiting_peak,
            preemptions=level.preemptions,
            prefix_cache_hit_rate=None if hit_pct is None else hit_pct / 100.0,
            timing_doubt_s=max(TIMING_DOUBT_LAG_S, level.lag_p99_s or 0.0),
            server_polls=level.polls,
            server_ttft_count=round(level.ttft.count),
        )


@dataclass(frozen=True, slots=True)
class ServerViewPair:
    """One endpoint's level in two runs (``compare``): each run's server view, None where that
    run did not run the level or its server served no metrics."""

    endpoint_a: str
    endpoint_b: str
    label: str
    load: Load
    a: ServerViewRow | None
    b: ServerViewRow | None


def pair_server_views(
    pairs: Sequence[tuple[str, str, str]],
    rows_a: Sequence[ServerViewRow],
    rows_b: Sequence[ServerViewRow],
) -> tuple[ServerViewPair, ...]:
    """The levels of each endpoint pair (id in A, id in B, label), in A's order, then B's
    levels that A did not run; none when neither run's servers served metrics."""
    by_a = {(r.endpoint_id, r.load): r for r in rows_a}
    by_b = {(r.endpoint_id, r.load): r for r in rows_b}
    out: list[ServerViewPair] = []
    for endpoint_a, endpoint_b, label in pairs:
        loads = [load for e, load in by_a if e == endpoint_a]
        loads += [load for e, load in by_b if e == endpoint_b and load not in loads]
        for load in sorted(loads, key=lambda x: x.order):
            a, b = by_a.get((endpoint_a, load)), by_b.get((endpoint_b, load))
            out.append(ServerViewPair(endpoint_a, endpoint_b, label, load, a, b))
    return tuple(out)

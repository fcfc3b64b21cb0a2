"""The context ladder's figures (``config.context_ladder``): per endpoint, rung and load level,
what a long prompt costs and whether its facts come back, and how many such prompts the server
runs at once before it queues them.

- **Speed**: TTFT (mean, p50), prefill tok/s (the server's prompt tokens over TTFT, mean) and
  decode tok/s (mean), over the rung's answered requests.
- **Recall**: the ``recall`` score's mean (the share of facts found), and by depth the share of
  answers that found the fact hidden there, from each answer's detail (``recall_detail``).
- **Capacity**: the server's gauges while the rung's phase ran: requests running and waiting
  (peaks), KV cache use (peak) and preemptions (counter increase). A level where requests waited
  or were preempted shows the server full: it ran ``running_peak`` at once. ``capacity`` says
  per endpoint and rung "fits N at once" from the first such level, or "at least" the highest
  level that never queued.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from nvfp4_tui.core.events import (
    EndpointConfig,
    Event,
    PhaseFinished,
    PhaseStarted,
    RequestFinished,
    RunStarted,
    ServerSample,
)
from nvfp4_tui.core.stats import counter_increase, finite, mean, peak, percentile

CONTEXT_SUITE_PREFIX = "context_"  # every ladder rung's suite: context_1k, context_max
_DETAIL = "recall:"
# A mean time in the server's queue past both of these is a full server: one with room admits a
# request at its next step, while one without makes it wait for another to end.
QUEUED_S = 0.1
QUEUE_SHARE = 0.25  # of the level's TTFT mean


def recall_detail(found: Sequence[tuple[float, bool]]) -> str:
    """``recall:0=1,0.5=0,1=1``: each hidden fact's depth and whether the answer had it."""
    return _DETAIL + ",".join(f"{depth:g}={int(hit)}" for depth, hit in found)


def recall_by_depth(detail: str | None) -> list[tuple[float, bool]]:
    """What ``recall_detail`` wrote (reasoning notes after a ``|`` are left aside)."""
    if not detail or not detail.startswith(_DETAIL):
        return []
    found = []
    for part in detail[len(_DETAIL) :].split("|", 1)[0].split(","):
        depth, _, hit = part.partition("=")
        try:
            found.append((float(depth), hit == "1"))
        except ValueError:
            continue
    return found


@dataclass(frozen=True, slots=True)
class LadderSent:
    """One ladder request as the figures read it."""

    endpoint_id: str
    suite: str
    concurrency: int
    failed: bool
    tokens_in_asked: int | None
    tokens_in: int | None
    ttft_s: float | None
    prefill_tps: float | None
    decode_tps: float | None
    recall: float | None
    recall_detail: str | None

    @classmethod
    def of(cls, event: RequestFinished) -> LadderSent:
        return cls(
            event.endpoint_id,
            event.suite,
            event.concurrency,
            event.status == "error",
            event.tokens_in_asked,
            event.tokens_in,
            event.ttft_s,
            event.prefill_tps,
            event.decode_tps,
            event.score_verified,
            event.score_verified_detail,
        )


LadderKey = tuple[str, str, int]  # endpoint, rung's suite, concurrency


@dataclass(slots=True)
class _Gauges:
    running_peak: float | None = None
    waiting_peak: float | None = None
    kv_peak_pct: float | None = None
    preemptions: float | None = None
    polls: int = 0
    queue_s: float = 0.0  # summed over the requests the server timed in its queue
    queued: int = 0


@dataclass(frozen=True, slots=True)
class LadderRow:
    endpoint_id: str
    suite: str
    concurrency: int
    tokens_in_asked: int | None  # the rung's length as sent to this endpoint
    requests: int  # answered
    errors: int
    tokens_in_mean: float | None  # the server's count
    ttft_mean_s: float | None
    ttft_p50_s: float | None
    prefill_tps_mean: float | None
    decode_tps_mean: float | None
    recall_mean: float | None  # share of facts found, over scored answers
    recall_by_depth: tuple[tuple[float, float], ...]  # (depth, share of answers that found it)
    running_peak: float | None = None
    waiting_peak: float | None = None
    kv_peak_pct: float | None = None
    preemptions: float | None = None
    server_polls: int = 0
    # vLLM's request_queue_time over the requests that finished while the rung ran: unlike
    # the sampled gauges, it misses no queueing that fell between two polls.
    server_queue_mean_s: float | None = None

    @property
    def full(self) -> bool:
        """Whether the server could not run this level's requests all at once: it preempted
        some, or it queued some (a waiting gauge seen, or a mean time in its queue a good share
        of their TTFT: one waiting for room waits for another to end, one waiting for its turn
        in a step, a step) and never ran as many as the level holds. A level of one cannot be
        full: a lone request runs whatever its size. Only answered requests count."""
        if self.concurrency < 2 or not self.requests:
            return False
        if self.preemptions:
            return True
        queue = self.server_queue_mean_s
        ttft = self.ttft_mean_s or 0.0
        queued = queue is not None and queue > max(QUEUED_S, QUEUE_SHARE * ttft)
        ran_all = self.running_peak is not None and self.running_peak >= self.concurrency
        return (bool(self.waiting_peak) or queued) and not ran_all

    def json(self) -> dict[str, Any]:
        return {
            "kind": "context",
            "endpoint": self.endpoint_id,
            "suite": self.suite,
            "concurrency": self.concurrency,
            "input_tokens_asked": self.tokens_in_asked,
            "input_tokens_mean": self.tokens_in_mean,
            "requests": self.requests,
            "errors": self.errors,
            "ttft_mean_s": self.ttft_mean_s,
            "ttft_p50_s": self.ttft_p50_s,
            "prefill_tps_mean": self.prefill_tps_mean,
            "decode_tps_mean": self.decode_tps_mean,
            "recall_mean": self.recall_mean,
            "recall_by_depth": {f"{depth:g}": share for depth, share in self.recall_by_depth},
            "server_running_peak": self.running_peak,
            "server_waiting_peak": self.waiting_peak,
            "server_kv_cache_peak_pct": self.kv_peak_pct,
            "server_preemptions": self.preemptions,
            "server_polls": self.server_polls,
            "server_queue_mean_s": self.server_queue_mean_s,
        }


@dataclass(frozen=True, slots=True)
class RungCapacity:
    """How many requests of one rung an endpoint ran at once before it queued them."""

    endpoint_id: str
    suite: str
    tokens_in_asked: int | None
    fits: int | None  # requests at once; None: no level was polled
    at_least: bool  # no level queued: it fits ``fits`` or more
    full_at: int | None  # the first level that queued or preempted
    # The cache it filled, as the server said at run start (cache_config_info); None unsaid.
    kv_cache_dtype: str | None = None
    kv_block_size: int | None = None
    kv_blocks: int | None = None

    @property
    def cache(self) -> str:
        """``fp8, 4,096 blocks × 16 tokens``: what the server said its KV cache is."""
        blocks = (
            f"{self.kv_blocks:,} blocks × {self.kv_block_size} tokens"
            if self.kv_blocks and self.kv_block_size
            else None
        )
        return ", ".join(part for part in (self.kv_cache_dtype, blocks) if part) or "—"

    @property
    def label(self) -> str:
        if self.fits is None:
            return "not polled while it ran"
        length = f"{self.tokens_in_asked:,}" if self.tokens_in_asked else "?"
        return f"fits {'≥ ' if self.at_least else ''}{self.fits} × {length} tokens at once"

    def json(self) -> dict[str, Any]:
        return {
            "kind": "context_capacity",
            "endpoint": self.endpoint_id,
            "suite": self.suite,
            "input_tokens_asked": self.tokens_in_asked,
            "fits": self.fits,
            "at_least": self.at_least,
            "full_at_concurrency": self.full_at,
            "kv_cache_dtype": self.kv_cache_dtype,
            "kv_block_size": self.kv_block_size,
            "kv_blocks": self.kv_blocks,
        }


@dataclass(slots=True)
class _Cell:
    requests: int = 0
    errors: int = 0
    asked: int | None = None
    tokens_in: list[float] = field(default_factory=list)
    ttft: list[float] = field(default_factory=list)
    prefill: list[float] = field(default_factory=list)
    decode: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    depths: dict[float, list[bool]] = field(default_factory=dict)

    def add(self, sent: LadderSent) -> None:
        self.asked = sent.tokens_in_asked if sent.tokens_in_asked is not None else self.asked
        if sent.failed:
            self.errors += 1
            return
        self.requests += 1
        for values, value in (
            (self.tokens_in, sent.tokens_in),
            (self.ttft, sent.ttft_s),
            (self.prefill, sent.prefill_tps),
            (self.decode, sent.decode_tps),
            (self.recall, sent.recall),
        ):
            if (number := finite(value)) is not None:
                values.append(float(number))
        for depth, hit in recall_by_depth(sent.recall_detail):
            self.depths.setdefault(depth, []).append(hit)


class LadderGauges:
    """The server's gauges per ladder phase: fed the run's phases and polls in time order."""

    def __init__(self, suites: Iterable[str] | None = None) -> None:
        self._suites = None if suites is None else set(suites)  # None: every ladder rung
        self._open: dict[str, tuple[LadderKey, float]] = {}  # endpoint -> its running phase
        self._last: dict[str, ServerSample] = {}
        self.gauges: dict[LadderKey, _Gauges] = {}

    def apply(self, event: Event) -> None:
        if isinstance(event, PhaseStarted):
            self._open.pop(event.endpoint_id, None)
            rung = event.suite.startswith(CONTEXT_SUITE_PREFIX)
            if event.suite in self._suites if self._suites is not None else rung:
                key = (event.endpoint_id, event.suite, event.concurrency)
                self._open[event.endpoint_id] = (key, event.t)
                self.gauges.setdefault(key, _Gauges())
        elif isinstance(event, PhaseFinished):
            self._open.pop(event.endpoint_id, None)
        elif isinstance(event, ServerSample):
            before = self._last.get(event.endpoint_id)
            self._last[event.endpoint_id] = event
            running = self._open.get(event.endpoint_id)
            if running is None:
                return
            gauges = self.gauges[running[0]]
            gauges.polls += 1
            gauges.running_peak = peak(gauges.running_peak, event.requests_running)
            gauges.waiting_peak = peak(gauges.waiting_peak, event.requests_waiting)
            gauges.kv_peak_pct = peak(gauges.kv_peak_pct, event.kv_cache_pct)
            if before is None or before.t < running[1]:
                return  # what this poll counts since the last began before the rung did
            if event.queue_mean_s is not None and event.queue_count:
                gauges.queue_s += event.queue_mean_s * event.queue_count
                gauges.queued += event.queue_count
            grew = counter_increase(event.preemptions_total, before.preemptions_total)
            if grew is not None:
                gauges.preemptions = (gauges.preemptions or 0.0) + grew


def run_configs(events: Iterable[Event]) -> dict[str, EndpointConfig]:
    """What each endpoint said of itself at run start (the first RunStarted's)."""
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    return {} if started is None else {c.endpoint_id: c for c in started.configuration}


class LadderTally:
    """Ladder requests folded per endpoint, rung and level, in any order: the report feeds it a
    snapshot's rows, the live state each request as it comes."""

    def __init__(self) -> None:
        self._cells: dict[LadderKey, _Cell] = {}

    def __bool__(self) -> bool:
        return bool(self._cells)

    def add(self, sent: LadderSent) -> None:
        self._cells.setdefault((sent.endpoint_id, sent.suite, sent.concurrency), _Cell()).add(sent)

    def rows(
        self, gauges: LadderGauges | None = None, endpoint_order: tuple[str, ...] = ()
    ) -> list[LadderRow]:
        """Rows per endpoint (in ``endpoint_order``), rung (shortest first) and level."""
        cells = self._cells
        order = {endpoint_id: i for i, endpoint_id in enumerate(endpoint_order)}
        polled = gauges.gauges if gauges is not None else {}

        def place(key: LadderKey) -> tuple[Any, ...]:
            length = cells[key].asked
            rank = order.get(key[0], len(order))
            return rank, key[0], length is None, length or 0, key[1], key[2]

        return [
            _row(key, cells[key], polled.get(key, _Gauges())) for key in sorted(cells, key=place)
        ]


def _row(key: LadderKey, cell: _Cell, server: _Gauges) -> LadderRow:
    return LadderRow(
        endpoint_id=key[0],
        suite=key[1],
        concurrency=key[2],
        tokens_in_asked=cell.asked,
        requests=cell.requests,
        errors=cell.errors,
        tokens_in_mean=mean(cell.tokens_in),
        ttft_mean_s=mean(cell.ttft),
        ttft_p50_s=percentile(cell.ttft, 50),
        prefill_tps_mean=mean(cell.prefill),
        decode_tps_mean=mean(cell.decode),
        recall_mean=mean(cell.recall),
        recall_by_depth=tuple(
            (depth, sum(hits) / len(hits)) for depth, hits in sorted(cell.depths.items())
        ),
        running_peak=server.running_peak,
        waiting_peak=server.waiting_peak,
        kv_peak_pct=server.kv_peak_pct,
        preemptions=server.preemptions,
        server_polls=server.polls,
        server_queue_mean_s=server.queue_s / server.queued if server.queued else None,
    )


def ladder_rows(
    sent: Iterable[LadderSent],
    gauges: LadderGauges | None = None,
    endpoint_order: tuple[str, ...] = (),
) -> list[LadderRow]:
    """Rows per endpoint (in ``endpoint_order``), rung (shortest first) and level."""
    tally = LadderTally()
    for one in sent:
        tally.add(one)
    return tally.rows(gauges, endpoint_order)


def _held(row: LadderRow) -> int:
    return min(row.concurrency, row.requests)


def rung_capacities(
    rows: Sequence[LadderRow], configs: Mapping[str, EndpointConfig] | None = None
) -> list[RungCapacity]:
    """Per endpoint and rung, from its levels in order (``ladder_rows``' order kept), with
    each endpoint's cache as ``configs`` (its RunStarted's) says."""
    configs = configs or {}
    levels: dict[tuple[str, str], list[LadderRow]] = {}
    for row in rows:
        levels.setdefault((row.endpoint_id, row.suite), []).append(row)
    found = []
    for (endpoint_id, suite), steps in levels.items():
        polled = sorted((r for r in steps if r.server_polls), key=lambda r: r.concurrency)
        full = next((r for r in polled if r.full), None)
        # What ran at once: the running peaks polled up to the first full level, and each
        # level below it whole (one of few answered requests never held its concurrency).
        fits: float | None = None
        if full is not None:
            below = [_held(r) for r in polled if r.concurrency < full.concurrency]
            peaks = [r.running_peak or 0 for r in polled if r.concurrency <= full.concurrency]
            fits = max([*below, *peaks], default=0) or None
        elif held := [_held(r) for r in polled if r.requests]:
            fits = max(held)
        said = configs.get(endpoint_id, EndpointConfig(endpoint_id))
        found.append(
            RungCapacity(
                endpoint_id=endpoint_id,
                suite=suite,
                tokens_in_asked=steps[0].tokens_in_asked,
                fits=None if fits is None else round(fits),
                at_least=full is None,
                full_at=None if full is None else full.concurrency,
                kv_cache_dtype=said.kv_cache_dtype,
                kv_block_size=said.kv_block_size,
                kv_blocks=said.kv_blocks,
            )
        )
    return found


@dataclass(frozen=True, slots=True)
class LadderPair:
    """One endpoint's rung at one level in two runs (``compare``): None where a run lacks it."""

    label: str
    suite: str
    concurrency: int
    a: LadderRow | None
    b: LadderRow | None


@dataclass(frozen=True, slots=True)
class RungCapacityPair:
    label: str
    suite: str
    a: RungCapacity | None
    b: RungCapacity | None


_Keyed = TypeVar("_Keyed", "LadderRow", "RungCapacity")


def _paired(
    pairs: Sequence[tuple[str, str, str]],
    rows_a: Sequence[_Keyed],
    rows_b: Sequence[_Keyed],
    key: Callable[[_Keyed], Hashable],
) -> Iterator[tuple[str, Any, _Keyed | None, _Keyed | None]]:
    """Each endpoint pair's (id in A, id in B, label) rows by ``key``, A's order then B's."""
    by_a = {(r.endpoint_id, key(r)): r for r in rows_a}
    by_b = {(r.endpoint_id, key(r)): r for r in rows_b}
    for endpoint_a, endpoint_b, label in pairs:
        keys = [k for e, k in by_a if e == endpoint_a]
        keys += [k for e, k in by_b if e == endpoint_b and k not in keys]
        for k in keys:
            yield label, k, by_a.get((endpoint_a, k)), by_b.get((endpoint_b, k))


def pair_ladders(
    pairs: Sequence[tuple[str, str, str]],
    rows_a: Sequence[LadderRow],
    rows_b: Sequence[LadderRow],
) -> tuple[LadderPair, ...]:
    """Each endpoint pair's rungs and levels in both runs."""
    paired = _paired(pairs, rows_a, rows_b, lambda r: (r.suite, r.concurrency))
    return tuple(LadderPair(label, k[0], k[1], a, b) for label, k, a, b in paired)


def pair_capacities(
    pairs: Sequence[tuple[str, str, str]],
    rows_a: Sequence[RungCapacity],
    rows_b: Sequence[RungCapacity],
) -> tuple[RungCapacityPair, ...]:
    """Each endpoint pair's rungs' capacities in both runs."""
    paired = _paired(pairs, rows_a, rows_b, lambda r: r.suite)
    return tuple(RungCapacityPair(label, k, a, b) for label, k, a, b in paired)

"""Service levels: SLO targets, per-request attainment, goodput per phase, load and capacity.

Pure: imports only ``events``, so the state (live panes), the report (capacity rows) and the
runner's sweep stop rules all compute the same numbers from the same records.

- A request **meets** the SLO when it did not fail and every target that is set holds:
  TTFT <= ``ttft_s``, TPOT <= ``tpot_s`` (TPOT = (E2E - TTFT) / (tokens_out - 1), vacuous for a
  one-token reply), E2E <= ``e2e_s``. An "incomplete" reply (cut by max_tokens) can meet it.
- A phase's **window** runs from the send of its first counted request to the end of its last
  counted one; requests in the warm-up and cool-down windows (``trimmed``) are not counted.
- **Attainment** = counted requests that met the SLO / counted requests (errors included).
  **Goodput** = those that met it / window seconds.
- **Throughput** of a window = output tokens generated inside it / its length. Every request
  that did not fail contributes the part of its stream inside the window (the first token at
  TTFT, the rest spread evenly until E2E), trimmed ones included: they load the server too.
  Without trimming the window spans the phase, and this is the phase's aggregate throughput.
- A **load point** folds the phases run at one load level (all suites), in load order. A
  closed-loop phase planned with fewer requests than its concurrency never held that load and is
  left out: its flat throughput would make a false knee. The
  **knee** is the last point before aggregate throughput stops growing by ``KNEE_MIN_GAIN``; the
  **capacity** is the highest load below which every point met the attainment target.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal, Protocol

from nvfp4_tui.core.events import Event, PhaseFinished, PhasePlan, RequestFinished, RunStarted
from nvfp4_tui.core.stats import finite

KNEE_MIN_GAIN = 0.05  # throughput growing less than this over one step is no longer growing
DEFAULT_ATTAINMENT = 0.9
LATE_AFTER_S = 0.010  # an open-loop send later than this is late: well above timer jitter

LoadKind = Literal["concurrency", "rate"]


@dataclass(frozen=True, slots=True)
class SloTargets:
    """What a request must achieve; a target left as None is not checked."""

    ttft_s: float | None = None
    tpot_s: float | None = None
    e2e_s: float | None = None
    attainment: float = DEFAULT_ATTAINMENT  # share of requests that must meet it to sustain a load

    @property
    def defined(self) -> bool:
        return any(x is not None for x in (self.ttft_s, self.tpot_s, self.e2e_s))

    @classmethod
    def of_plan(cls, plan: PhasePlan) -> SloTargets:
        return cls(
            plan.slo_ttft_s,
            plan.slo_tpot_s,
            plan.slo_e2e_s,
            DEFAULT_ATTAINMENT if plan.slo_attainment is None else plan.slo_attainment,
        )


class Timed(Protocol):
    """The fields of a request record the SLO looks at (``RequestFinished`` has them)."""

    @property
    def status(self) -> str: ...
    @property
    def ttft_s(self) -> float | None: ...
    @property
    def e2e_s(self) -> float | None: ...
    @property
    def tokens_out(self) -> int | None: ...


def tpot_s(ttft_s: float | None, e2e_s: float | None, tokens_out: int | None) -> float | None:
    """Time per output token after the first; None when it cannot be told (< 2 tokens)."""
    ttft, e2e = finite(ttft_s), finite(e2e_s)
    if ttft is None or e2e is None or tokens_out is None or tokens_out < 2:
        return None
    return (e2e - ttft) / (tokens_out - 1)


def misses(targets: SloTargets, record: Timed) -> tuple[str, ...]:
    """The targets ``record`` missed ("error" for a failed request); empty when it met them all."""
    if record.status == "error":
        return ("error",)
    missed: list[str] = []
    ttft, e2e = finite(record.ttft_s), finite(record.e2e_s)
    if targets.ttft_s is not None and (ttft is None or ttft > targets.ttft_s):
        missed.append("ttft")
    if targets.tpot_s is not None:
        tpot = tpot_s(ttft, e2e, record.tokens_out)
        one_token = record.tokens_out is not None and record.tokens_out < 2 and ttft is not None
        if not one_token and (tpot is None or tpot > targets.tpot_s):
            missed.append("tpot")
    if targets.e2e_s is not None and (e2e is None or e2e > targets.e2e_s):
        missed.append("e2e")
    return tuple(missed)


def meets(targets: SloTargets, record: Timed) -> bool:
    return not misses(targets, record)


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole > 0 else None


# ---- read-outs -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Load:
    """A load level: requests held in flight (closed loop) or requests per second (open loop)."""

    kind: LoadKind
    value: float

    @property
    def label(self) -> str:
        return f"c={self.value:g}" if self.kind == "concurrency" else f"{self.value:g} req/s"

    @property
    def order(self) -> tuple[bool, float]:
        """Sort key: closed-loop levels first, each kind from the lowest load up."""
        return self.kind == "rate", self.value

    @classmethod
    def of(cls, concurrency: int, rate_rps: float | None) -> Load:
        """Open loop when a rate is set (``concurrency`` then only caps), closed loop otherwise."""
        if rate_rps is not None:
            return cls("rate", rate_rps)
        return cls("concurrency", float(concurrency))

    @classmethod
    def of_plan(cls, plan: PhasePlan) -> Load:
        return cls.of(plan.concurrency, plan.rate_rps)


def load_axis(levels: Iterable[Load]) -> str:
    """What a chart's load axis measures: ``concurrency``, ``request rate``, or ``load`` (both)."""
    kinds = {load.kind for load in levels}
    return "load" if len(kinds) > 1 else "request rate" if kinds == {"rate"} else "concurrency"


def run_plans(started: RunStarted) -> dict[tuple[str, int], PhasePlan]:
    """Each phase's plan by (endpoint id, phase index): an endpoint's phases are numbered in
    the order the run lists them."""
    plans: dict[tuple[str, int], PhasePlan] = {}
    counts: dict[str, int] = {}
    for plan in started.phases:
        index = counts.get(plan.endpoint_id, 0)
        counts[plan.endpoint_id] = index + 1
        plans[(plan.endpoint_id, index)] = plan
    return plans


@dataclass(frozen=True, slots=True)
class PhaseSlo:
    """One phase's service level: counted requests, attainment, goodput, throughput, lateness."""

    phase_index: int
    suite: str
    load: Load
    requests: int  # counted: not trimmed
    met: int
    errors: int  # counted requests that failed
    trimmed: int
    late: int  # open-loop requests sent more than LATE_AFTER_S after their slot (trimmed too)
    late_max_s: float | None
    window_s: float | None
    attainment: float | None
    goodput_rps: float | None
    throughput_tps: float | None
    finished: bool


@dataclass(frozen=True, slots=True)
class LoadPoint:
    """The phases at one load level together: one point of the throughput-vs-load chart."""

    load: Load
    phases: int
    requests: int
    met: int
    errors: int
    late: int
    window_s: float
    attainment: float | None
    goodput_rps: float | None
    throughput_tps: float | None
    error_share: float | None
    sustained: bool  # attainment reached the target


@dataclass(frozen=True, slots=True)
class CapacityRow:
    """Capacity at SLO of one endpoint (stable keys: the report's ``kind = "capacity"`` rows)."""

    endpoint: str
    load_kind: LoadKind
    capacity: float | None  # the highest load sustained within the SLO; None: not even the first
    capacity_goodput_rps: float | None
    capacity_throughput_tps: float | None
    capacity_attainment: float | None
    knee: float | None  # None: throughput still grew at the highest load run
    knee_throughput_tps: float | None
    max_load: float | None  # the highest load run
    steps: int
    sweep_stop: str | None  # the stop rule that ended the sweep: "errors", "slo" or "throughput"
    slo_ttft_s: float | None
    slo_tpot_s: float | None
    slo_e2e_s: float | None
    slo_attainment: float

    @property
    def slo_targets(self) -> tuple[tuple[str, float], ...]:
        """The targets the SLO sets, as (name, seconds): of TTFT, TPOT and E2E."""
        targets = (("TTFT", self.slo_ttft_s), ("TPOT", self.slo_tpot_s), ("E2E", self.slo_e2e_s))
        return tuple((name, value) for name, value in targets if value is not None)


# ---- accumulators ----------------------------------------------------------------------------


class _Span:
    __slots__ = ("end", "first", "start", "tokens")

    def __init__(self, start: float, first: float, end: float, tokens: int) -> None:
        self.start, self.first, self.end, self.tokens = start, first, end, tokens

    def tokens_within(self, a: float, b: float) -> float:
        """Tokens of this stream generated inside [a, b]: one at ``first``, the rest evenly after."""
        inside = 1.0 if a <= self.first <= b else 0.0
        rest = self.tokens - 1
        if rest <= 0:
            return inside if self.tokens == 1 else 0.0
        if self.end <= self.first:
            return inside + (rest if a <= self.end <= b else 0.0)
        overlap = min(b, self.end) - max(a, self.first)
        return inside + rest * max(0.0, overlap) / (self.end - self.first)


class _PhaseAccount:
    """One phase's counters, window and token spans.

    A stream wholly inside the window stays inside (the window only widens) and counts all its
    tokens, so it is kept as a number, not a span: memory stays flat however long the phase. The
    spans left (trimmed or out-of-order streams reaching outside the window) are folded into one
    number when the phase finishes; a request reported after that still adds its own tokens,
    against the window as it then stands.
    """

    __slots__ = (
        "cache",
        "errors",
        "finished",
        "first_send",
        "folded_tokens",
        "inside_tokens",
        "last_end",
        "late",
        "late_max_s",
        "load",
        "met",
        "planned",
        "requests",
        "spans",
        "suite",
        "targets",
        "trimmed",
    )

    def __init__(
        self, suite: str, load: Load, targets: SloTargets, planned: int | None = None
    ) -> None:
        self.suite = suite
        self.load = load
        self.targets = targets
        self.planned = planned  # requests the plan gives the phase; None: bounded by time
        self.requests = self.met = self.errors = self.trimmed = self.late = 0
        self.late_max_s: float | None = None
        self.first_send: float | None = None
        self.last_end: float | None = None
        self.spans: list[_Span] = []
        self.inside_tokens = 0  # tokens of streams wholly inside the window; an int stays exact
        self.folded_tokens = 0.0
        self.finished = False
        self.cache: tuple[int, float] | None = None  # (records seen, window tokens)

    def add(self, record: RequestFinished) -> None:
        late_s = finite(record.late_s)
        if late_s is not None and late_s > LATE_AFTER_S:
            self.late += 1
            self.late_max_s = max(self.late_max_s or 0.0, late_s)
        e2e = finite(record.e2e_s)
        end = record.t + e2e if e2e is not None else record.t
        if record.trimmed:
            self.trimmed += 1
        else:
            self.requests += 1
            self.errors += record.status == "error"
            self.met += meets(self.targets, record)
            self.first_send = (
                record.t if self.first_send is None else min(self.first_send, record.t)
            )
            self.last_end = end if self.last_end is None else max(self.last_end, end)
        if record.status != "error" and e2e is not None and record.tokens_out:
            ttft = finite(record.ttft_s)
            first = record.t + ttft if ttft is not None else end
            self._keep(_Span(record.t, first, end, record.tokens_out))

    def _keep(self, span: _Span) -> None:
        a, b = self.first_send, self.last_end
        inside = (
            a is not None
            and b is not None
            and a <= min(span.first, span.end)
            and max(span.first, span.end) <= b
        )
        if inside and span.tokens >= 1:
            self.inside_tokens += span.tokens
        else:
            self.spans.append(span)

    @property
    def window_s(self) -> float | None:
        if self.first_send is None or self.last_end is None:
            return None
        span = self.last_end - self.first_send
        return span if span > 0 else None

    def window_tokens(self) -> float:
        seen = self.requests + self.trimmed
        if self.cache is None or self.cache[0] != seen:
            parts = [self.folded_tokens, self.inside_tokens]
            if self.first_send is not None and self.last_end is not None:
                a, b = self.first_send, self.last_end
                parts.extend(s.tokens_within(a, b) for s in self.spans)
            # fsum: the same total whatever order the records came in (a replay sorts them) and
            # whichever of them were folded into inside_tokens on the way.
            tokens = math.fsum(parts)
            self.cache = (seen, tokens)
        return self.cache[1]

    def throughput_tps(self) -> float | None:
        window = self.window_s
        return self.window_tokens() / window if window else None

    @property
    def holds_load(self) -> bool:
        """False for a closed loop planned with fewer requests than its concurrency: it never
        had that many in flight."""
        short = self.planned is not None and self.planned < self.load.value
        return not (self.load.kind == "concurrency" and short)

    def finish(self) -> None:
        self.folded_tokens = self.window_tokens()
        self.spans.clear()
        self.inside_tokens = 0
        self.finished = True

    def read(self, index: int) -> PhaseSlo:
        window = self.window_s
        return PhaseSlo(
            phase_index=index,
            suite=self.suite,
            load=self.load,
            requests=self.requests,
            met=self.met,
            errors=self.errors,
            trimmed=self.trimmed,
            late=self.late,
            late_max_s=self.late_max_s,
            window_s=window,
            attainment=_ratio(self.met, self.requests),
            goodput_rps=_ratio(self.met, window) if window else None,
            throughput_tps=self.throughput_tps(),
            finished=self.finished,
        )


class LoadTracker:
    """Goodput, attainment and throughput of one endpoint's phases, folded from its events.

    Built from the endpoint's planned phases (phase index = position in the plan); requests of
    a phase it was not told of are tracked at their concurrency with the plan's targets.
    """

    def __init__(self, plans: Iterable[PhasePlan]) -> None:
        self._plans = tuple(plans)
        self.targets = SloTargets.of_plan(self._plans[0]) if self._plans else SloTargets()
        self.sweep = any(p.sweep for p in self._plans)
        self._phases: dict[int, _PhaseAccount] = {}
        self.sweep_stop: str | None = None
        self.latest_phase: int | None = None  # the phase of the latest request folded in

    @property
    def has_slo(self) -> bool:
        return self.targets.defined

    def _account(self, index: int, suite: str, concurrency: int) -> _PhaseAccount:
        account = self._phases.get(index)
        if account is None:
            if index < len(self._plans):
                plan = self._plans[index]
                account = _PhaseAccount(
                    suite, Load.of_plan(plan), SloTargets.of_plan(plan), plan.requests
                )
            else:
                account = _PhaseAccount(suite, Load.of(concurrency, None), self.targets)
            self._phases[index] = account
        return account

    def add(self, record: RequestFinished) -> None:
        self._account(record.phase_index, record.suite, record.concurrency).add(record)
        self.latest_phase = record.phase_index

    def finish(self, event: PhaseFinished) -> None:
        self._account(event.phase_index, event.suite, event.concurrency).finish()
        if event.sweep_stop is not None:
            self.sweep_stop = event.sweep_stop

    def phase(self, index: int) -> PhaseSlo | None:
        account = self._phases.get(index)
        return account.read(index) if account is not None else None

    def current(self) -> PhaseSlo | None:
        """The phase that most recently finished a request: what a pane shows live."""
        return self.phase(self.latest_phase) if self.latest_phase is not None else None

    def phases(self) -> tuple[PhaseSlo, ...]:
        return tuple(self._phases[i].read(i) for i in sorted(self._phases))

    def points(self) -> tuple[LoadPoint, ...]:
        """One point per load level with counted requests, lowest load first; phases that never
        held their load are left out."""
        groups: dict[Load, list[_PhaseAccount]] = {}
        for index in sorted(self._phases):
            account = self._phases[index]
            if account.requests and account.holds_load:
                groups.setdefault(account.load, []).append(account)
        return tuple(
            _point(load, groups[load], self.targets)
            for load in sorted(groups, key=lambda load: load.order)
        )

    def knee(self) -> LoadPoint | None:
        return knee(self.points())

    def capacity(self) -> LoadPoint | None:
        return capacity(self.points())

    def capacity_row(self, endpoint_id: str) -> CapacityRow:
        points = self.points()
        best, bend = capacity(points), knee(points)
        kind = points[0].load.kind if points else _plan_kind(self._plans)
        return CapacityRow(
            endpoint=endpoint_id,
            load_kind=kind,
            capacity=best.load.value if best else None,
            capacity_goodput_rps=best.goodput_rps if best else None,
            capacity_throughput_tps=best.throughput_tps if best else None,
            capacity_attainment=best.attainment if best else None,
            knee=bend.load.value if bend else None,
            knee_throughput_tps=bend.throughput_tps if bend else None,
            max_load=points[-1].load.value if points else None,
            steps=len(points),
            sweep_stop=self.sweep_stop,
            slo_ttft_s=self.targets.ttft_s,
            slo_tpot_s=self.targets.tpot_s,
            slo_e2e_s=self.targets.e2e_s,
            slo_attainment=self.targets.attainment,
        )


def _plan_kind(plans: Sequence[PhasePlan]) -> LoadKind:
    return "rate" if any(p.rate_rps is not None for p in plans) else "concurrency"


def _point(load: Load, accounts: list[_PhaseAccount], targets: SloTargets) -> LoadPoint:
    requests = sum(a.requests for a in accounts)
    met = sum(a.met for a in accounts)
    errors = sum(a.errors for a in accounts)
    window = math.fsum(a.window_s or 0.0 for a in accounts)
    tokens = math.fsum(a.window_tokens() for a in accounts)
    attainment = _ratio(met, requests)
    return LoadPoint(
        load=load,
        phases=len(accounts),
        requests=requests,
        met=met,
        errors=errors,
        late=sum(a.late for a in accounts),
        window_s=window,
        attainment=attainment,
        goodput_rps=_ratio(met, window),
        throughput_tps=_ratio(tokens, window),
        error_share=_ratio(errors, requests),
        sustained=attainment is not None and attainment >= targets.attainment,
    )


def throughput_gain(before: LoadPoint, after: LoadPoint) -> float | None:
    """Relative growth of aggregate throughput from one point to the next."""
    if not before.throughput_tps or after.throughput_tps is None:
        return None
    return after.throughput_tps / before.throughput_tps - 1.0


def knee(points: Sequence[LoadPoint], min_gain: float = KNEE_MIN_GAIN) -> LoadPoint | None:
    """The last point before throughput grew by less than ``min_gain``; None if it kept growing."""
    for before, after in pairwise(points):
        gain = throughput_gain(before, after)
        if gain is not None and gain < min_gain:
            return before
    return None


def capacity(points: Sequence[LoadPoint]) -> LoadPoint | None:
    """The highest point below which every point sustained the SLO."""
    best = None
    for point in points:
        if not point.sustained:
            break
        best = point
    return best


def _trackers(events: Iterable[Event]) -> dict[str, LoadTracker]:
    trackers: dict[str, LoadTracker] = {}
    for event in events:
        if isinstance(event, RunStarted):
            trackers = {
                e.id: LoadTracker(p for p in event.phases if p.endpoint_id == e.id)
                for e in event.endpoints
            }
        elif isinstance(event, RequestFinished) and event.endpoint_id in trackers:
            trackers[event.endpoint_id].add(event)
        elif isinstance(event, PhaseFinished) and event.endpoint_id in trackers:
            trackers[event.endpoint_id].finish(event)
    return trackers


def capacity_points(events: Iterable[Event]) -> list[tuple[CapacityRow, tuple[LoadPoint, ...]]]:
    """Capacity at SLO and the load points behind it, per endpoint that ran with SLO targets
    or a sweep, in the run's order."""
    return [
        (tracker.capacity_row(endpoint_id), tracker.points())
        for endpoint_id, tracker in _trackers(events).items()
        if tracker.has_slo or tracker.sweep
    ]


def capacity_rows(events: Iterable[Event]) -> list[CapacityRow]:
    return [row for row, _ in capacity_points(events)]

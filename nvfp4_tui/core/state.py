"""FleetState: the pure reducer of the event stream that every view (live, follow, replay) reads.

``FleetState.apply(event)`` folds one event in; it does no I/O, never reads the clock and imports
nothing but ``events``, ``stats`` and ``slo``. Methods that need the time take ``now`` (the live
clock, or the replay position). History lives in bounded ring buffers, so memory stays flat over a
long run (``slo``'s per-phase token spans grow with a phase's requests, until it ends).

Durable versus transient: ``TokenProgress`` is never persisted, so what it sets (requests in
flight, the live token rate, live points of the decode history) is transient and is reset when a
phase, an endpoint or the run ends. ``summary()`` digests only what the persisted events determine,
in a way that does not depend on the order rows were recorded in, so a replay of a snapshot
compares equal to the live run it recorded.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from nvfp4_tui.core.events import (
    SUSPECT_ERROR_KIND,
    EndpointConfig,
    EndpointInfo,
    EndpointStatus,
    EndpointStatusKind,
    ErrorKind,
    Event,
    GpuSample,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RequestStatus,
    RunFinished,
    RunStarted,
    RunStatus,
    ServerSample,
    TokenProgress,
)
from nvfp4_tui.core.figures.board import Board
from nvfp4_tui.core.figures.leaderboard import (
    LeaderboardFold,
    LeaderRow,
    LevelRow,
    PhaseFacts,
    RequestFacts,
)
from nvfp4_tui.core.figures.scores import DEFAULT_SCORE, SCORE_NAMES
from nvfp4_tui.core.slo import Load, LoadTracker
from nvfp4_tui.core.stats import QuantileSketch, RunningStats, StatsSummary, percentile

HISTORY_LEN = 600  # points per ring: 5 min of GPU samples at 2/s, well over a 60 s sparkline
RECENT_REQUESTS_LEN = 100
RECENT_STATS_N = 200  # "recent" TTFT / ITL percentiles look at this many requests
RECENT_DECODE_N = 20  # decode tok/s shown when nothing streams: mean of the last N requests
# The live decode rate pools this many seconds of progress: at 144 tok/s, 5 s of one stream is
# ~700 tokens, so a chunk more or less moves it by well under 1%.
DECODE_WINDOW_S = 5.0
# Fewer decoding stream-seconds than this in the window say nothing yet (a stream just began).
MIN_DECODE_STREAM_S = 0.5
TELEMETRY_STALE_S = 5.0
LIVE_MAX_AGE_S = 2.0  # a live rate older than this (runner stalled, pipe dropped) is not "now"

PhaseState = Literal["pending", "running", "finished"]
_QUIET_STATUSES = frozenset({"done", "down", "error"})


def _finite(x: float | None) -> float | None:
    # A NaN or inf from a broken server or clock must not poison means and percentiles.
    return x if x is not None and math.isfinite(x) else None


def _finished_t(event: RequestFinished) -> float:
    """When the request ended: RequestFinished.t is when it was sent."""
    e2e_s = _finite(event.e2e_s)
    return event.t + e2e_s if e2e_s is not None else event.t


@dataclass(frozen=True, slots=True)
class SamplesSkipped:
    """Telemetry samples a replay jumped over: counted, not folded in (never persisted).

    Only their count outlives the jump: their points would have left the history rings, and
    the samples that set the latest, first and last values are folded in as usual.
    """

    t: float
    count: int
    gpu: int | None = None  # a GPU's samples, or else
    endpoint_id: str | None = None  # an endpoint's server samples


# ---- read-outs -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TpsPoint:
    """One point of the decode tok/s history (per stream: comparable across concurrency)."""

    t: float
    decode_tps: float


@dataclass(frozen=True, slots=True)
class TtftPoint:
    """One request's TTFT as the client measured it, placed when its first token arrived."""

    t: float
    ttft_s: float


@dataclass(frozen=True, slots=True)
class GpuPoint:
    t: float
    vram_used_mib: float | None
    power_w: float | None
    util_gpu_pct: float | None


@dataclass(frozen=True, slots=True)
class ServerPoint:
    t: float
    kv_cache_pct: float | None
    requests_waiting: float | None
    ttft_mean_s: float | None
    requests_running: float | None = None
    ttft_count: int | None = None  # first tokens the mean is over, to weigh it across scrapes
    ttft_p50_low_s: float | None = None  # the bucket the scrape's p50 lies in: (low, high]
    ttft_p50_high_s: float | None = None


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    t: float  # when the failed request ended
    kind: ErrorKind | None
    message: str | None
    suite: str
    prompt_id: str


@dataclass(frozen=True, slots=True)
class AnswerText:
    t: float  # when the request ended
    suite: str
    prompt_id: str
    status: RequestStatus
    answer_text: str
    reasoning_text: str
    tool_calls_json: str | None


@dataclass(frozen=True, slots=True)
class RequestRow:
    """One line of the detail table; the answer text is kept only for the latest request."""

    t: float  # when the request was sent
    suite: str
    prompt_id: str
    concurrency: int
    phase_index: int
    request_index: int
    status: RequestStatus
    ttft_s: float | None
    e2e_s: float | None
    decode_tps: float | None
    e2e_tps: float | None
    tokens_out: int | None
    error_kind: ErrorKind | None
    error_message: str | None
    scores: tuple[tuple[str, float], ...]  # (score name, value) for the scores present

    def score(self, name: str = DEFAULT_SCORE) -> float | None:
        return next((value for key, value in self.scores if key == name), None)


@dataclass(frozen=True, slots=True)
class PhaseRef:
    suite: str
    concurrency: int
    phase_index: int
    started_t: float
    rate_rps: float | None = None  # open loop: the planned rate (``concurrency`` caps, 0: none)

    @property
    def load(self) -> Load:
        return Load.of(self.concurrency, self.rate_rps)


@dataclass(frozen=True, slots=True)
class PhaseProgress:
    """One planned (or observed) phase of an endpoint, with its progress and, once over, totals."""

    phase_index: int
    suite: str
    concurrency: int
    planned_requests: int | None
    duration_s: float | None
    state: PhaseState
    requests_done: int
    errors: int
    fraction: float  # 0..1; duration-bound phases need ``now`` to move before they finish
    started_t: float | None
    finished_t: float | None
    output_tokens: int | None  # from PhaseFinished
    wall_s: float | None
    throughput_tps: float | None  # aggregate: output tokens / wall time
    rate_rps: float | None = None

    @property
    def load(self) -> Load:
        return Load.of(self.concurrency, self.rate_rps)


# ---- accumulators ----------------------------------------------------------------------------


class _PhaseTrack:
    __slots__ = (
        "concurrency",
        "duration_s",
        "errors",
        "finished",
        "index",
        "planned_requests",
        "rate_rps",
        "requests_done",
        "started_t",
        "suite",
    )

    def __init__(
        self,
        index: int,
        suite: str,
        concurrency: int,
        planned_requests: int | None,
        duration_s: float | None,
        rate_rps: float | None = None,
    ) -> None:
        self.index = index
        self.suite = suite
        self.concurrency = concurrency
        self.planned_requests = planned_requests
        self.duration_s = duration_s
        self.rate_rps = rate_rps
        self.started_t: float | None = None
        self.finished: PhaseFinished | None = None
        self.requests_done = 0
        self.errors = 0

    @property
    def state(self) -> PhaseState:
        if self.finished is not None:
            return "finished"
        return "running" if self.started_t is not None else "pending"

    def fraction(self, now: float | None) -> float:
        if self.finished is not None:
            return 1.0
        if self.planned_requests is not None:
            return (
                min(1.0, self.requests_done / self.planned_requests)
                if self.planned_requests
                else 0.0
            )
        if self.duration_s and self.started_t is not None and now is not None:
            return min(1.0, max(0.0, (now - self.started_t) / self.duration_s))
        return 0.0

    def remaining_s(
        self, now: float, request_rate: float | None, request_s: float | None
    ) -> float | None:
        """Seconds left in this phase, or None when it cannot be told yet.

        ``request_s`` is how long a request of this endpoint takes (its recent mean): a closed
        loop's requests take that in waves of its concurrency, an open loop's come at its rate,
        and a duration-bound phase runs that much past its duration while its last requests
        finish. Without it, the endpoint's rate of finished requests so far; that rate, taken
        at concurrency 1, made a demo's ETA read 35 minutes for a 12-minute run.
        """
        if self.finished is not None:
            return 0.0
        tail_s = request_s or 0.0
        if self.planned_requests is not None:
            left = max(0, self.planned_requests - self.requests_done)
            if left == 0:
                return 0.0
            if self.rate_rps:
                return left / self.rate_rps + tail_s
            if request_s is not None:
                return math.ceil(left / max(1, self.concurrency)) * request_s
            return left / request_rate if request_rate else None
        if self.duration_s is not None:
            elapsed = now - self.started_t if self.started_t is not None else 0.0
            return max(0.0, self.duration_s - elapsed) + tail_s
        return None

    def read(self, now: float | None) -> PhaseProgress:
        done = self.finished
        return PhaseProgress(
            phase_index=self.index,
            suite=self.suite,
            concurrency=self.concurrency,
            planned_requests=self.planned_requests,
            duration_s=self.duration_s,
            state=self.state,
            requests_done=self.requests_done,
            errors=self.errors,
            fraction=self.fraction(now),
            started_t=self.started_t,
            finished_t=done.t if done else None,
            output_tokens=done.output_tokens if done else None,
            wall_s=done.wall_s if done else None,
            throughput_tps=done.throughput_tps if done else None,
            rate_rps=self.rate_rps,
        )


class GpuTrack:
    """Telemetry of one GPU: the latest sample, a ring of points, first and last VRAM seen."""

    __slots__ = (
        "first_vram_mib",
        "first_vram_t",
        "gpu",
        "history",
        "last_vram_mib",
        "last_vram_t",
        "latest",
        "samples",
    )

    def __init__(self, gpu: int) -> None:
        self.gpu = gpu
        self.latest: GpuSample | None = None
        self.history: deque[GpuPoint] = deque(maxlen=HISTORY_LEN)
        self.samples = 0
        self.first_vram_mib: float | None = None
        self.first_vram_t: float | None = None
        self.last_vram_mib: float | None = None
        self.last_vram_t: float | None = None

    def apply(self, sample: GpuSample) -> None:
        self.samples += 1
        # Latest / first / last go by sample time, not arrival, so a replay agrees with the live run.
        if self.latest is None or sample.t >= self.latest.t:
            self.latest = sample
        self.history.append(
            GpuPoint(sample.t, sample.vram_used_mib, sample.power_w, sample.util_gpu_pct)
        )
        vram = _finite(sample.vram_used_mib)
        if vram is None:
            return
        if self.first_vram_t is None or sample.t < self.first_vram_t:
            self.first_vram_mib, self.first_vram_t = vram, sample.t
        if self.last_vram_t is None or sample.t >= self.last_vram_t:
            self.last_vram_mib, self.last_vram_t = vram, sample.t

    def stale(self, now: float, max_age_s: float = TELEMETRY_STALE_S) -> bool:
        """True when no sample arrived yet or the latest is older than ``max_age_s``."""
        return self.latest is None or now - self.latest.t > max_age_s


class EndpointState:
    """Everything known about one endpoint. Attributes are for reading only; ``apply`` writes."""

    def __init__(
        self,
        info: EndpointInfo,
        plans: Iterable[PhasePlan],
        gpu: GpuTrack | None,
        figures: LeaderboardFold | None = None,
    ) -> None:
        self.info = info
        # The run's leaderboard, shared by every endpoint of it (FleetState.figures).
        self.figures = figures if figures is not None else LeaderboardFold()
        self.gpu = gpu  # shared with FleetState.gpus; None when the endpoint names no GPU index
        plans = tuple(plans)
        # Goodput, SLO attainment, throughput per load level, knee, capacity (nvfp4_tui.core.slo).
        self.load = LoadTracker(plans)
        self.status_reported: EndpointStatusKind | None = None
        self.status_message: str | None = None
        self._phases: dict[int, _PhaseTrack] = {
            index: _PhaseTrack(index, p.suite, p.concurrency, p.requests, p.duration_s, p.rate_rps)
            for index, p in enumerate(plans)
        }
        self.planned_requests: int | None = (
            sum(p.planned_requests or 0 for p in self._phases.values())
            if all(p.planned_requests is not None for p in self._phases.values())
            else None
        )
        self.current_phase: PhaseRef | None = None
        self.first_phase_t: float | None = None
        self.requests_ok = 0
        self.requests_incomplete = 0
        self.requests_error = 0
        self.requests_suspect = 0
        # Transient: set by TokenProgress, reset when a phase or the endpoint ends.
        self.in_flight: int | None = 0  # None while a phase runs and no progress came yet
        self.live_tokens_per_s: float | None = None  # all in-flight streams together
        self.live_t: float | None = None
        # (t, decode tokens, decoding stream-seconds) of the progress windows of the last
        # DECODE_WINDOW_S: the live per-stream decode rate is their tokens over their seconds.
        self._decode_window: deque[tuple[float, int, float]] = deque()
        self.decode_history: deque[TpsPoint] = deque(maxlen=HISTORY_LEN)
        # Durable statistics of every request that did not fail (ok or incomplete).
        self._ttft_recent_s: deque[float] = deque(maxlen=RECENT_STATS_N)
        # Client TTFT over time, to chart beside the server's own (server_history).
        self.ttft_history: deque[TtftPoint] = deque(maxlen=HISTORY_LEN)
        self._itl_recent_s: deque[float] = deque(maxlen=RECENT_STATS_N)
        # E2E of the last requests that did not fail: how long one takes, for the ETA.
        self._e2e_recent_s: deque[float] = deque(maxlen=RECENT_DECODE_N)
        # (load level, decode tok/s) of the last requests that did not fail.
        self._decode_recent: deque[tuple[Load, float]] = deque(maxlen=RECENT_DECODE_N)
        self.ttft_all = QuantileSketch()
        self.itl_p50_all = QuantileSketch()
        self.decode_tps_stats = RunningStats()
        self.e2e_tps_stats = RunningStats()
        self.last_error: ErrorInfo | None = None
        self.last_answer: AnswerText | None = None
        self.recent_requests: deque[RequestRow] = deque(maxlen=RECENT_REQUESTS_LEN)
        self.server_latest: ServerSample | None = None
        self.server_history: deque[ServerPoint] = deque(maxlen=HISTORY_LEN)
        self.server_samples = 0
        self.version = 0  # bumped by every event applied to this endpoint

    @property
    def id(self) -> str:
        return self.info.id

    # ---- derived read-outs

    @property
    def status(self) -> EndpointStatusKind:
        """The last reported status ("waiting" before any), or "done" once every phase finished."""
        if self._phases and all(p.finished is not None for p in self._phases.values()):
            return "done"
        return self.status_reported or "waiting"

    @property
    def requests_done(self) -> int:
        return (
            self.requests_ok
            + self.requests_incomplete
            + self.requests_error
            + self.requests_suspect
        )

    @property
    def target_concurrency(self) -> int | None:
        """Requests the current phase holds in flight (an open loop's cap); None when uncapped."""
        return (self.current_phase.concurrency or None) if self.current_phase else None

    @property
    def streaming(self) -> bool:
        return bool(self.in_flight) and self.live_tokens_per_s is not None

    def live_decode_tps(self, now: float | None = None) -> float | None:
        """The live decode rate per stream: the last DECODE_WINDOW_S's tokens decoded after each
        stream's first chunk over the stream-seconds spent decoding them; None when stale or
        too little streamed (a replay has no progress, so never a live rate)."""
        if not self._decode_window or self.live_t is None:
            return None
        if now is not None and now - self.live_t > LIVE_MAX_AGE_S:
            return None
        tokens = sum(tokens for _, tokens, _ in self._decode_window)
        stream_s = math.fsum(seconds for _, _, seconds in self._decode_window)
        return tokens / stream_s if stream_s >= MIN_DECODE_STREAM_S else None

    def decode_tps_now(self, now: float | None = None) -> float | None:
        """The big number, while a phase runs: the live per-stream rate, else the mean decode
        tok/s of the last few requests at the phase's load level that did not fail. None
        between phases and after the last (the pane then shows the figures per level)."""
        phase = self.current_phase
        if phase is None:
            return None
        live = self.live_decode_tps(now)
        return live if live is not None else self.recent_decode_tps(phase.load)

    def recent_decode_tps(self, load: Load | None = None) -> float | None:
        """The mean decode tok/s of the last requests (at ``load``) that did not fail."""
        recent = [tps for level, tps in self._decode_recent if load is None or level == load]
        return sum(recent) / len(recent) if recent else None

    @property
    def ttft_p50_recent_s(self) -> float | None:
        return percentile(self._ttft_recent_s, 50)

    @property
    def ttft_p50_all_s(self) -> float | None:
        return self.ttft_all.quantile(50)

    @property
    def itl_p50_recent_s(self) -> float | None:
        """Median of the per-request ITL p50s of the recent requests that did not fail."""
        return percentile(self._itl_recent_s, 50)

    @property
    def itl_p50_all_s(self) -> float | None:
        return self.itl_p50_all.quantile(50)

    def quality_stats(self, suite: str, score_name: str = DEFAULT_SCORE) -> StatsSummary:
        """The running quality on one suite, every load level together."""
        return self.figures.suite_quality(self.id, suite, score_name)

    def quality_overall_stats(self, score_name: str = DEFAULT_SCORE) -> StatsSummary:
        return self.figures.suite_quality(self.id, None, score_name)

    def suites(self) -> tuple[str, ...]:
        """Suites in plan order, then any seen only in requests."""
        seen = dict.fromkeys(p.suite for p in self._phases.values())
        seen.update(
            dict.fromkeys(suite for eid, suite, _, _ in self.figures.cells() if eid == self.id)
        )
        return tuple(seen)

    def phase_progress(self, now: float | None = None) -> tuple[PhaseProgress, ...]:
        return tuple(self._phases[i].read(now) for i in sorted(self._phases))

    def throughput_by_load(self) -> tuple[LevelRow, ...]:
        """Aggregate throughput per load level with a finished phase, lowest load first."""
        return self.figures.levels(endpoint=self.id)

    def leaderboard(self) -> tuple[LeaderRow, ...]:
        """One row per (suite, load level) seen, by load then suite in plan order."""
        return self.figures.rows((self.id,), self.suites(), endpoint=self.id)

    def request_rate(self, now: float) -> float | None:
        """Finished requests per second since the first phase started."""
        if self.first_phase_t is None or now <= self.first_phase_t or not self.requests_done:
            return None
        return self.requests_done / (now - self.first_phase_t)

    def eta_s(self, now: float) -> float | None:
        """Seconds until every phase is over (``_PhaseTrack.remaining_s``); None if unknown."""
        if not self._phases:
            return 0.0
        rate = self.request_rate(now)
        request_s = (
            sum(self._e2e_recent_s) / len(self._e2e_recent_s) if self._e2e_recent_s else None
        )
        total = 0.0
        for phase in self._phases.values():
            left = phase.remaining_s(now, rate, request_s)
            if left is None:
                return None
            total += left
        return total

    def _rate_of(self, phase_index: int) -> float | None:
        phase = self._phases.get(phase_index)
        return phase.rate_rps if phase is not None else None

    def server_stale(self, now: float, max_age_s: float = TELEMETRY_STALE_S) -> bool:
        return self.server_latest is None or now - self.server_latest.t > max_age_s

    # ---- reducer steps (called by FleetState)

    def _end_transient(self, in_flight: int | None = 0) -> None:
        self.in_flight = in_flight
        self.live_tokens_per_s = None
        self.live_t = None
        self._decode_window.clear()

    def _phase(self, index: int, suite: str, concurrency: int) -> _PhaseTrack:
        phase = self._phases.get(index)
        if phase is None:
            # Not in the plan (a plan-less import, or a runner that changed its mind): track it.
            phase = self._phases[index] = _PhaseTrack(index, suite, concurrency, None, None)
        return phase

    def _on_phase_started(self, event: PhaseStarted) -> None:
        phase = self._phase(event.phase_index, event.suite, event.concurrency)
        phase.started_t = event.t
        if self.first_phase_t is None or event.t < self.first_phase_t:
            self.first_phase_t = event.t
        self.current_phase = PhaseRef(
            event.suite, event.concurrency, event.phase_index, event.t, phase.rate_rps
        )
        self._end_transient(in_flight=None)

    def _on_phase_finished(self, event: PhaseFinished) -> None:
        phase = self._phase(event.phase_index, event.suite, event.concurrency)
        phase.finished = event
        self.load.finish(event)
        self.figures.add_phase(
            PhaseFacts(
                self.id,
                event.suite,
                event.concurrency,
                phase.rate_rps,
                event.phase_index,
                event.output_tokens,
                event.wall_s,
                event.full_load_s,
                event.loop_lag_p99_s,
            )
        )
        if self.current_phase and self.current_phase.phase_index == event.phase_index:
            self.current_phase = None
        self._end_transient()

    def _on_status(self, event: EndpointStatus) -> None:
        self.status_reported = event.status
        self.status_message = event.message
        if event.status in _QUIET_STATUSES:
            self._end_transient()

    def _on_progress(self, event: TokenProgress) -> None:
        self.in_flight = event.in_flight
        self.live_t = event.t
        self.live_tokens_per_s = _finite(event.tokens_per_s)
        decode_s = _finite(event.decode_s)
        window = self._decode_window
        if decode_s is not None and decode_s > 0:
            window.append((event.t, event.decode_tokens, decode_s))
        # Trimmed on every window, decoding or not: a rate older than the window is not "now".
        while window and window[0][0] <= event.t - DECODE_WINDOW_S:
            window.popleft()
        decode = self.live_decode_tps()
        if decode is not None:
            self.decode_history.append(TpsPoint(event.t, decode))

    def _on_server(self, event: ServerSample) -> None:
        self.server_samples += 1
        if self.server_latest is None or event.t >= self.server_latest.t:
            self.server_latest = event
        self.server_history.append(
            ServerPoint(
                event.t,
                event.kv_cache_pct,
                event.requests_waiting,
                event.ttft_mean_s,
                event.requests_running,
                event.ttft_count,
                event.ttft_p50_low_s,
                event.ttft_p50_high_s,
            )
        )

    def _on_request(self, event: RequestFinished) -> None:
        end_t = _finished_t(event)
        self.load.add(event)
        phase = self._phases.get(event.phase_index)
        self.figures.add_request(
            RequestFacts(
                self.id,
                event.suite,
                event.prompt_id,
                event.concurrency,
                phase.rate_rps if phase is not None else None,
                event.phase_index,
                event.status,
                event.error_kind,
                event.trimmed,
                event.t,
                event.e2e_s,
                event.ttft_s,
                event.decode_tps,
                event.e2e_tps,
                event.tokens_out,
                event.score_heuristic,
                event.score_verified,
                event.score_judge,
            )
        )
        # A legacy script's silent failure (0 tokens, no error) is counted apart from errors, as
        # the leaderboard and the report count it.
        suspect = event.status == "error" and event.error_kind == SUSPECT_ERROR_KIND
        if phase is not None:
            phase.requests_done += 1
            phase.errors += event.status == "error" and not suspect

        scores: list[tuple[str, float]] = []
        if suspect:
            self.requests_suspect += 1
        elif event.status == "error":
            self.requests_error += 1
            if self.last_error is None or end_t >= self.last_error.t:
                self.last_error = ErrorInfo(
                    end_t, event.error_kind, event.error_message, event.suite, event.prompt_id
                )
        else:
            if event.status == "incomplete":
                self.requests_incomplete += 1
            else:
                self.requests_ok += 1
            if not event.trimmed:  # a warm-up or cool-down request: counted, not timed
                self._add_timings(event, end_t)
            scores = [
                (name, value)
                for name in SCORE_NAMES
                if (value := _finite(getattr(event, name))) is not None
            ]
            if self.last_answer is None or end_t >= self.last_answer.t:
                self.last_answer = AnswerText(
                    end_t,
                    event.suite,
                    event.prompt_id,
                    event.status,
                    event.answer_text,
                    event.reasoning_text,
                    event.tool_calls_json,
                )

        self.recent_requests.append(
            RequestRow(
                t=event.t,
                suite=event.suite,
                prompt_id=event.prompt_id,
                concurrency=event.concurrency,
                phase_index=event.phase_index,
                request_index=event.request_index,
                status=event.status,
                ttft_s=event.ttft_s,
                e2e_s=event.e2e_s,
                decode_tps=event.decode_tps,
                e2e_tps=event.e2e_tps,
                tokens_out=event.tokens_out,
                error_kind=event.error_kind,
                error_message=event.error_message,
                scores=tuple(scores),
            )
        )

    def _add_timings(self, event: RequestFinished, end_t: float) -> None:
        e2e_s = _finite(event.e2e_s)
        if e2e_s is not None:
            self._e2e_recent_s.append(e2e_s)
        ttft_s = _finite(event.ttft_s)
        if ttft_s is not None:
            self._ttft_recent_s.append(ttft_s)
            self.ttft_history.append(TtftPoint(event.t + ttft_s, ttft_s))
            self.ttft_all.add(ttft_s)
        itl_s = _finite(event.itl_p50_s)
        if itl_s is not None:
            self._itl_recent_s.append(itl_s)
            self.itl_p50_all.add(itl_s)
        decode_tps = _finite(event.decode_tps)
        if decode_tps is not None:
            self._decode_recent.append(
                (Load.of(event.concurrency, self._rate_of(event.phase_index)), decode_tps)
            )
            self.decode_tps_stats.add(decode_tps)
            self.decode_history.append(TpsPoint(end_t, decode_tps))
        e2e_tps = _finite(event.e2e_tps)
        if e2e_tps is not None:
            self.e2e_tps_stats.add(e2e_tps)


class FleetState:
    """The state of one run, built only from events. Create one, feed it with ``apply``."""

    def __init__(self) -> None:
        self.run_id: str | None = None
        self.run_name: str | None = None
        self.started_t: float | None = None
        self.finished_t: float | None = None
        self.status: RunStatus | None = None  # None until RunStarted
        self.finish_message: str | None = None
        self.total_requests: int | None = None
        self.endpoints: dict[str, EndpointState] = {}  # in the order RunStarted listed them
        self.configuration: dict[str, EndpointConfig] = {}  # what each server said at start
        self.gpus: dict[int, GpuTrack] = {}  # by GPU index, whether or not an endpoint names it
        self.last_t: float | None = None  # the latest moment any event speaks of
        self.dropped = 0  # events naming an unknown endpoint, or arriving before RunStarted
        self.version = 0  # bumped by every event applied
        self.figures = LeaderboardFold()  # the run's leaderboard, every endpoint's rows
        self._handlers: dict[type, Callable[[Any], bool]] = {
            RunStarted: self._on_run_started,
            PhaseStarted: self._on_phase_started,
            PhaseFinished: self._on_phase_finished,
            RequestFinished: self._on_request,
            TokenProgress: self._on_progress,
            GpuSample: self._on_gpu,
            ServerSample: self._on_server,
            SamplesSkipped: self._on_samples_skipped,
            EndpointStatus: self._on_status,
            RunFinished: self._on_run_finished,
        }

    # ---- reducer

    def apply(self, event: Event | SamplesSkipped) -> None:
        handler = self._handlers.get(type(event))
        if handler is None or not handler(event):
            self.dropped += 1
            return
        self.version += 1
        at = _finished_t(event) if type(event) is RequestFinished else event.t
        if self.last_t is None or at > self.last_t:
            self.last_t = at

    def apply_all(self, events: Iterable[Event | SamplesSkipped]) -> None:
        for event in events:
            self.apply(event)

    def _endpoint(self, endpoint_id: str) -> EndpointState | None:
        endpoint = self.endpoints.get(endpoint_id)
        if endpoint is not None:
            endpoint.version += 1
        return endpoint

    def _gpu(self, gpu: int) -> GpuTrack:
        track = self.gpus.get(gpu)
        if track is None:
            track = self.gpus[gpu] = GpuTrack(gpu)
        return track

    def _on_run_started(self, event: RunStarted) -> bool:
        # A second RunStarted starts over; GPU telemetry, which outlives runs, is kept.
        self.run_id, self.run_name = event.run_id, event.run_name
        self.started_t, self.finished_t = event.t, None
        self.status, self.finish_message = "running", None
        self.total_requests = event.total_requests
        self.configuration = {c.endpoint_id: c for c in event.configuration}
        self.figures = LeaderboardFold()
        self.endpoints = {
            info.id: EndpointState(
                info,
                (p for p in event.phases if p.endpoint_id == info.id),
                self._gpu(info.gpu) if info.gpu is not None else None,
                self.figures,
            )
            for info in event.endpoints
        }
        return True

    def _on_phase_started(self, event: PhaseStarted) -> bool:
        endpoint = self._endpoint(event.endpoint_id)
        if endpoint is not None:
            endpoint._on_phase_started(event)
        return endpoint is not None

    def _on_phase_finished(self, event: PhaseFinished) -> bool:
        endpoint = self._endpoint(event.endpoint_id)
        if endpoint is not None:
            endpoint._on_phase_finished(event)
        return endpoint is not None

    def _on_request(self, event: RequestFinished) -> bool:
        endpoint = self._endpoint(event.endpoint_id)
        if endpoint is not None:
            endpoint._on_request(event)
        return endpoint is not None

    def _on_progress(self, event: TokenProgress) -> bool:
        endpoint = self._endpoint(event.endpoint_id)
        if endpoint is not None:
            endpoint._on_progress(event)
        return endpoint is not None

    def _on_server(self, event: ServerSample) -> bool:
        endpoint = self._endpoint(event.endpoint_id)
        if endpoint is not None:
            endpoint._on_server(event)
        return endpoint is not None

    def _on_status(self, event: EndpointStatus) -> bool:
        endpoint = self._endpoint(event.endpoint_id)
        if endpoint is not None:
            endpoint._on_status(event)
        return endpoint is not None

    def _on_samples_skipped(self, event: SamplesSkipped) -> bool:
        if event.gpu is not None:
            self._gpu(event.gpu).samples += event.count
            return True
        endpoint = self._endpoint(event.endpoint_id or "")
        if endpoint is not None:
            endpoint.server_samples += event.count
        return endpoint is not None

    def _on_gpu(self, event: GpuSample) -> bool:
        self._gpu(event.gpu).apply(event)
        return True

    def _on_run_finished(self, event: RunFinished) -> bool:
        if self.status is None:
            return False
        self.finished_t = event.t
        self.status = event.status
        self.finish_message = event.message
        for endpoint in self.endpoints.values():
            endpoint.current_phase = None
            endpoint._end_transient()
            endpoint.version += 1
        return True

    # ---- run read-outs

    @property
    def requests_done(self) -> int:
        return sum(e.requests_done for e in self.endpoints.values())

    @property
    def requests_ok(self) -> int:
        return sum(e.requests_ok for e in self.endpoints.values())

    @property
    def requests_incomplete(self) -> int:
        return sum(e.requests_incomplete for e in self.endpoints.values())

    @property
    def errors(self) -> int:
        return sum(e.requests_error for e in self.endpoints.values())

    @property
    def live_tokens_per_s(self) -> float:
        """All endpoints' live token rates together (transient; 0 when nothing streams)."""
        return sum(e.live_tokens_per_s or 0.0 for e in self.endpoints.values() if e.streaming)

    def elapsed_s(self, now: float) -> float | None:
        if self.started_t is None:
            return None
        end = self.finished_t if self.finished_t is not None else now
        return max(0.0, end - self.started_t)

    def progress_fraction(self, now: float | None = None) -> float:
        """Requests done over requests planned; with duration-bound phases, the mean phase progress."""
        if self.finished_t is not None and self.status == "complete":
            return 1.0
        if self.total_requests is not None:
            return (
                min(1.0, self.requests_done / self.total_requests) if self.total_requests else 0.0
            )
        phases = [p for e in self.endpoints.values() for p in e._phases.values()]
        if not phases:
            return 0.0
        return sum(p.fraction(now) for p in phases) / len(phases)

    def eta_s(self, now: float) -> float | None:
        """Seconds until the slowest endpoint still working is done; None while unknown."""
        if self.started_t is None:
            return None
        if self.finished_t is not None:
            return 0.0
        eta = 0.0
        for endpoint in self.endpoints.values():
            if endpoint.status in _QUIET_STATUSES:
                continue
            left = endpoint.eta_s(now)
            if left is None:
                return None
            eta = max(eta, left)
        return eta

    def gpu_for(self, endpoint_id: str) -> GpuTrack | None:
        endpoint = self.endpoints.get(endpoint_id)
        return endpoint.gpu if endpoint else None

    def gpu_stale(self, gpu: int, now: float, max_age_s: float = TELEMETRY_STALE_S) -> bool:
        track = self.gpus.get(gpu)
        return track is None or track.stale(now, max_age_s)

    def board(self) -> Board:
        """The run's leaderboard with what its figures need (endpoints, planned load levels)."""
        endpoints = tuple(self.endpoints.values())
        suites = dict.fromkeys(s for e in endpoints for s in e.suites())
        return Board(
            endpoints=tuple(e.info for e in endpoints),
            rows=self.figures.rows(self.endpoints, suites),
            levels=self.figures.levels(self.endpoints),
            planned_loads=tuple(
                dict.fromkeys(p.load for e in endpoints for p in e.phase_progress())
            ),
        )

    # ---- digest

    def summary(self) -> dict[str, Any]:
        """A JSON-ready digest of everything durable (no TokenProgress effect, no recent windows).

        Floats are rounded to 10 significant digits so that sums taken in another order (a replay
        that sorts rows by time) compare equal.
        """
        return {
            "run": {
                "run_id": self.run_id,
                "run_name": self.run_name,
                "started_t": self.started_t,
                "finished_t": self.finished_t,
                "status": self.status,
                "message": self.finish_message,
                "total_requests": self.total_requests,
                "requests_done": self.requests_done,
                "requests_ok": self.requests_ok,
                "requests_incomplete": self.requests_incomplete,
                "errors": self.errors,
            },
            "endpoints": [_endpoint_digest(e) for e in self.endpoints.values()],
            "gpus": [_gpu_digest(self.gpus[g]) for g in sorted(self.gpus)],
        }


# ---- summary helpers -------------------------------------------------------------------------


def _r(x: float | None) -> float | None:
    if x is None:
        return None
    return float(f"{x:.10g}")


def _stats_digest(s: StatsSummary) -> dict[str, Any]:
    return {
        "n": s.n,
        "mean": _r(s.mean),
        "std": _r(s.std),
        "ci95_low": _r(s.ci95_low),
        "ci95_high": _r(s.ci95_high),
    }


def _endpoint_digest(e: EndpointState) -> dict[str, Any]:
    quality = {
        name: {
            suite: _stats_digest(stats)
            for suite in sorted(e.suites())
            if (stats := e.quality_stats(suite, name)).n
        }
        for name in SCORE_NAMES
    }
    return {
        "id": e.id,
        "label": e.info.label,
        "model": e.info.model,
        "status": e.status,
        "planned_requests": e.planned_requests,
        "requests_ok": e.requests_ok,
        "requests_incomplete": e.requests_incomplete,
        "requests_error": e.requests_error,
        "requests_suspect": e.requests_suspect,
        "phases": [
            {
                "phase_index": p.phase_index,
                "suite": p.suite,
                "concurrency": p.concurrency,
                "rate_rps": p.rate_rps,
                "state": p.state,
                "requests_done": p.requests_done,
                "errors": p.errors,
                "output_tokens": p.output_tokens,
                "wall_s": _r(p.wall_s),
                "throughput_tps": _r(p.throughput_tps),
            }
            for p in e.phase_progress()
        ],
        "throughput": [
            {
                "load": row.load.label,
                "phases": row.phases,
                "output_tokens": row.output_tokens,
                "wall_s": _r(row.wall_s),
                "throughput_tps": _r(row.throughput_tps),
            }
            for row in e.throughput_by_load()
        ],
        "ttft_p50_all_s": _r(e.ttft_p50_all_s),
        "itl_p50_all_s": _r(e.itl_p50_all_s),
        "decode_tps": _stats_digest(e.decode_tps_stats.summary()),
        "e2e_tps": _stats_digest(e.e2e_tps_stats.summary()),
        "quality": {name: by_suite for name, by_suite in quality.items() if by_suite},
        "quality_overall": {
            name: _stats_digest(stats)
            for name in sorted(SCORE_NAMES)
            if (stats := e.quality_overall_stats(name)).n
        },
        "leaderboard": [_leader_digest(row) for row in e.leaderboard()],
        "last_error": None
        if e.last_error is None
        else {
            "t": e.last_error.t,
            "kind": e.last_error.kind,
            "message": e.last_error.message,
        },
        "server_samples": e.server_samples,
        "server_latest_t": e.server_latest.t if e.server_latest else None,
        "gpu": e.info.gpu,
    }


def _leader_digest(row: LeaderRow) -> dict[str, Any]:
    return {
        "suite": row.suite,
        "concurrency": row.concurrency,
        "rate_rps": row.rate_rps,
        "requests": row.requests,
        "ok": row.ok,
        "incomplete": row.incomplete,
        "errors": row.errors,
        "suspect": row.suspect,
        "quality": {name: _stats_digest(row.score(name)) for name in sorted(row.quality)},
        "decode_tps": _stats_digest(row.decode_tps),
        "e2e_tps": _stats_digest(row.e2e_tps),
        "tokens_out_mean": _r(row.tokens_out_mean),
        "ttft_p50_s": _r(row.ttft_p50_s),
        "throughput_tps": _r(row.throughput_tps),
        "full_load_share": _r(row.full_load_share),
    }


def _gpu_digest(track: GpuTrack) -> dict[str, Any]:
    latest = track.latest
    return {
        "gpu": track.gpu,
        "samples": track.samples,
        "first_vram_mib": track.first_vram_mib,
        "last_vram_mib": track.last_vram_mib,
        "latest_t": latest.t if latest else None,
        "latest_power_w": latest.power_w if latest else None,
        "latest_util_gpu_pct": latest.util_gpu_pct if latest else None,
    }

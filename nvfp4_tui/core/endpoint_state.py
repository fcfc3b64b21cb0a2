"""EndpointState: everything the events say about one endpoint.

Counts, bounded rings of recent requests and history points, its phases' progress and ETA,
and the transient live decode rate that ``TokenProgress`` sets. ``FleetState.apply`` is the only
writer: it hands each event that names this endpoint to ``step``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable

from nvfp4_tui.core.events import (
    HISTORY_LEN,
    SUSPECT_ERROR_KIND,
    EndpointInfo,
    EndpointStatus,
    EndpointStatusKind,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RunFinished,
    ServerSample,
    TokenProgress,
)
from nvfp4_tui.core.figures.context import CONTEXT_SUITE_PREFIX, LadderSent, LadderTally
from nvfp4_tui.core.figures.leaderboard import (
    LeaderboardFold,
    LeaderRow,
    LevelRow,
    PhaseFacts,
    RequestFacts,
)
from nvfp4_tui.core.figures.metric_stats import MetricStatsFold
from nvfp4_tui.core.figures.scores import DEFAULT_SCORE, SCORE_NAMES
from nvfp4_tui.core.figures.timings import RequestTimings, decode_span, is_outlier
from nvfp4_tui.core.gpu_track import TELEMETRY_STALE_S, GpuTrack
from nvfp4_tui.core.phase_track import PhaseTrack
from nvfp4_tui.core.readouts import (
    AnswerText,
    ErrorInfo,
    PhaseProgress,
    PhaseRef,
    RequestRow,
    ServerPoint,
    TpsPoint,
    TtftPoint,
)
from nvfp4_tui.core.slo import Load, LoadTracker
from nvfp4_tui.core.stats import StatsSummary, finite, peak
from nvfp4_tui.core.timing_doubt import timing_doubt

RECENT_REQUESTS_LEN = 100
RECENT_DECODE_N = 20  # decode tok/s shown when nothing streams: pooled over the last N requests
# The live decode rate pools this many seconds of progress: at 144 tok/s, 5 s of one stream is
# ~700 tokens, so a chunk more or less moves it by well under 1%.
DECODE_WINDOW_S = 5.0
# Fewer decoding stream-seconds than this in the window say nothing yet (a stream just began).
MIN_DECODE_STREAM_S = 0.5
LIVE_MAX_AGE_S = 2.0  # a live rate older than this (runner stalled, pipe dropped) is not "now"
QUIET_STATUSES = frozenset({"done", "down", "error"})  # nothing streams, no ETA to wait for

# The events that name an endpoint (by endpoint_id).
EndpointEvent = (
    PhaseStarted | PhaseFinished | RequestFinished | TokenProgress | ServerSample | EndpointStatus
)


def request_end_t(event: RequestFinished, time_scale: float = 1.0) -> float:
    """When the request ended: RequestFinished.t is when it was sent, on the run's real
    timeline, and its e2e_s is in modelled seconds (``time_scale`` times real ones)."""
    e2e_s = finite(event.e2e_s)
    return event.t + e2e_s / time_scale if e2e_s is not None else event.t


class EndpointState:
    """Everything known about one endpoint. Attributes are for reading only; ``apply`` writes."""

    def __init__(
        self,
        info: EndpointInfo,
        plans: Iterable[PhasePlan],
        gpu: GpuTrack | None,
        figures: LeaderboardFold | None = None,
        unscored: frozenset[str] = frozenset(),
    ) -> None:
        self.info = info
        self.unscored = unscored  # suites never scored (RunStarted.unscored)
        # The run's leaderboard, shared by every endpoint of it (FleetState.figures).
        self.figures = figures if figures is not None else LeaderboardFold()
        self.metric_stats = MetricStatsFold()  # every statistic of every metric, per level
        self.ladder = LadderTally()  # the context ladder's rungs, per level (detail screen)
        self.gpu = gpu  # shared with FleetState.gpus; None when the endpoint names no GPU index
        plans = tuple(plans)
        # Goodput, SLO attainment, throughput per load level, knee, capacity (nvfp4_tui.core.slo).
        self.load = LoadTracker(plans)
        self.status_reported: EndpointStatusKind | None = None
        self.status_message: str | None = None
        self._phases: dict[int, PhaseTrack] = {
            index: PhaseTrack(
                index, p.suite, p.concurrency, p.requests, p.duration_s, p.rate_rps, info.time_scale
            )
            for index, p in enumerate(plans)
        }
        self.planned_requests: int | None = (
            sum(p.planned_requests or 0 for p in self._phases.values())
            if all(p.planned_requests is not None for p in self._phases.values())
            else None
        )
        self.current_phase: PhaseRef | None = None
        self.last_load: Load | None = None  # the load level of the phase running or last run
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
        # Client TTFT over time, to chart beside the server's own (server_history).
        self.ttft_history: deque[TtftPoint] = deque(maxlen=HISTORY_LEN)
        # E2E of the last requests that did not fail: how long one takes, for the ETA.
        self._e2e_recent_s: deque[float] = deque(maxlen=RECENT_DECODE_N)
        # (load level, decode tokens, decode seconds) of the last requests that did not fail.
        self._decode_recent: deque[tuple[Load, float, float]] = deque(maxlen=RECENT_DECODE_N)
        self.last_error: ErrorInfo | None = None
        self.last_answer: AnswerText | None = None
        self.recent_requests: deque[RequestRow] = deque(maxlen=RECENT_REQUESTS_LEN)
        self.server_latest: ServerSample | None = None
        self.server_history: deque[ServerPoint] = deque(maxlen=HISTORY_LEN)
        self.server_samples = 0
        # The run's peaks of the server's gauges: what a finished pane shows, not the last scrape.
        self.kv_cache_peak_pct: float | None = None
        self.requests_running_peak: float | None = None
        self.requests_waiting_peak: float | None = None
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
    def done_t(self) -> float | None:
        """When the last phase finished, once the endpoint is done."""
        if self.status != "done":
            return None
        return max((p.finished.t for p in self._phases.values() if p.finished), default=None)

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
        """The big number, while a phase runs: the live per-stream rate, else the decode tok/s
        pooled over the last few requests at the phase's load level that did not fail. None
        between phases and after the last (the pane then shows the figures per level)."""
        phase = self.current_phase
        if phase is None:
            return None
        live = self.live_decode_tps(now)
        return live if live is not None else self.recent_decode_tps(phase.load)

    def recent_decode_tps(self, load: Load | None = None) -> float | None:
        """The decode tok/s pooled over the last requests (at ``load``) that did not fail: their
        tokens after the first chunk over their seconds decoding (``figures.timings``)."""
        recent = [(t, s) for level, t, s in self._decode_recent if load is None or level == load]
        seconds = math.fsum(s for _, s in recent)
        return math.fsum(t for t, _ in recent) / seconds if seconds > 0 else None

    def level_timings(self, load: Load) -> RequestTimings | None:
        """The timed requests at one load level, every suite together."""
        return self.figures.level_timings(self.id, load)

    def decode_outlier(self, row: RequestRow) -> bool:
        """Whether a request decoded more than ``timings.OUTLIER_FACTOR`` times faster than its
        level's median request: a burst, not a decode speed."""
        timings = self.level_timings(Load.of(row.concurrency, self._rate_of(row.phase_index)))
        return timings is not None and is_outlier(row.decode_tps, timings.decode().p50_tps)

    def quality_stats(self, suite: str, score_name: str = DEFAULT_SCORE) -> StatsSummary:
        """The running quality on one suite, every load level together."""
        return self.figures.suite_quality(self.id, suite, score_name)

    def suites(self) -> tuple[str, ...]:
        """Suites in plan order, then any seen only in requests."""
        seen = dict.fromkeys(p.suite for p in self._phases.values())
        seen.update(
            dict.fromkeys(suite for eid, suite, _, _ in self.figures.cells() if eid == self.id)
        )
        return tuple(seen)

    def scored_suites(self) -> tuple[str, ...]:
        """``suites()`` less those whose answers are never scored."""
        return tuple(suite for suite in self.suites() if suite not in self.unscored)

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

    @property
    def timing_doubt_s(self) -> float | None:
        """The worst timing doubt of its finished phases (``core.timing_doubt``), or None."""
        return max(
            (
                doubt
                for phase in self._phases.values()
                if phase.finished is not None and (doubt := timing_doubt(phase.finished))
            ),
            default=None,
        )

    def eta_s(self, now: float) -> float | None:
        """Seconds until every phase is over (``PhaseTrack.remaining_s``); None if unknown."""
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

    # ---- reducer steps

    def step(self, event: EndpointEvent | RunFinished) -> None:
        """Fold in one event of this endpoint, or the run's end. Only ``FleetState.apply``
        calls this: it also keeps the versions and the run's clock."""
        match event:
            case PhaseStarted():
                self._on_phase_started(event)
            case PhaseFinished():
                self._on_phase_finished(event)
            case RequestFinished():
                self._on_request(event)
            case TokenProgress():
                self._on_progress(event)
            case ServerSample():
                self._on_server(event)
            case EndpointStatus():
                self._on_status(event)
            case RunFinished():
                self.current_phase = None
                self._end_transient()

    def _end_transient(self, in_flight: int | None = 0) -> None:
        self.in_flight = in_flight
        self.live_tokens_per_s = None
        self.live_t = None
        self._decode_window.clear()

    def _phase(self, index: int, suite: str, concurrency: int) -> PhaseTrack:
        phase = self._phases.get(index)
        if phase is None:
            # Not in the plan (a plan-less import, or a runner that changed its mind): track it.
            phase = self._phases[index] = PhaseTrack(index, suite, concurrency, None, None)
        return phase

    def _on_phase_started(self, event: PhaseStarted) -> None:
        phase = self._phase(event.phase_index, event.suite, event.concurrency)
        phase.started_t = event.t
        if self.first_phase_t is None or event.t < self.first_phase_t:
            self.first_phase_t = event.t
        self.current_phase = PhaseRef(
            event.suite, event.concurrency, event.phase_index, event.t, phase.rate_rps
        )
        self.last_load = self.current_phase.load
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
        if event.status in QUIET_STATUSES:
            self._end_transient()

    def _on_progress(self, event: TokenProgress) -> None:
        self.in_flight = event.in_flight
        self.live_t = event.t
        self.live_tokens_per_s = finite(event.tokens_per_s)
        decode_s = finite(event.decode_s)
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
        self.kv_cache_peak_pct = _peak(self.kv_cache_peak_pct, event.kv_cache_pct)
        self.requests_running_peak = _peak(self.requests_running_peak, event.requests_running)
        self.requests_waiting_peak = _peak(self.requests_waiting_peak, event.requests_waiting)
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
        if event.suite.startswith(CONTEXT_SUITE_PREFIX):
            self.ladder.add(LadderSent.of(event))
        end_t = request_end_t(event, self.info.time_scale)
        self.load.add(event)
        phase = self._phases.get(event.phase_index)
        rate_rps = phase.rate_rps if phase is not None else None
        self.metric_stats.add_request(event, Load.of(event.concurrency, rate_rps))
        self.figures.add_request(
            RequestFacts(
                self.id,
                event.suite,
                event.prompt_id,
                event.concurrency,
                rate_rps,
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
        # A suspect row (a legacy script's silent failure, or a token count its stream
        # contradicts) is counted apart from errors, as the leaderboard and the report count it.
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
                if (value := finite(getattr(event, name))) is not None
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
        e2e_s = finite(event.e2e_s)
        if e2e_s is not None:
            self._e2e_recent_s.append(e2e_s)
        ttft_s = finite(event.ttft_s)
        if ttft_s is not None:
            self.ttft_history.append(TtftPoint(event.t + ttft_s, ttft_s))
        decode_tps = finite(event.decode_tps)
        if decode_tps is not None:
            span = decode_span(event.e2e_s, event.ttft_s, decode_tps)
            load = Load.of(event.concurrency, self._rate_of(event.phase_index))
            self._decode_recent.append((load, decode_tps * span, span))
            self.decode_history.append(TpsPoint(end_t, decode_tps))


def _peak(highest: float | None, value: float | None) -> float | None:
    return peak(highest, finite(value))  # a NaN gauge from a broken server is no peak

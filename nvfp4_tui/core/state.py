"""FleetState: the pure reducer of the event stream that every view (live, follow, replay) reads.

``FleetState.apply(event)`` is its one entry: it folds one event in, handing each endpoint's
events to that ``EndpointState`` (core/endpoint_state.py) and each GPU's samples to its
``GpuTrack`` (core/gpu_track.py); what they show are the frozen values of core/readouts.py. The
reducer does no I/O, never reads the clock and imports nothing outside ``core``. Methods that
need the time take ``now`` (the live clock, or the replay position). History lives in bounded
ring buffers, so memory stays flat over a long run (``slo``'s per-phase token spans grow with a
phase's requests, until it ends).

Durable versus transient: ``TokenProgress`` and ``ClientHealth`` are never persisted, so what
they set (requests in flight, the live token rate, live points of the decode history, the load
generator's own health) is transient and is reset when a phase, an endpoint or the run ends.
Everything else depends only on the persisted events, and not on the order rows were recorded
in, so a replay of a snapshot compares equal to the live run it recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from nvfp4_tui.core.endpoint_state import (
    QUIET_STATUSES,
    EndpointEvent,
    EndpointState,
    request_end_t,
)
from nvfp4_tui.core.events import (
    BenchmarkSuite,
    ClientHealth,
    EndpointConfig,
    EndpointInfo,
    EndpointStatus,
    Event,
    GpuSample,
    PhaseFinished,
    PhaseStarted,
    ProbeFinished,
    RequestFinished,
    RunFinished,
    RunStarted,
    RunStatus,
    SamplesSkipped,
    ServerSample,
    TokenProgress,
)
from nvfp4_tui.core.figures.board import Board
from nvfp4_tui.core.figures.leaderboard import LeaderboardFold
from nvfp4_tui.core.gpu_track import GpuKey, GpuKeys, GpuTrack


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
        self.benchmarks: tuple[BenchmarkSuite, ...] = ()  # the run's dataset suites
        # By node and index, whether or not an endpoint names the GPU: each node has a GPU 0.
        self.gpus: dict[GpuKey, GpuTrack] = {}
        self._gpu_keys = GpuKeys()  # which card a sample names, under the run's endpoints
        self.last_t: float | None = None  # the latest moment any event speaks of
        self.dropped = 0  # events naming an unknown endpoint, or arriving before RunStarted
        self.version = 0  # bumped by every event applied
        self.figures = LeaderboardFold()  # the run's leaderboard, every endpoint's rows
        self.client_health: dict[int, ClientHealth] = {}  # the latest of each sending process
        self._handlers: dict[type, Callable[[Any], bool]] = {
            RunStarted: self._on_run_started,
            PhaseStarted: self._on_endpoint_event,
            PhaseFinished: self._on_endpoint_event,
            RequestFinished: self._on_endpoint_event,
            ProbeFinished: self._on_probe,
            TokenProgress: self._on_endpoint_event,
            ClientHealth: self._on_client_health,
            GpuSample: self._on_gpu,
            ServerSample: self._on_endpoint_event,
            SamplesSkipped: self._on_samples_skipped,
            EndpointStatus: self._on_endpoint_event,
            RunFinished: self._on_run_finished,
        }

    # ---- reducer

    def apply(self, event: Event | SamplesSkipped) -> None:
        handler = self._handlers.get(type(event))
        if handler is None or not handler(event):
            self.dropped += 1
            return
        self.version += 1
        if type(event) is ClientHealth:
            return  # the client's clock, not the run's: a replay, which never has it, ends alike
        at = event.t
        if type(event) is RequestFinished:
            endpoint = self.endpoints.get(event.endpoint_id)
            at = request_end_t(event, 1.0 if endpoint is None else endpoint.info.time_scale)
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

    def _gpu(self, gpu: int, node: str = "") -> GpuTrack:
        key = (node, gpu)
        track = self.gpus.get(key)
        if track is None:
            track = self.gpus[key] = GpuTrack(gpu, node)
        return track

    def _endpoint_gpu(self, info: EndpointInfo) -> GpuTrack | None:
        key = self._gpu_keys.endpoint(info)
        return None if key is None else self._gpu(key[1], key[0])

    def _sampled_gpu(self, gpu: int, host: str | None) -> GpuTrack:
        node, index = self._gpu_keys.sampled(gpu, host)
        return self._gpu(index, node)

    def _on_run_started(self, event: RunStarted) -> bool:
        # A second RunStarted starts over; GPU telemetry, which outlives runs, is kept.
        self.run_id, self.run_name = event.run_id, event.run_name
        self.started_t, self.finished_t = event.t, None
        self.status, self.finish_message = "running", None
        self.total_requests = event.total_requests
        self.configuration = {c.endpoint_id: c for c in event.configuration}
        self.benchmarks = event.benchmarks
        self.figures = LeaderboardFold()
        self._gpu_keys = GpuKeys.of(event.endpoints)
        self.endpoints = {
            info.id: EndpointState(
                info,
                (p for p in event.phases if p.endpoint_id == info.id),
                self._endpoint_gpu(info),
                self.figures,
                frozenset(event.unscored),
            )
            for info in event.endpoints
        }
        return True

    def _on_endpoint_event(self, event: EndpointEvent) -> bool:
        endpoint = self._endpoint(event.endpoint_id)
        if endpoint is None:
            return False
        endpoint.step(event)
        return True

    def _on_client_health(self, event: ClientHealth) -> bool:
        if self.status not in (None, "running"):
            return False  # the run is over: nothing is sent any more
        self.client_health[event.pid] = event
        return True

    def _on_probe(self, event: ProbeFinished) -> bool:
        # Kept out of every figure: a probe is known, not folded in (a failed one is also the
        # endpoint's first error row, which is).
        return event.endpoint_id in self.endpoints

    def _on_samples_skipped(self, event: SamplesSkipped) -> bool:
        if event.gpu is not None:
            self._sampled_gpu(event.gpu, event.host).samples += event.count
            return True
        endpoint = self._endpoint(event.endpoint_id or "")
        if endpoint is not None:
            endpoint.server_samples += event.count
        return endpoint is not None

    def _on_gpu(self, event: GpuSample) -> bool:
        self._sampled_gpu(event.gpu, event.host).apply(event)
        return True

    def _on_run_finished(self, event: RunFinished) -> bool:
        if self.status is None:
            return False
        self.finished_t = event.t
        self.status = event.status
        self.finish_message = event.message
        self.client_health.clear()
        for endpoint in self.endpoints.values():
            endpoint.step(event)
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
        phases = [p for e in self.endpoints.values() for p in e.phase_progress(now)]
        if not phases:
            return 0.0
        return sum(p.fraction for p in phases) / len(phases)

    def eta_s(self, now: float) -> float | None:
        """Seconds until the slowest endpoint still working is done; None while unknown."""
        if self.started_t is None:
            return None
        if self.finished_t is not None:
            return 0.0
        eta = 0.0
        for endpoint in self.endpoints.values():
            if endpoint.status in QUIET_STATUSES:
                continue
            left = endpoint.eta_s(now)
            if left is None:
                return None
            eta = max(eta, left)
        return eta

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
            benchmarks=self.benchmarks,
        )

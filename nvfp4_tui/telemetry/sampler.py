"""GPU sampling: a worker thread per GpuSource, and the sources a profile asks for.

NVML and urllib block, so ``GpuSampler`` calls each source in a thread of its own (one slow
server delays no other's samples) and hands each call's samples to a callback (its owner bridges
to asyncio with ``loop.call_soon_threadsafe``). A source that raises is reported once, then
retried at a slower pace until it answers again; one whose call outlasts its own bounds is named
(by one watch thread) while it lasts; the threads end only through ``stop``.
``plan_gpu_telemetry`` turns each endpoint's ``telemetry`` setting into sources plus the one-line
messages to show about what could not be set up;
``telemetry_for_run`` adds the simulator's source and the GPUs resolved on this box.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial

from nvfp4_tui.config.plan import LaunchPlan
from nvfp4_tui.config.profile import Endpoint, Profile
from nvfp4_tui.config.telemetry_choice import TelemetryKind
from nvfp4_tui.core.events import GpuSample, ServerSample
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.telemetry.dcgm import DcgmSource
from nvfp4_tui.telemetry.nvml import NvmlSource, TelemetryUnavailable, endpoint_port, resolve_gpu
from nvfp4_tui.telemetry.prometheus_query import (
    MAX_LABEL_CHARS,
    PrometheusQuerySource,
    PrometheusUnavailable,
)
from nvfp4_tui.telemetry.simulated import SimGpuSource
from nvfp4_tui.telemetry.source import GpuSource, ReportsServers

Telemetry = GpuSample | ServerSample


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


# A call still running after this is stuck past its own bounds (a reply's deadline plus one read
# of urllib's timeout, or an NVML call that hangs): named on screen while it lasts.
SLOW_CALL_S = 6.0


@dataclass(slots=True)
class _SourceState:
    source: GpuSource
    failing: bool = False
    next_try_s: float = 0.0  # monotonic; only used while failing
    named_slow: bool = False  # said to be slow since its last call that returned in time
    calling_since: float | None = None  # monotonic, while a call runs


class GpuSampler:
    """Samples each source at ``rate_hz`` in a daemon thread of its own, so that a slow source
    delays only its own samples; it owns and closes the sources."""

    def __init__(
        self,
        sources: Sequence[GpuSource],
        on_samples: Callable[[list[Telemetry]], None],
        *,
        rate_hz: float = 2.0,
        on_error: Callable[[str], None] | None = None,
        retry_interval_s: float = 10.0,
        slow_call_s: float = SLOW_CALL_S,
    ) -> None:
        if rate_hz <= 0:
            raise ValueError(f"rate_hz must be > 0, got {rate_hz}")
        self._states = [_SourceState(s) for s in sources]
        self._on_samples = on_samples
        self._on_error = on_error
        self._period_s = 1.0 / rate_hz
        self._retry_interval_s = max(retry_interval_s, self._period_s)
        self._slow_call_s = slow_call_s
        self._stop = threading.Event()
        self._last_round = False
        self._threads = [
            threading.Thread(target=self._run, args=(state,), name=f"gpu-sampler-{i}", daemon=True)
            for i, state in enumerate(self._states)
        ]
        self._threads.append(threading.Thread(target=self._watch, name="gpu-watch", daemon=True))
        self._lock = threading.Lock()  # the callback and the error channel, one thread at a time
        self._callback_failing = False
        self._started = False

    def start(self) -> None:
        self._started = True
        for thread in self._threads:
            thread.start()

    def stop(self, timeout_s: float = 2.0, *, last_round: bool = False) -> bool:
        """Ask the threads to end and wait up to ``timeout_s`` in all; True when they have. A
        source stuck in a call is closed by its thread once that call returns. ``last_round``:
        sample every source once more first, so a run's telemetry ends with the cards as the run
        left them (idle), not as they were in its last busy second."""
        self._last_round = last_round
        self._stop.set()
        if not self._started:  # never started: nobody else will close the sources
            for state in self._states:
                self._close(state)
            return True
        deadline = time.monotonic() + timeout_s
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not self.running

    @property
    def running(self) -> bool:
        return any(thread.is_alive() for thread in self._threads)

    def _run(self, state: _SourceState) -> None:
        next_tick = time.monotonic()
        try:
            while not self._stop.is_set():
                self._sample(state)
                now = time.monotonic()
                next_tick += self._period_s
                if now > next_tick:  # a slow call skips the ticks it overran
                    next_tick = now
                self._stop.wait(next_tick - now)
            if self._last_round:
                self._sample(state)
        finally:
            self._close(state)

    def _close(self, state: _SourceState) -> None:
        try:
            state.source.close()
        except Exception as exc:
            self._report(f"closing {state.source!r}: {_one_line(exc)}")

    def _sample(self, state: _SourceState) -> None:
        if state.failing and time.monotonic() < state.next_try_s:
            return
        started = state.calling_since = time.monotonic()
        samples: list[Telemetry] = []
        try:
            source = state.source
            samples.extend(source.sample(time.time()))
            if isinstance(source, ReportsServers):
                samples.extend(source.server_samples(time.time()))
        except Exception as exc:
            if not state.failing:
                self._report(_one_line(exc))
            state.failing = True
            state.next_try_s = time.monotonic() + self._retry_interval_s
        else:
            state.failing = False
        finally:
            state.calling_since = None
        if time.monotonic() - started < self._slow_call_s:
            state.named_slow = False
        if samples:
            self._deliver(samples)

    def _watch(self) -> None:
        """Names each source whose call has run past ``slow_call_s``, once per stuck spell."""
        while not self._stop.wait(self._slow_call_s / 4):
            now = time.monotonic()
            for state in self._states:
                since = state.calling_since
                if since is not None and now - since >= self._slow_call_s and not state.named_slow:
                    state.named_slow = True
                    self._report(
                        f"{state.source!r}: no answer after {self._slow_call_s:g} s; its GPUs "
                        "have no new samples until it answers (the other sources go on)"
                    )

    def _deliver(self, samples: list[Telemetry]) -> None:
        with self._lock:
            try:
                self._on_samples(samples)
            except Exception as exc:
                if not self._callback_failing:
                    self._report_locked(f"GPU sample callback failed: {_one_line(exc)}")
                self._callback_failing = True
            else:
                self._callback_failing = False

    def _report(self, message: str) -> None:
        with self._lock:
            self._report_locked(message)

    def _report_locked(self, message: str) -> None:
        if self._on_error is None:
            return
        # The error channel itself failing must not end sampling.
        with contextlib.suppress(Exception):
            self._on_error(message)


@dataclass(frozen=True)
class GpuTelemetryPlan:
    """What ``plan_gpu_telemetry`` set up: sources to sample, one-line messages to show, and the
    GPU index each endpoint resolved to on this box (UUIDs and ``"auto"`` included)."""

    sources: list[GpuSource] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    endpoint_gpus: dict[str, int] = field(default_factory=dict)


def plan_gpu_telemetry(
    profile: Profile, open_nvml: Callable[[], NvmlSource] = NvmlSource.open
) -> GpuTelemetryPlan:
    """Sources for every endpoint's ``telemetry``, each kind by its entry in ``PLANNERS``:
    "nvml" shares one NvmlSource restricted to the GPUs the profile names (all of them when
    none names one), "dcgm:URL" one DcgmSource per URL, "prometheus:URL" one
    PrometheusQuerySource per server; "none" and "sim" have no entry (the simulator's source is
    plugged in by its owner)."""
    plan = GpuTelemetryPlan()
    planners: dict[TelemetryKind, Planner] = {
        **PLANNERS,
        "nvml": partial(_plan_nvml, open_nvml=open_nvml),
    }
    for kind, planner in planners.items():
        endpoints = [e for e in profile.endpoints if e.telemetry.kind == kind]
        if endpoints:
            planner(endpoints, plan)
    return plan


def by_url(endpoints: Iterable[Endpoint]) -> dict[str, list[Endpoint]]:
    """The endpoints whose telemetry is read from a URL, by that URL."""
    grouped: dict[str, list[Endpoint]] = {}
    for endpoint in endpoints:
        if endpoint.telemetry.url is not None:
            grouped.setdefault(endpoint.telemetry.url, []).append(endpoint)
    return grouped


def _given_gpus(endpoints: Iterable[Endpoint], plan: GpuTelemetryPlan) -> None:
    """The GPU index each endpoint names outright is the one its samples carry."""
    for endpoint in endpoints:
        if isinstance(endpoint.gpu, int):
            plan.endpoint_gpus[endpoint.id] = endpoint.gpu


def _plan_dcgm(endpoints: list[Endpoint], plan: GpuTelemetryPlan) -> None:
    for url, exported in by_url(endpoints).items():
        plan.sources.append(DcgmSource(url, _dcgm_gpus(exported, plan)))
        _given_gpus(exported, plan)


def _plan_prometheus_servers(endpoints: list[Endpoint], plan: GpuTelemetryPlan) -> None:
    for url, scraped in by_url(endpoints).items():
        source = PrometheusQuerySource(url, scraped)
        plan.sources.append(source)
        _plan_prometheus(source, plan)


def telemetry_for_run(plan: LaunchPlan) -> tuple[LaunchPlan, list[GpuSource], list[str]]:
    """GPU sources for the plan's endpoints ("sim" ones sampled from their simulator), and the
    plan with every endpoint's GPU resolved to the index its samples carry (UUIDs and "auto"
    found through NVML)."""
    telemetry = plan_gpu_telemetry(plan.profile)
    plan = plan.with_gpus(telemetry.endpoint_gpus)
    sources = list(telemetry.sources)
    simulated = [
        e for e in plan.profile.endpoints if e.telemetry.kind == "sim" and e.sim is not None
    ]
    if simulated:
        sources.append(SimGpuSource.for_endpoints(simulated))
    return plan, sources, list(telemetry.messages)


def _plan_nvml(
    endpoints: list[Endpoint],
    plan: GpuTelemetryPlan,
    open_nvml: Callable[[], NvmlSource] = NvmlSource.open,
) -> None:
    try:
        source = open_nvml()
    except TelemetryUnavailable as exc:
        plan.messages.append(str(exc))
        return
    selected: set[int] = set()
    for endpoint in endpoints:
        if endpoint.gpu is None:
            continue
        index = resolve_gpu(endpoint, source)
        if index is None or index >= source.gpu_count:
            plan.messages.append(_unresolved(endpoint, index, source.gpu_count))
            continue
        selected.add(index)
        plan.endpoint_gpus[endpoint.id] = index
    if any(e.gpu is not None for e in endpoints) and not selected:
        source.close()
        return
    source.select(selected or None)
    plan.sources.append(source)


def _plan_prometheus(source: PrometheusQuerySource, plan: GpuTelemetryPlan) -> None:
    """Each endpoint's GPU index as its samples will carry it: given, or the index of the card
    its UUID names, asked of Prometheus once (a run whose server is down goes on without)."""
    _given_gpus(source.endpoints, plan)
    named = [e for e in source.endpoints if isinstance(e.gpu, str)]
    if not named:
        return
    try:
        found = source.gpu_indices()
    except PrometheusUnavailable as exc:
        plan.messages.append(str(exc))
        return
    except Exception as exc:
        # A reply no check foresaw fails this server's endpoints only: the run goes on without
        # their GPU indices, and says why.
        reason = outside_line(_one_line(exc), MAX_LABEL_CHARS) or type(exc).__name__
        plan.messages.append(f"{source!r}: GPU indices not read: {reason}")
        return
    plan.endpoint_gpus.update(found)
    for endpoint in named:
        if endpoint.id not in found:
            plan.messages.append(
                f"endpoint {endpoint.id}: gpu = {endpoint.gpu!r}: no DCGM series in "
                f"{source!r} with that UUID on node {endpoint.node!r}"
            )


def _unresolved(endpoint: Endpoint, index: int | None, gpu_count: int) -> str:
    prefix = f"endpoint {endpoint.id}: gpu = {endpoint.gpu!r}"
    if index is not None:
        return f"{prefix} not found: NVML sees {gpu_count} GPU(s), indices 0-{gpu_count - 1}"
    if endpoint.gpu == "auto":
        port = endpoint_port(endpoint.url)
        return f"{prefix}: no GPU process found serving port {port} on this host"
    return f"{prefix}: no GPU with that UUID on this host"


def _dcgm_gpus(endpoints: list[Endpoint], plan: GpuTelemetryPlan) -> list[int | str] | None:
    gpus: list[int | str] = []
    for endpoint in endpoints:
        if endpoint.gpu is None:
            return None
        if endpoint.gpu == "auto":
            plan.messages.append(
                f"endpoint {endpoint.id}: gpu = 'auto' needs nvml telemetry; "
                "set an index or UUID for DCGM"
            )
            continue
        gpus.append(endpoint.gpu)
    return gpus or None


Planner = Callable[[list[Endpoint], GpuTelemetryPlan], None]
# How each kind of telemetry read on this host or from a URL becomes sources (and each
# endpoint's GPU index): a new kind is an entry here beside its name in config.telemetry_choice.
PLANNERS: dict[TelemetryKind, Planner] = {
    "nvml": _plan_nvml,
    "dcgm": _plan_dcgm,
    "prometheus": _plan_prometheus_servers,
}

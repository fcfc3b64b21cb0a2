"""GPU sampling: one worker thread polling every GpuSource, and the sources a profile asks for.

NVML and urllib block, so ``GpuSampler`` calls them in its own thread and hands each round's
samples to a callback (its owner bridges to asyncio with ``loop.call_soon_threadsafe``). A source
that raises is reported once, then retried at a slower pace until it answers again; the thread
itself only ends through ``stop``. ``plan_gpu_telemetry`` turns each endpoint's ``telemetry``
setting into sources plus the one-line messages to show about what could not be set up;
``telemetry_for_run`` adds the simulator's source and the GPUs resolved on this box.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from nvfp4_tui.config.plan import LaunchPlan
from nvfp4_tui.config.profile import Endpoint, Profile
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


@dataclass(slots=True)
class _SourceState:
    source: GpuSource
    failing: bool = False
    next_try_s: float = 0.0  # monotonic; only used while failing


class GpuSampler:
    """Samples its sources at ``rate_hz`` in a daemon thread; it owns and closes the sources."""

    def __init__(
        self,
        sources: Sequence[GpuSource],
        on_samples: Callable[[list[Telemetry]], None],
        *,
        rate_hz: float = 2.0,
        on_error: Callable[[str], None] | None = None,
        retry_interval_s: float = 10.0,
    ) -> None:
        if rate_hz <= 0:
            raise ValueError(f"rate_hz must be > 0, got {rate_hz}")
        self._states = [_SourceState(s) for s in sources]
        self._on_samples = on_samples
        self._on_error = on_error
        self._period_s = 1.0 / rate_hz
        self._retry_interval_s = max(retry_interval_s, self._period_s)
        self._stop = threading.Event()
        self._last_round = False
        self._thread = threading.Thread(target=self._run, name="gpu-sampler", daemon=True)
        self._callback_failing = False

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 2.0, *, last_round: bool = False) -> bool:
        """Ask the thread to end and wait up to ``timeout_s``; True when it has ended. A source
        stuck in a call is closed by the thread once that call returns. ``last_round``: sample
        every source once more first, so a run's telemetry ends with the cards as the run left
        them (idle), not as they were in its last busy second."""
        self._last_round = last_round
        self._stop.set()
        if self._thread.ident is None:  # never started: nobody else will close the sources
            self._close_sources()
        elif self._thread.is_alive():
            self._thread.join(timeout_s)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        next_tick = time.monotonic()
        try:
            while not self._stop.is_set():
                self._round()
                now = time.monotonic()
                next_tick += self._period_s
                if now > next_tick:  # a slow round skips the ticks it overran
                    next_tick = now
                self._stop.wait(next_tick - now)
            if self._last_round:
                self._round(last=True)
        finally:
            self._close_sources()

    def _close_sources(self) -> None:
        for state in self._states:
            try:
                state.source.close()
            except Exception as exc:
                self._report(f"closing {state.source!r}: {_one_line(exc)}")

    def _round(self, *, last: bool = False) -> None:
        samples: list[Telemetry] = []
        for state in self._states:
            if self._stop.is_set() and not last:
                return
            if state.failing and time.monotonic() < state.next_try_s:
                continue
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
        if samples:
            self._deliver(samples)

    def _deliver(self, samples: list[Telemetry]) -> None:
        try:
            self._on_samples(samples)
        except Exception as exc:
            if not self._callback_failing:
                self._report(f"GPU sample callback failed: {_one_line(exc)}")
            self._callback_failing = True
        else:
            self._callback_failing = False

    def _report(self, message: str) -> None:
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
    """Sources for every endpoint's ``telemetry``: "nvml" shares one NvmlSource restricted to
    the GPUs the profile names (all of them when none names one), "dcgm:URL" one DcgmSource per
    URL, "prometheus:URL" one PrometheusQuerySource per server, "none" and "sim" nothing (the
    simulator's source is plugged in by its owner)."""
    plan = GpuTelemetryPlan()
    nvml_endpoints = [e for e in profile.endpoints if e.telemetry == "nvml"]
    if nvml_endpoints:
        _plan_nvml(nvml_endpoints, open_nvml, plan)
    by_url: dict[str, list[Endpoint]] = {}
    for endpoint in profile.endpoints:
        if endpoint.telemetry.startswith("dcgm:"):
            by_url.setdefault(endpoint.telemetry.removeprefix("dcgm:"), []).append(endpoint)
    for url, endpoints in by_url.items():
        plan.sources.append(DcgmSource(url, _dcgm_gpus(endpoints, plan)))
        for endpoint in endpoints:
            if isinstance(endpoint.gpu, int):
                plan.endpoint_gpus[endpoint.id] = endpoint.gpu
    by_server: dict[str, list[Endpoint]] = {}
    for endpoint in profile.endpoints:
        if endpoint.telemetry.startswith("prometheus:"):
            by_server.setdefault(endpoint.telemetry.removeprefix("prometheus:"), []).append(
                endpoint
            )
    for url, endpoints in by_server.items():
        source = PrometheusQuerySource(url, endpoints)
        plan.sources.append(source)
        _plan_prometheus(source, plan)
    return plan


def telemetry_for_run(plan: LaunchPlan) -> tuple[LaunchPlan, list[GpuSource], list[str]]:
    """GPU sources for the plan's endpoints ("sim" ones sampled from their simulator), and the
    plan with every endpoint's GPU resolved to the index its samples carry (UUIDs and "auto"
    found through NVML)."""
    telemetry = plan_gpu_telemetry(plan.profile)
    plan = plan.with_gpus(telemetry.endpoint_gpus)
    sources = list(telemetry.sources)
    simulated = [e for e in plan.profile.endpoints if e.telemetry == "sim" and e.sim is not None]
    if simulated:
        sources.append(SimGpuSource.for_endpoints(simulated))
    return plan, sources, list(telemetry.messages)


def gpu_sources_for(profile: Profile) -> tuple[list[GpuSource], list[str]]:
    """The GPU sources the profile's endpoints ask for, and the one-line messages to show."""
    plan = plan_gpu_telemetry(profile)
    return plan.sources, plan.messages


def _plan_nvml(
    endpoints: list[Endpoint], open_nvml: Callable[[], NvmlSource], plan: GpuTelemetryPlan
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
    for endpoint in source.endpoints:
        if isinstance(endpoint.gpu, int):
            plan.endpoint_gpus[endpoint.id] = endpoint.gpu
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

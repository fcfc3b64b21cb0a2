"""One recorded run: the runner, the snapshot writer and the telemetry samplers wired together.

A session is what `run --headless`, the UI's worker process and `run --detach` all execute; they
differ only in who else subscribes to the events (a progress printer, a pipe to the UI, nobody).

A snapshot part that cannot be written (a full disk, a directory gone read-only) stops the run at
once: the rest of it could not be kept either. The run ends ``aborted`` with a RunFinished whose
message says why, and the parts already written stay readable.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp

from nvfp4_tui.bench.heap import TRIM_INTERVAL_S, release_free_heap
from nvfp4_tui.bench.outage import ServerDeaths
from nvfp4_tui.bench.provenance import (
    Config,
    clean_text,
    configuration,
    endpoint_configs,
    gpu_identities,
    probe_servers,
    profile_sha256,
)
from nvfp4_tui.bench.runner import Emit, Runner
from nvfp4_tui.bench.shards import ShardedRunner, worker_count
from nvfp4_tui.config.keys import key_routes
from nvfp4_tui.config.plain import to_plain
from nvfp4_tui.config.profile import Profile
from nvfp4_tui.config.suites import Suite
from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.events import (
    Event,
    GpuSample,
    PhaseFinished,
    PhaseStarted,
    RunFinished,
    RunOutcome,
    RunStarted,
    ServerSample,
    TokenProgress,
)
from nvfp4_tui.core.plain_text import one_line
from nvfp4_tui.store.manifest import SnapshotError
from nvfp4_tui.store.reader import new_run_id
from nvfp4_tui.store.writer import PartWriteError, SnapshotWriter
from nvfp4_tui.telemetry.prometheus import MetricsStatus, PrometheusScraper, scrape_loop
from nvfp4_tui.telemetry.sampler import GpuSampler
from nvfp4_tui.telemetry.source import GpuSource

FLUSH_INTERVAL_S = 0.5
# The last poll of /metrics after the run: above the scraper's own 2 s timeout.
FINAL_METRICS_POLL_S = 3.0
# How long the run waits for its GPU sources to say what their cards are (NVML answers in
# milliseconds; a simulated card is an HTTP request away).
GPU_IDENTITY_TIMEOUT_S = 2.0


@dataclass
class SessionResult:
    status: RunOutcome
    snapshot: Path
    messages: list[str] = field(default_factory=list)
    down: dict[str, str] = field(default_factory=dict)  # endpoint id -> why it ended down
    every_endpoint_down: bool = False  # the run ended on its own because no endpoint was up
    # Endpoints whose server died during the run (down after passing its health check).
    died: dict[str, str] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """The process's exit code for this run (``nvfp4_tui.core.exit_codes``)."""
        if self.status == "complete":
            return exit_codes.SERVER_DIED if self.died else exit_codes.OK
        return exit_codes.ALL_DOWN if self.every_endpoint_down else exit_codes.STOPPED

    def down_summary(self) -> str:
        """Lines naming the endpoints that ended the run down and why ("" when none did)."""
        if not self.down:
            return ""
        lines = [
            f"{endpoint_id:<16} was down: {one_line(why)}" for endpoint_id, why in self.down.items()
        ]
        if self.every_endpoint_down:
            lines.append(f"every endpoint was down: exit {exit_codes.ALL_DOWN}")
        elif self.status == "complete" and self.died:
            named = ", ".join(self.died)
            lines.append(f"a server died during the run ({named}): exit {exit_codes.SERVER_DIED}")
        return "".join(line + "\n" for line in lines)


def resolved_profile(profile: Profile) -> dict[str, Any]:
    """The profile as run, for the manifest: plain values, secrets never present (only env names)."""
    return {
        "path": str(profile.path),
        "run": to_plain(profile.run),
        "endpoints": [asdict(e) for e in profile.endpoints],
    }


def tls_warnings(profile: Profile) -> list[str]:
    """One loud line per https endpoint whose certificate will not be checked."""
    return [
        f"warning: TLS certificate verification is OFF for endpoint {e.id} ({e.url}): "
        "anyone on the path can read or alter its traffic (verify_tls = false in the profile)"
        for e in profile.endpoints
        if not e.verify_tls and e.url.startswith("https:")
    ]


class Session:
    """Runs a profile once, recording every event to a snapshot under ``out_root``."""

    def __init__(
        self,
        profile: Profile,
        suites: dict[str, Suite],
        out_root: Path,
        *,
        subscribers: Sequence[Emit] = (),
        gpu_sources: Sequence[GpuSource] = (),
        on_message: Callable[[str], None] | None = None,
        run_id: str | None = None,
    ) -> None:
        self.profile = profile
        self.run_id = run_id or new_run_id(profile.run.name, datetime.now(UTC))
        resolved = resolved_profile(profile)
        self.writer = SnapshotWriter(
            out_root, self.run_id, {"profile": resolved, "profile_sha256": profile_sha256(resolved)}
        )
        self.deaths = ServerDeaths()
        self.subscribers: list[Emit] = [self.writer.add, self.deaths, *subscribers]
        self.gpu_sources = list(gpu_sources)
        self.on_message = on_message or (lambda _m: None)
        self._metrics_stop = asyncio.Event()  # set when the run is over: one last poll
        # The runner's RunFinished, held until the last telemetry is in: it closes the stream.
        self._finished: RunFinished | None = None
        # While the run polls /metrics, an endpoint is also polled once in each phase as soon
        # as its streams decode, and at once when the phase ends: a level shorter than the poll
        # interval still gets its server's gauges read while it ran (running, KV cache), and
        # what the server observed in it is not counted in the next.
        self._scraper: PrometheusScraper | None = None
        self._phase_polls: set[asyncio.Task[None]] = set()
        self._decoding_polled: set[str] = set()  # endpoints polled in their phase's decode
        workers = worker_count(profile.run.workers, len(profile.endpoints))
        self.runner = (
            Runner(profile, suites, self.run_id, self.emit)
            if workers == 1
            else ShardedRunner(profile, suites, self.run_id, self.emit, workers)
        )

    @property
    def snapshot_path(self) -> Path:
        return self.writer.path

    def emit(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            self._finished = event
            return
        self._publish(event)
        if isinstance(event, PhaseStarted):
            self._decoding_polled.discard(event.endpoint_id)
        elif isinstance(event, PhaseFinished):
            self._poll_in_phase(event.endpoint_id)
        elif (
            isinstance(event, TokenProgress)
            and event.decode_tokens
            and event.endpoint_id not in self._decoding_polled
        ):
            self._decoding_polled.add(event.endpoint_id)
            self._poll_in_phase(event.endpoint_id)

    def _poll_in_phase(self, endpoint_id: str) -> None:
        if self._scraper is not None:
            task = asyncio.create_task(self._poll_now(self._scraper, endpoint_id))
            self._phase_polls.add(task)
            task.add_done_callback(self._phase_polls.discard)

    async def _poll_now(self, scraper: PrometheusScraper, endpoint_id: str) -> None:
        sample = await scraper.scrape_endpoint(endpoint_id)
        if sample is not None:
            self.emit(sample)

    def _publish(self, event: Event) -> None:
        for subscriber in self.subscribers:
            subscriber(event)

    def _emit_all(self, events: Iterable[Event]) -> None:
        for event in events:
            self.emit(event)

    def open(self) -> None:
        """Create the snapshot directory; raises SnapshotError before anything runs."""
        self.writer.open()

    async def run(self) -> SessionResult:
        loop = asyncio.get_running_loop()
        messages: list[str] = []

        def note(message: str) -> None:
            messages.append(message)
            self.on_message(message)

        def on_gpu_samples(samples: list[GpuSample | ServerSample]) -> None:
            loop.call_soon_threadsafe(self._emit_all, samples)

        # Which variable's key goes to which host (never the key), then the TLS warnings.
        for message in [*key_routes(self.profile), *tls_warnings(self.profile)]:
            note(message)
        run_task = asyncio.create_task(self._configure_then_run(note))

        def on_write_error(error: SnapshotError) -> None:
            note(str(error))
            if isinstance(error, PartWriteError) and not run_task.done():
                self.runner.stop_reason = f"run stopped: the snapshot cannot be written: {error}"
                run_task.cancel()

        sampler = GpuSampler(self.gpu_sources, on_samples=on_gpu_samples, on_error=note)
        # Telemetry starts with the run, after the configuration probes: a sample before
        # RunStarted names an endpoint no reader knows yet.
        started = asyncio.Event()
        self.subscribers.append(
            lambda event: started.set() if isinstance(event, RunStarted) else None
        )

        async def sample_once_started() -> None:
            await started.wait()
            sampler.start()
            await self._scrape_server_metrics(note)

        side_tasks = [
            asyncio.create_task(
                self.writer.flush_periodically(FLUSH_INTERVAL_S, on_error=on_write_error)
            ),
            asyncio.create_task(sample_once_started()),
            asyncio.create_task(_release_heap_periodically()),
        ]
        status: RunOutcome = "aborted"
        every_endpoint_down = False
        try:
            status = await run_task
            # Not cancelled: the runner ends aborted on its own only when every endpoint was down.
            every_endpoint_down = status == "aborted"
            # The servers' last observations (the last requests of the last level) come with a
            # last poll of /metrics; the scraper's own timeout bounds it.
            self._metrics_stop.set()
            await asyncio.wait([side_tasks[1]], timeout=FINAL_METRICS_POLL_S)
        except asyncio.CancelledError:
            status = "aborted"
        finally:
            if not run_task.done():
                run_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run_task  # the runner's own clean-up: its RunFinished is recorded
            for task in side_tasks:
                task.cancel()
            for task in side_tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            await asyncio.to_thread(sampler.stop, last_round=True)
            if self._finished is not None:
                # Stamped now: a reader sorts by t, and the run ends with its last observation.
                self._publish(replace(self._finished, t=max(self._finished.t, time.time())))
            try:
                await asyncio.to_thread(self.writer.close, status)
            except SnapshotError as error:
                # What reached the disk stays readable; a reader sees the writer gone.
                note(f"the snapshot could not be finished: {error}")
        return SessionResult(
            status,
            self.snapshot_path,
            messages,
            dict(self.runner.down),
            every_endpoint_down,
            dict(self.deaths.died),
        )

    async def _configure_then_run(self, note: Callable[[str], None]) -> RunOutcome:
        # The probes go first, so that none shares the wire with a timed request; inside the
        # run's task, so that a stop while they wait ends the run like any other stop.
        configuration = await self._record_configuration(note)
        return await self.runner.run(endpoint_configs(configuration))

    async def _record_configuration(self, note: Callable[[str], None]) -> dict[str, Config]:
        """Each endpoint's server, model, KV cache and GPU into the manifest, and returned for
        RunStarted; what cannot be learnt within the probes' timeouts stays None and the run
        goes on regardless."""
        try:
            return await self._probe_configuration()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a hostile reply must never stop the run it describes
            reason = clean_text(str(error), self.runner.secrets)
            note(f"the run's configuration was not recorded: {reason}")
            return {}

    async def _probe_configuration(self) -> dict[str, Config]:
        endpoints = self.profile.endpoints
        async with aiohttp.ClientSession() as http:
            probed = await probe_servers(endpoints, http, secrets=self.runner.secrets)
        try:
            gpus = await asyncio.wait_for(
                asyncio.to_thread(gpu_identities, self.gpu_sources), GPU_IDENTITY_TIMEOUT_S
            )
        except TimeoutError:
            gpus = {}
        recorded = configuration(endpoints, probed, gpus)
        await asyncio.to_thread(self.writer.update_manifest, {"configuration": recorded})
        return recorded

    async def _scrape_server_metrics(self, note: Callable[[str], None]) -> None:
        def on_status(status: MetricsStatus) -> None:
            if status.state != "ok":
                note(f"{status.endpoint_id}: {status.message}")

        # An endpoint whose telemetry is a Prometheus server gets its gauges from there (the GPU
        # sampler reads them): one source per figure.
        direct = [e for e in self.profile.endpoints if e.telemetry.kind != "prometheus"]
        async with aiohttp.ClientSession() as http:
            scraper = self._scraper = PrometheusScraper(
                direct, http, on_status=on_status, secrets=self.runner.secrets
            )
            try:
                async for sample in scrape_loop(scraper, stop=self._metrics_stop, final_poll=True):
                    self.emit(sample)
                await asyncio.gather(*self._phase_polls)
            finally:
                self._scraper = None
                for task in self._phase_polls:
                    task.cancel()


async def _release_heap_periodically() -> None:
    """Keep a long run's resident memory at what it uses (see ``nvfp4_tui.bench.heap``)."""
    while True:
        await asyncio.sleep(TRIM_INTERVAL_S)
        if not await asyncio.to_thread(release_free_heap):
            return

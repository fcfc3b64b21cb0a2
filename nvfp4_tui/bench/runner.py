"""The run plan executed: health checks, warm-up, phases of suites x load levels, events out.

Every endpoint is its own GPU, so all endpoints run at once; within an endpoint, phases run one
after another and a phase keeps exactly N requests in flight (closed loop), or sends them on an
arrival schedule (open loop, ``bench.load``), until its request count or duration is reached or
one of its limits cuts it short. A sweep (``bench.sweep``) ends an endpoint's climb when a stop
rule fires. The runner only emits events; the recorder and the views subscribe.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from nvfp4_tui.bench.client import (
    ChatRequest,
    EndpointClient,
    Measurement,
    Timeouts,
    retryable,
)
from nvfp4_tui.bench.length_fields import exact_length, refusal_probe, refuses_length_fields
from nvfp4_tui.bench.load import (
    OPEN_LOOP_SLOTS,
    OpenLoopResult,
    PhaseLimits,
    TrimWindows,
    phase_schedule,
    run_open_loop,
    schedule_seed,
)
from nvfp4_tui.bench.loop_lag import LoopLagMonitor
from nvfp4_tui.bench.model_time import ModelTime
from nvfp4_tui.bench.outage import EndpointGate
from nvfp4_tui.bench.progress import TokenMeter
from nvfp4_tui.bench.sessions import after, conversations, with_history
from nvfp4_tui.bench.sweep import describe_stop, phase_plan, stop_rule, trace_phase_plan
from nvfp4_tui.bench.verify_backlog import VerifyBacklog, judge_config, parse_tool_calls
from nvfp4_tui.config.context_ladder import Haystack, PromptTokens
from nvfp4_tui.config.datasets import benchmark_record
from nvfp4_tui.config.keys import api_key, run_secrets
from nvfp4_tui.config.levels import load_levels
from nvfp4_tui.config.profile import Endpoint, Profile
from nvfp4_tui.config.suites import Prompt, Suite
from nvfp4_tui.config.trace import TRACE_ARRIVALS
from nvfp4_tui.core.events import (
    ClientHealth,
    EndpointConfig,
    EndpointStatus,
    Event,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    ProbeFinished,
    RequestFinished,
    RunFinished,
    RunOutcome,
    RunStarted,
    TokenProgress,
    measured_fields,
)
from nvfp4_tui.core.outside_text import NO_SECRETS, Secrets, secrets_of
from nvfp4_tui.core.slo import LoadTracker
from nvfp4_tui.scoring.heuristic import score_answer

Emit = Callable[[Event], None]
PROGRESS_INTERVAL_S = 0.25
HEALTH_INTERVAL_S = 1.0  # ClientHealth: each window's lag and CPU, once a second
RETRY_WAIT_CAP_S = 30.0  # the longest Retry-After honoured; a longer one is cut to this
RETRY_BACKOFF_S = 0.5  # the first wait when the server gave no Retry-After; doubles per attempt
WARMUP_MAX_TOKENS = 16
# A probe's purpose: a short ladder prompt whose usage tells the server's tokens per word.
CONTEXT_TOKENS_PURPOSE = "context_tokens"
CALIBRATION_WORDS = 256  # filler words of the second calibration prompt
DECODE_TOKENS = 64  # a ladder answer's least tokens, so its decode tok/s rests on that many
PROBE_REQUEST_INDEX = -1  # a failed warm-up probe's row: before the phase's own requests
ALL_DOWN_MESSAGE = "every endpoint was down"


@dataclass(frozen=True)
class Phase:
    plan: PhasePlan
    index: int
    suite: Suite


def plan_phases(profile: Profile, suites: dict[str, Suite]) -> list[PhasePlan]:
    """Every endpoint's phases: all suites at the first load level, then the next level."""
    run = profile.run
    plans = []
    for endpoint in profile.endpoints:
        slo = endpoint.slo if endpoint.slo is not None else run.slo
        levels = load_levels(run)
        for level, suite_name in itertools.product(levels, run.suites):
            suite = suites[suite_name]
            if suite.trace is not None:  # once, with the first level's suites
                if level == levels[0]:
                    plans.append(trace_phase_plan(endpoint.id, suite, run, slo))
                continue
            count = run.requests * len(suite.prompts) if run.requests is not None else None
            if suite.sessions is not None:  # every conversation once, at each level
                count = len(suite.prompts)
            plans.append(phase_plan(endpoint.id, suite_name, level, count, run, slo))
    return plans


def unfilled_levels(plans: Sequence[PhasePlan], suites: Mapping[str, Suite]) -> list[str]:
    """A warning for each closed-loop phase whose plan has fewer requests than its level holds
    in flight: it never runs at full load. One line per suite and level, as every endpoint's
    plan of them is alike. A phase bounded by time cycles its prompts and is always full."""
    lines: dict[tuple[str, int], str] = {}
    for plan in plans:
        count, level = plan.requests, plan.concurrency
        suite = suites[plan.suite]
        # A session slot holds a conversation: the conversations must fill the level.
        held = suite.sessions.sessions if suite.sessions is not None else count
        if plan.rate_rps is not None or held is None or held >= level:
            continue
        if suite.sessions is not None:
            lines[(plan.suite, level)] = (
                f"warning: phase {plan.suite} c={level}: {held} conversation"
                f"{'s' * (held != 1)}, too few to hold {level} in flight, so it never runs at "
                f"full load; --sessions {level} fills it"
            )
            continue
        prompts = len(suite.prompts)
        lines[(plan.suite, level)] = (
            f"warning: phase {plan.suite} c={level}: its plan has {held} "
            f"request{'s' * (held != 1)} ({prompts} prompt{'s' * (prompts != 1)}), too few "
            f"to hold {level} in flight, so it never runs at full load; "
            f"--requests {-(-level // prompts)} or --duration fills it"
        )
    return list(lines.values())


def _level(plan: PhasePlan) -> tuple[int, float | None]:
    return plan.concurrency, plan.rate_rps


class Runner:
    """Runs a profile's plan against its endpoints and emits the DESIGN.md events."""

    def __init__(
        self,
        profile: Profile,
        suites: dict[str, Suite],
        run_id: str,
        emit: Emit,
        *,
        api_keys: dict[str, str] | None = None,
        verify_tls: bool = True,
        secrets: Secrets = NO_SECRETS,
    ) -> None:
        self.profile = profile
        self.suites = suites
        self.run_id = run_id
        self.emit = emit
        self.api_keys = api_keys or {}
        # Every key the run sends (and ``secrets``, a whole run's when this is one shard of it)
        # is scrubbed from every reply: replies from any endpoint may quote another's key.
        self.secrets = run_secrets(profile) | secrets_of(*self.api_keys.values()) | secrets
        self.verify_tls = verify_tls
        self.plans = plan_phases(profile, suites)
        self.stop_reason: str | None = None  # why the run was cancelled, for its RunFinished
        # Endpoints that ended their run down (health check failed, or an outage given up on),
        # with why, in the order they went down.
        self.down: dict[str, str] = {}
        self._refused_length_fields: set[str] = set()  # endpoints that answered them with 4xx
        # Each endpoint's context (max_model_len), as it said at run start, and how it counts
        # a ladder prompt, as its usage said (a tokenizer may cut our words in three): what
        # the context ladder's rungs are sized by (``Haystack.sized``).
        self.contexts: dict[str, int] = {}
        self._prompt_tokens: dict[str, PromptTokens] = {}
        self._calibrated: set[str] = set()
        self._rung_lengths: dict[tuple[str, int], dict[int | None, str]] = {}
        give_up_s = profile.run.outage_give_up_s
        self._gates = {
            e.id: EndpointGate(e.id, emit, give_up_s=give_up_s) for e in profile.endpoints
        }
        self._paused = False
        self._backlog = VerifyBacklog(judge_config(profile), self.secrets)
        self._loop_lag = LoopLagMonitor()
        self._clients: weakref.WeakSet[EndpointClient] = weakref.WeakSet()

    @property
    def paused(self) -> bool:
        return self._paused

    def pause(self) -> None:
        """Stop sending new requests; those in flight finish and are recorded."""
        self._paused = True
        for gate in self._gates.values():
            gate.pause()
            if not gate.down:  # a down endpoint keeps saying so
                self.emit(EndpointStatus(time.time(), gate.endpoint_id, "paused"))

    def resume(self) -> None:
        self._paused = False
        for gate in self._gates.values():
            gate.resume()
            if not gate.down:
                self.emit(EndpointStatus(time.time(), gate.endpoint_id, "running"))

    async def run(self, configuration: tuple[EndpointConfig, ...] = ()) -> RunOutcome:
        """Run the whole plan, ``configuration`` (what the servers said of themselves) in its
        RunStarted; returns the final status.

        ``aborted`` when every endpoint ended its run down: no endpoint ran its plan, and a run
        that read ``complete`` would tell a script it succeeded. Some endpoints down and others
        fine is ``complete``; ``down`` says which were down.
        """
        self.contexts = {c.endpoint_id: c.max_model_len for c in configuration if c.max_model_len}
        self.emit(
            RunStarted(
                t=time.time(),
                run_id=self.run_id,
                run_name=self.profile.run.name,
                endpoints=tuple(e.info for e in self.profile.endpoints),
                phases=tuple(self.plans),
                configuration=configuration,
                benchmarks=tuple(
                    benchmark_record(
                        name,
                        suite.dataset,
                        suite.scorer,
                        self._temperature(suite),
                        len(suite.prompts),
                    )
                    for name, suite in self.suites.items()
                    if suite.dataset is not None and name in self.profile.run.suites
                ),
                unscored=tuple(
                    name
                    for name in self.profile.run.suites
                    if name in self.suites and self.suites[name].kind == "synthetic"
                ),
            )
        )
        try:
            await self.run_endpoints()
        except asyncio.CancelledError:
            self.emit(RunFinished(time.time(), "aborted", self.stop_reason or "cancelled"))
            raise
        if self.down and len(self.down) == len(self.profile.endpoints):
            message = f"{ALL_DOWN_MESSAGE}: {', '.join(self.down)}"
            self.emit(RunFinished(time.time(), "aborted", message))
            return "aborted"
        self.emit(RunFinished(time.time(), "complete"))
        return "complete"

    async def run_endpoints(self) -> None:
        """Every endpoint's plan at once, between RunStarted and RunFinished (which it leaves to
        its caller: a worker process runs a shard of a run, not a run)."""
        async with self._backlog:
            lag_probe = asyncio.create_task(self._loop_lag.run())
            health = asyncio.create_task(self._report_health())
            tasks = [asyncio.create_task(self._run_endpoint(e)) for e in self.profile.endpoints]
            try:
                await asyncio.gather(*tasks)
            except asyncio.CancelledError:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
            finally:
                lag_probe.cancel()
                health.cancel()

    async def _report_health(self) -> None:
        """This process's ClientHealth every HEALTH_INTERVAL_S until cancelled: its CPU (every
        thread's), its loop's lag and wait for a CPU, and its clients' queues."""
        pid = os.getpid()
        cpu_at, wall_at = time.process_time(), time.perf_counter()
        while True:
            with self._loop_lag.window() as lag:
                await asyncio.sleep(HEALTH_INTERVAL_S)
            cpu_now, wall_now = time.process_time(), time.perf_counter()
            elapsed = wall_now - wall_at
            self.emit(
                ClientHealth(
                    t=time.time(),
                    pid=pid,
                    cpu_pct=100.0 * (cpu_now - cpu_at) / elapsed if elapsed > 0 else None,
                    loop_lag_p99_s=lag.p99_s,
                    loop_lag_max_s=lag.max_s,
                    cpu_wait_s=lag.cpu_wait_s,
                    queued=sum(client.waiting for client in self._clients),
                    in_flight=sum(client.sending for client in self._clients),
                )
            )
            cpu_at, wall_at = cpu_now, wall_now

    def _timeouts(self) -> Timeouts:
        return Timeouts(total_s=self.profile.run.timeout_s)

    def _client(
        self, endpoint: Endpoint, concurrency: int, timeouts: Timeouts | None = None
    ) -> EndpointClient:
        key = api_key(endpoint.api_key_env)
        client = EndpointClient(
            endpoint.url,
            endpoint.model,
            concurrency=concurrency,
            timeouts=timeouts or self._timeouts(),
            api_key=self.api_keys.get(endpoint.id, key),
            verify_tls=self.verify_tls and endpoint.verify_tls,
            limits=self.profile.run.limits,
            secrets=self.secrets,
        )
        self._clients.add(client)  # for its queue in ClientHealth, while it lives
        return client

    async def _run_endpoint(self, endpoint: Endpoint) -> None:
        status = EndpointStatus
        self.emit(status(time.time(), endpoint.id, "waiting"))
        phases = [
            Phase(plan, index, self.suites[plan.suite])
            for index, plan in enumerate(p for p in self.plans if p.endpoint_id == endpoint.id)
        ]
        if not phases:
            self.emit(status(time.time(), endpoint.id, "done"))
            return
        # The probe's client lives as long as the endpoint's run: an outage that begins at the
        # end of one phase is still probed after that phase's client has closed.
        async with self._client(endpoint, 1) as probe:
            healthy, message = await probe.health()
            if not healthy:
                self.down[endpoint.id] = message
                self.emit(status(time.time(), endpoint.id, "down", message))
                await self._record_first_request(endpoint, phases[0])
                return
            first_error = None
            if self.profile.run.warmup:
                self.emit(status(time.time(), endpoint.id, "warmup"))
                first_error = await self._probe(probe, endpoint, phases[0], "warmup")
                if first_error is not None:
                    healthy, message = await probe.health()
                    if not healthy:
                        # It died under its warm-up, as vLLM's engine does on a model it
                        # cannot run: that request is the first phase's only row.
                        why = f"{message} (after its warm-up request: {first_error.error_message})"
                        await self._record_first_request(endpoint, phases[0], first_error)
                        self.down[endpoint.id] = why
                        self.emit(status(time.time(), endpoint.id, "down", why))
                        return
            self.emit(status(time.time(), endpoint.id, "running"))
            tracker = LoadTracker(phase.plan for phase in phases)
            gate = self._gates[endpoint.id]
            gate.probe = probe.health
            if first_error is not None:
                # The warm-up's failure begins the failures a crash may leave (vLLM answers
                # HTTP 500 until it exits): the gate quotes it if the server goes.
                gate.report(first_error)
            stopped = None
            try:
                for phase, following in itertools.zip_longest(phases, phases[1:]):
                    step_ends = following is None or _level(following.plan) != _level(phase.plan)
                    stopped = await self._run_phase(
                        endpoint, phase, tracker, step_ends, first_error
                    )
                    first_error = None
                    if stopped is not None or gate.gave_up is not None:
                        break
                await gate.finish()
            finally:
                await gate.close()
        if gate.gave_up is not None:
            self.down[endpoint.id] = gate.gave_up
            self.emit(status(time.time(), endpoint.id, "down", gate.gave_up))
        else:
            self.emit(status(time.time(), endpoint.id, "done", stopped))

    async def _probe(
        self,
        client: EndpointClient,
        endpoint: Endpoint,
        phase: Phase,
        purpose: str,
        prompt: Prompt | None = None,
    ) -> RequestFinished | None:
        """Send a probe (the warm-up, or a context ladder's calibration) and record it apart
        (``ProbeFinished``); a probe that failed comes back as an error row, since it is often
        the one request that carries the server's own message (a server that dies on its first
        request): the warm-up's is the endpoint's first row."""
        record = await self._measure(
            client,
            endpoint,
            phase,
            prompt or _first_prompt(phase),
            PROBE_REQUEST_INDEX,
            TokenMeter(),
            True,
        )
        self.emit(
            ProbeFinished(
                t=record.t,
                endpoint_id=endpoint.id,
                purpose=purpose,
                status=record.status,
                http_status=record.http_status,
                ttft_s=record.ttft_s,
                e2e_s=record.e2e_s,
                tokens_in=record.tokens_in,
                tokens_out=record.tokens_out,
                tokens_estimated=record.tokens_estimated,
                finish_reason=record.finish_reason,
                error_kind=record.error_kind,
                error_message=record.error_message,
            )
        )
        return record if record.status == "error" else None

    async def _record_first_request(
        self, endpoint: Endpoint, phase: Phase, record: RequestFinished | None = None
    ) -> None:
        """Send the first request of a down endpoint's plan once (or take ``record``, the one
        that found it down), and record it as its phase.

        Without a row, an endpoint down from the start leaves nothing in the requests table and
        its tables read 0 errors. One real attempt records how it fails, with its real kind
        (``connect`` when refused); the rest of the plan is not sent, since a dead fleet would
        otherwise write one identical row per planned request, thousands in a long plan.
        """
        plan = phase.plan
        self.emit(PhaseStarted(time.time(), endpoint.id, plan.suite, plan.concurrency, phase.index))
        # No longer than its health check was given: a server that hangs costs seconds here,
        # not the minutes a request's first-byte timeout allows.
        timeouts = Timeouts(total_s=min(self.profile.run.timeout_s, Timeouts().health_s))
        clock = ModelTime(endpoint.time_scale)
        started = clock.now()
        if record is None:
            async with self._client(endpoint, 1, timeouts) as client:
                record = await self._measure(
                    client, endpoint, phase, _first_prompt(phase), 0, TokenMeter()
                )
        self.emit(record)
        failed = record.status == "error"
        self.emit(
            _phase_finished(
                endpoint.id,
                phase,
                requests=1,
                errors=int(failed),
                output_tokens=0 if failed else record.tokens_out or 0,
                wall_s=clock.now() - started,
                limit="endpoint_down",
            )
        )

    def _temperature(self, suite: Suite) -> float:
        """The suite's own (a benchmark's protocol: HumanEval is greedy), else the run's."""
        return self.profile.run.temperature if suite.temperature is None else suite.temperature

    def _request(
        self, endpoint_id: str, suite: Suite, prompt: Prompt, warmup: bool = False
    ) -> ChatRequest:
        run = self.profile.run
        asked = suite.max_tokens if prompt.asked is None else prompt.asked.tokens_out
        max_tokens = asked if run.max_tokens is None else min(asked, run.max_tokens)
        if warmup:
            max_tokens = WARMUP_MAX_TOKENS
        exact = (
            prompt.asked is not None
            and suite.exact_lengths
            and endpoint_id not in self._refused_length_fields
        )
        extra = exact_length(max_tokens) if exact else None
        # Decode timed over more than a line of codes: vLLM's min_tokens (refused by
        # transformers serve, then sent again without, as a synthetic prompt's are).
        ladder = prompt.haystack is not None and not warmup
        if ladder and endpoint_id not in self._refused_length_fields:
            extra = {"min_tokens": min(DECODE_TOKENS, max_tokens)}
        return ChatRequest(
            messages=prompt.messages(suite.system),
            max_tokens=max_tokens,
            temperature=self._temperature(suite),
            tools=prompt.tools,
            extra_body=extra,
        )

    def _work(self, phase: Phase) -> Iterator[tuple[int, Prompt]]:
        """The phase's requests in order: each prompt `requests` times, or cycling until time is up."""
        prompts = self._sized(phase.plan.endpoint_id, phase.suite.prompts)
        if prompts and (haystack := prompts[0].haystack) is not None:
            # A rung capped to an earlier one's length here (128k and max on a 128K model)
            # would send the costliest prompts twice: it is sent once, under the first.
            sent = self._rung_lengths.setdefault(
                (phase.plan.endpoint_id, phase.plan.concurrency), {}
            )
            if sent.setdefault(haystack.tokens_in, phase.suite.name) != phase.suite.name:
                prompts = ()
        order: Iterator[Prompt]
        if phase.plan.requests is not None:
            # Per prompt as planned: a ladder rung this endpoint's context cannot hold has none.
            count = phase.plan.requests * len(prompts) // max(len(phase.suite.prompts), 1)
            order = itertools.islice(itertools.cycle(prompts), count)
        else:
            order = itertools.cycle(prompts)
        for index, prompt in enumerate(order):
            if prompt.haystack is not None:
                prompt = replace(prompt, haystack=prompt.haystack.sent(f"{phase.index}|{index}"))
            yield index, prompt

    async def _calibrate(self, endpoint: Endpoint, phase: Phase) -> None:
        """Two short prompts of a ladder's kind, one with no filler and one with some: their
        counts tell how this server counts ours, before a rung is sized to its context."""
        first = phase.suite.prompts[0]
        if first.haystack is None:
            return
        known = self._prompt_tokens.get(endpoint.id, PromptTokens())
        # The warm-up's prompt has no filler: with it, only the second is needed.
        words = [0] * (known.fixed is None) + [CALIBRATION_WORDS]
        async with self._client(endpoint, 1) as client:
            for count in words:
                prompt = replace(first, haystack=first.haystack.probe(count))
                await self._probe(client, endpoint, phase, CONTEXT_TOKENS_PURPOSE, prompt)

    def _learn_prompt_tokens(
        self, endpoint_id: str, haystack: Haystack, measurement: Measurement
    ) -> None:
        """How the server counts a ladder prompt, from its count of ``haystack``."""
        if measurement.tokens_in and not measurement.tokens_estimated:
            known = self._prompt_tokens.get(endpoint_id, PromptTokens())
            self._prompt_tokens[endpoint_id] = known.learned(haystack, measurement.tokens_in)

    def _sized(self, endpoint_id: str, prompts: tuple[Prompt, ...]) -> tuple[Prompt, ...]:
        """The prompts as this endpoint is sent them: ladder rungs sized to its context."""
        context = self.contexts.get(endpoint_id)
        tokens = self._prompt_tokens.get(endpoint_id, PromptTokens())
        sized = []
        for prompt in prompts:
            if prompt.haystack is None:
                sized.append(prompt)
            elif (haystack := prompt.haystack.sized(context, tokens)) is not None:
                sized.append(replace(prompt, haystack=haystack))
        return tuple(sized)

    async def _run_phase(
        self,
        endpoint: Endpoint,
        phase: Phase,
        tracker: LoadTracker,
        step_ends: bool = True,
        first_error: RequestFinished | None = None,
    ) -> str | None:
        """Run one phase; returns why the sweep stops after it, or None to go on.

        ``first_error``, a failed warm-up probe's row, is the phase's first row."""
        plan, run = phase.plan, self.profile.run
        if phase.suite.context is not None and endpoint.id not in self._calibrated:
            self._calibrated.add(endpoint.id)
            await self._calibrate(endpoint, phase)
        self.emit(PhaseStarted(time.time(), endpoint.id, plan.suite, plan.concurrency, phase.index))
        # A closed loop holds its concurrency; an open loop's only caps, with no level to hold.
        meter = TokenMeter(plan.concurrency if plan.rate_rps is None else 0)
        totals = {"requests": 0, "errors": 0, "tokens": 0}
        clock = ModelTime(endpoint.time_scale)  # the plan's seconds and the records' are its
        started = clock.now()
        limits = PhaseLimits(run, started, clock.now)
        schedule = None
        if plan.arrivals == TRACE_ARRIVALS:
            schedule = [prompt.at_s or 0.0 for prompt in phase.suite.prompts]
        elif plan.rate_rps is not None:
            schedule = phase_schedule(plan, schedule_seed(run.seed, endpoint.id, phase.index))
        trims = TrimWindows.of(run, plan, schedule)

        def finished(record: RequestFinished) -> None:
            totals["requests"] += 1
            totals["errors"] += record.status == "error"
            limits.errors += record.status == "error"
            if record.status != "error":
                totals["tokens"] += record.tokens_out or 0
            tracker.add(record)
            self.emit(record)

        if first_error is not None:
            finished(first_error)
        slots = plan.concurrency if schedule is None else plan.concurrency or OPEN_LOOP_SLOTS
        sent: OpenLoopResult | None = None
        with self._loop_lag.window() as lag:
            async with self._client(endpoint, slots) as client:
                reporter = asyncio.create_task(self._report_progress(endpoint.id, meter, clock))
                try:
                    if schedule is None:
                        await self._closed_loop(
                            client, endpoint, phase, meter, limits, trims, finished, clock
                        )
                    else:
                        sent = await self._open_loop(
                            client, endpoint, phase, meter, limits, trims, schedule, finished, clock
                        )
                except asyncio.CancelledError:
                    await self._backlog.drain(endpoint.id, cancel=True)
                    raise
                finally:
                    reporter.cancel()
        wall_s = clock.now() - started
        meter.advance()
        await self._backlog.drain(endpoint.id)
        rule = None
        if run.sweep is not None and plan.sweep and step_ends:
            rule = stop_rule(tracker.points(), run.sweep, tracker.targets)
        self.emit(
            _phase_finished(
                endpoint.id,
                phase,
                requests=totals["requests"],
                errors=totals["errors"],
                output_tokens=totals["tokens"],
                wall_s=wall_s,
                full_load_s=min(wall_s, clock.seconds(meter.full_s)) if meter.full_level else None,
                late_requests=sent.late if sent else 0,
                unsent_requests=sent.unsent if sent else 0,
                limit=limits.hit,
                sweep_stop=rule,
                verify_wait_s=clock.seconds(self._backlog.take_held_s(endpoint.id)),
                loop_lag_p99_s=None if lag.p99_s is None else clock.seconds(lag.p99_s),
                loop_lag_max_s=None if lag.max_s is None else clock.seconds(lag.max_s),
                cpu_wait_s=None if lag.cpu_wait_s is None else clock.seconds(lag.cpu_wait_s),
            )
        )
        return describe_stop(rule, tracker.points(), tracker.targets) if rule else None

    async def _closed_loop(
        self,
        client: EndpointClient,
        endpoint: Endpoint,
        phase: Phase,
        meter: TokenMeter,
        limits: PhaseLimits,
        trims: TrimWindows,
        finished: Callable[[RequestFinished], None],
        clock: ModelTime,
    ) -> None:
        """Exactly ``concurrency`` requests in flight until the work, the time or a limit ends."""
        plan = phase.plan
        work = self._work(phase)
        deadline = limits.started + plan.duration_s if plan.duration_s is not None else None
        gate = self._gates[endpoint.id]

        async def send(request_index: int, prompt: Prompt) -> RequestFinished | None:
            """The request, or None when the phase sends no more."""
            if deadline is not None and clock.now() >= deadline:
                return None
            await gate.wait()  # a pause or an outage can outlast the phase's duration
            if deadline is not None and clock.now() >= deadline:
                return None
            if _stops(limits, gate) is not None:
                return None
            limits.sent += 1
            offset_s = clock.now() - limits.started
            trimmed = trims.mark(request_index, offset_s)

            def done(record: RequestFinished, trimmed: bool | None = trimmed) -> None:
                finished(record if trimmed is None else replace(record, trimmed=trimmed))

            return await self._send(client, endpoint, phase, prompt, request_index, meter, done)

        async def worker() -> None:
            for request_index, prompt in work:
                if await send(request_index, prompt) is None:
                    return

        talks = phase.suite.sessions
        sessions = conversations(phase.suite.prompts)

        async def session_worker() -> None:
            for conversation in sessions:
                history: tuple[dict[str, str], ...] = ()
                for number, (request_index, turn) in enumerate(conversation):
                    if number and talks is not None and talks.think_s > 0:
                        await asyncio.sleep(clock.real_s(talks.think_s))
                    record = await send(request_index, with_history(turn, history))
                    if record is None:
                        return
                    if record.status == "error":
                        break  # its next turn would carry a history it never had
                    history = after(history, turn, record)

        slot = worker if talks is None else session_worker

        async def ramped_slot(number: int) -> None:
            if plan.ramp_s:  # slot n of N opens at n / N of the ramp: the level climbs to N
                await asyncio.sleep(clock.real_s(plan.ramp_s * number / plan.concurrency))
            await slot()

        await asyncio.gather(*(ramped_slot(n) for n in range(plan.concurrency)))

    async def _open_loop(
        self,
        client: EndpointClient,
        endpoint: Endpoint,
        phase: Phase,
        meter: TokenMeter,
        limits: PhaseLimits,
        trims: TrimWindows,
        schedule: list[float],
        finished: Callable[[RequestFinished], None],
        clock: ModelTime,
    ) -> OpenLoopResult:
        """Requests sent on ``schedule`` (modelled seconds), each as it falls due; late ones say
        how late."""
        prompts = phase.suite.prompts

        async def send(index: int, due_real_s: float, late_real_s: float) -> None:
            prompt = prompts[index % len(prompts)]
            due_s, late_s = clock.seconds(due_real_s), clock.seconds(late_real_s)

            def done(record: RequestFinished) -> None:
                finished(replace(record, late_s=late_s, trimmed=trims.mark(index, due_s)))

            await self._send(client, endpoint, phase, prompt, index, meter, done)

        gate = self._gates[endpoint.id]

        def stop(sent: int) -> bool:
            limits.sent = sent
            return _stops(limits, gate) is not None

        until_s = phase.plan.duration_s
        return await run_open_loop(
            [clock.real_s(due_s) for due_s in schedule],
            send,
            max_in_flight=phase.plan.concurrency or OPEN_LOOP_SLOTS,
            send_until_s=None if until_s is None else clock.real_s(until_s),
            resume=gate.event,
            stop=stop,
        )

    async def _send(
        self,
        client: EndpointClient,
        endpoint: Endpoint,
        phase: Phase,
        prompt: Prompt,
        request_index: int,
        meter: TokenMeter,
        done: Callable[[RequestFinished], None],
    ) -> RequestFinished:
        """One planned request, resent after a 429 or 503 up to ``run.retries`` times; its last
        attempt's row.

        Every attempt goes to ``done`` as its own row (``attempt`` 0, 1, ...), so a retry never
        hides the fault it answered; the wait honours Retry-After up to ``RETRY_WAIT_CAP_S``.
        """
        gate = self._gates[endpoint.id]
        attempt = 0
        while True:
            record = await self._measure(client, endpoint, phase, prompt, request_index, meter)
            if attempt:
                record = replace(record, attempt=attempt)
            self._backlog.score_then(endpoint.id, phase.suite, prompt, record, done)
            gate.report(record)
            await self._backlog.room(endpoint.id)
            if attempt >= self.profile.run.retries or not retryable(record.http_status):
                return record
            await asyncio.sleep(retry_wait_s(record.retry_after_s, attempt))
            await gate.wait()
            attempt += 1

    async def _measure(
        self,
        client: EndpointClient,
        endpoint: Endpoint,
        phase: Phase,
        prompt: Prompt,
        request_index: int,
        meter: TokenMeter,
        warmup: bool = False,
    ) -> RequestFinished:
        sent_t = time.time()
        request = self._request(endpoint.id, phase.suite, prompt, warmup)
        measurement: Measurement = await client.chat(request, progress=meter)
        if request.extra_body is not None and refuses_length_fields(measurement):
            self._refused_length_fields.add(endpoint.id)
            self.emit(refusal_probe(sent_t, endpoint.id, measurement))
            sent_t = time.time()
            request = self._request(endpoint.id, phase.suite, prompt, warmup)
            measurement = await client.chat(request, progress=meter)
        return self._row(endpoint, phase, prompt, request_index, sent_t, measurement)

    def _row(
        self,
        endpoint: Endpoint,
        phase: Phase,
        prompt: Prompt,
        request_index: int,
        sent_t: float,
        measurement: Measurement,
    ) -> RequestFinished:
        """The row of one measured request, sent at wall time ``sent_t``, scored."""
        # When its bytes went out, in real time: the run's timeline is real, its durations not.
        sent_at = sent_t + measurement.queue_s + (measurement.setup_s or 0.0)
        measurement = ModelTime(endpoint.time_scale).measurement(measurement)
        if prompt.haystack is not None and measurement.status != "error":
            self._learn_prompt_tokens(endpoint.id, prompt.haystack, measurement)
        if prompt.asked is not None and measurement.status == "incomplete":
            # A synthetic prompt asks for its length: an answer that reached it is whole.
            measurement = replace(measurement, status="ok")
        score = None
        if measurement.status != "error":
            tool_calls = parse_tool_calls(measurement.tool_calls_json)
            score = score_answer(phase.suite, prompt, measurement.answer_text, tool_calls)
        return RequestFinished(
            # TTFT and E2E start there: t + e2e_s / time_scale is when it ended.
            t=sent_at,
            endpoint_id=endpoint.id,
            suite=phase.plan.suite,
            prompt_id=prompt.id,
            concurrency=phase.plan.concurrency,
            phase_index=phase.index,
            request_index=request_index,
            score_heuristic=score[0] if score else None,
            score_heuristic_detail=score[1] if score else None,
            tokens_in_asked=prompt.tokens_in_asked,
            turn=prompt.turn,
            tokens_out_asked=prompt.asked.tokens_out if prompt.asked else None,
            **measured_fields(measurement),
        )

    async def _report_progress(self, endpoint_id: str, meter: TokenMeter, clock: ModelTime) -> None:
        last_t = time.perf_counter()
        last = (meter.tokens, meter.decode_tokens, meter.decode_s)
        while True:
            await asyncio.sleep(PROGRESS_INTERVAL_S)
            now = time.perf_counter()
            meter.advance(now)
            tokens, decode_tokens, decode_s = meter.tokens, meter.decode_tokens, meter.decode_s
            self.emit(
                TokenProgress(
                    time.time(),
                    endpoint_id,
                    meter.in_flight,
                    clock.rate((tokens - last[0]) / (now - last_t)),
                    decode_tokens=decode_tokens - last[1],
                    decode_s=clock.seconds(decode_s - last[2]),
                )
            )
            last_t, last = now, (tokens, decode_tokens, decode_s)


def _first_prompt(phase: Phase) -> Prompt:
    """What a warm-up or a down endpoint's one request sends: the phase's first prompt, or for
    a ladder rung a short one of its kind (the rung's own would be cached for its first send)."""
    prompt = phase.suite.prompts[0]
    if prompt.haystack is None:
        return prompt
    return replace(prompt, haystack=prompt.haystack.probe(0))


def _phase_finished(endpoint_id: str, phase: Phase, **totals: Any) -> PhaseFinished:
    """The PhaseFinished of ``phase`` now, with what it counted (``totals``)."""
    plan = phase.plan
    return PhaseFinished(
        t=time.time(),
        endpoint_id=endpoint_id,
        suite=plan.suite,
        concurrency=plan.concurrency,
        phase_index=phase.index,
        **totals,
    )


def _stops(limits: PhaseLimits, gate: EndpointGate) -> str | None:
    """Why the phase sends nothing more: a limit, or an outage the gate gave up on."""
    if gate.gave_up is not None and limits.hit is None:
        limits.hit = "endpoint_down"
    return limits.reached()


def retry_wait_s(retry_after_s: float | None, attempt: int) -> float:
    """Seconds to wait before resending: the server's Retry-After, else exponential backoff."""
    wait_s = retry_after_s if retry_after_s is not None else RETRY_BACKOFF_S * 2**attempt
    return min(wait_s, RETRY_WAIT_CAP_S)

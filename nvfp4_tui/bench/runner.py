"""The run plan executed: health checks, warm-up, phases of suites x concurrency, events out.

Every endpoint is its own GPU, so all endpoints run at once; within an endpoint, phases run one
after another and a phase keeps exactly N requests in flight (closed loop) until its request count
or duration is reached. The runner only emits events; the recorder and the views subscribe.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass

from nvfp4_tui.bench.client import ChatRequest, EndpointClient, Measurement, Timeouts
from nvfp4_tui.bench.progress import TokenMeter
from nvfp4_tui.events import (
    EndpointStatus,
    Event,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RunFinished,
    RunStarted,
    TokenProgress,
)
from nvfp4_tui.profile import Endpoint, Profile
from nvfp4_tui.scoring.heuristic import score_answer
from nvfp4_tui.suites import Prompt, Suite

Emit = Callable[[Event], None]
PROGRESS_INTERVAL_S = 0.25
WARMUP_MAX_TOKENS = 16


@dataclass(frozen=True)
class Phase:
    plan: PhasePlan
    index: int
    suite: Suite


def plan_phases(profile: Profile, suites: dict[str, Suite]) -> list[PhasePlan]:
    """Every endpoint's phases: all suites at the first concurrency level, then the next level."""
    run = profile.run
    plans = []
    for endpoint in profile.endpoints:
        for concurrency, suite_name in itertools.product(run.concurrency, run.suites):
            suite = suites[suite_name]
            count = run.requests * len(suite.prompts) if run.requests is not None else None
            plans.append(PhasePlan(endpoint.id, suite_name, concurrency, count, run.duration_s))
    return plans


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
    ) -> None:
        self.profile = profile
        self.suites = suites
        self.run_id = run_id
        self.emit = emit
        self.api_keys = api_keys or {}
        self.verify_tls = verify_tls
        self.plans = plan_phases(profile, suites)
        self._resume = asyncio.Event()
        self._resume.set()

    @property
    def paused(self) -> bool:
        return not self._resume.is_set()

    def pause(self) -> None:
        """Stop sending new requests; those in flight finish and are recorded."""
        self._resume.clear()
        for endpoint in self.profile.endpoints:
            self.emit(EndpointStatus(time.time(), endpoint.id, "paused"))

    def resume(self) -> None:
        self._resume.set()
        for endpoint in self.profile.endpoints:
            self.emit(EndpointStatus(time.time(), endpoint.id, "running"))

    async def run(self) -> str:
        """Run the whole plan; returns the final status ("complete" or "aborted")."""
        self.emit(
            RunStarted(
                t=time.time(),
                run_id=self.run_id,
                run_name=self.profile.run.name,
                endpoints=tuple(e.info for e in self.profile.endpoints),
                phases=tuple(self.plans),
            )
        )
        tasks = [asyncio.create_task(self._run_endpoint(e)) for e in self.profile.endpoints]
        try:
            await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.emit(RunFinished(time.time(), "aborted", "cancelled"))
            raise
        self.emit(RunFinished(time.time(), "complete"))
        return "complete"

    def _timeouts(self) -> Timeouts:
        return Timeouts(total_s=self.profile.run.timeout_s)

    def _client(self, endpoint: Endpoint, concurrency: int) -> EndpointClient:
        key = os.environ.get(endpoint.api_key_env) if endpoint.api_key_env else None
        return EndpointClient(
            endpoint.url,
            endpoint.model,
            concurrency=concurrency,
            timeouts=self._timeouts(),
            api_key=self.api_keys.get(endpoint.id, key),
            verify_tls=self.verify_tls,
        )

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
        async with self._client(endpoint, 1) as probe:
            healthy, message = await probe.health()
            if not healthy:
                self.emit(status(time.time(), endpoint.id, "down", message))
                return
            if self.profile.run.warmup:
                self.emit(status(time.time(), endpoint.id, "warmup"))
                await probe.chat(self._request(phases[0].suite, phases[0].suite.prompts[0], True))
        self.emit(status(time.time(), endpoint.id, "running"))
        for phase in phases:
            await self._run_phase(endpoint, phase)
        self.emit(status(time.time(), endpoint.id, "done"))

    def _request(self, suite: Suite, prompt: Prompt, warmup: bool = False) -> ChatRequest:
        run = self.profile.run
        max_tokens = (
            suite.max_tokens if run.max_tokens is None else min(suite.max_tokens, run.max_tokens)
        )
        return ChatRequest(
            messages=prompt.messages(suite.system),
            max_tokens=WARMUP_MAX_TOKENS if warmup else max_tokens,
            temperature=run.temperature,
            tools=prompt.tools,
        )

    def _work(self, phase: Phase) -> Iterator[tuple[int, Prompt]]:
        """The phase's requests in order: each prompt `requests` times, or cycling until time is up."""
        prompts = phase.suite.prompts
        if phase.plan.requests is not None:
            order = itertools.islice(itertools.cycle(prompts), phase.plan.requests)
        else:
            order = itertools.cycle(prompts)
        return enumerate(order)

    async def _run_phase(self, endpoint: Endpoint, phase: Phase) -> None:
        plan = phase.plan
        self.emit(PhaseStarted(time.time(), endpoint.id, plan.suite, plan.concurrency, phase.index))
        meter = TokenMeter()
        work = self._work(phase)
        deadline = time.perf_counter() + plan.duration_s if plan.duration_s is not None else None
        totals = {"requests": 0, "errors": 0, "tokens": 0}
        started = time.perf_counter()

        async def worker(client: EndpointClient) -> None:
            for request_index, prompt in work:
                if deadline is not None and time.perf_counter() >= deadline:
                    return
                await self._resume.wait()
                record = await self._measure(client, endpoint, phase, prompt, request_index, meter)
                totals["requests"] += 1
                totals["errors"] += record.status == "error"
                if record.status != "error":
                    totals["tokens"] += record.tokens_out or 0
                self.emit(record)

        async with self._client(endpoint, plan.concurrency) as client:
            reporter = asyncio.create_task(self._report_progress(endpoint.id, meter))
            try:
                await asyncio.gather(*(worker(client) for _ in range(plan.concurrency)))
            finally:
                reporter.cancel()
        wall_s = time.perf_counter() - started
        self.emit(
            PhaseFinished(
                t=time.time(),
                endpoint_id=endpoint.id,
                suite=plan.suite,
                concurrency=plan.concurrency,
                phase_index=phase.index,
                requests=totals["requests"],
                errors=totals["errors"],
                output_tokens=totals["tokens"],
                wall_s=wall_s,
            )
        )

    async def _measure(
        self,
        client: EndpointClient,
        endpoint: Endpoint,
        phase: Phase,
        prompt: Prompt,
        request_index: int,
        meter: TokenMeter,
    ) -> RequestFinished:
        sent_t = time.time()
        meter.in_flight += 1
        try:
            measurement: Measurement = await client.chat(
                self._request(phase.suite, prompt), progress=meter
            )
        finally:
            meter.in_flight -= 1
        score = None
        if measurement.status != "error":
            tool_calls = _parse_tool_calls(measurement.tool_calls_json)
            score = score_answer(phase.suite, prompt, measurement.answer_text, tool_calls)
        return RequestFinished(
            t=sent_t + measurement.queue_s,
            endpoint_id=endpoint.id,
            suite=phase.plan.suite,
            prompt_id=prompt.id,
            concurrency=phase.plan.concurrency,
            phase_index=phase.index,
            request_index=request_index,
            score_heuristic=score[0] if score else None,
            score_heuristic_detail=score[1] if score else None,
            **asdict(measurement),
        )

    async def _report_progress(self, endpoint_id: str, meter: TokenMeter) -> None:
        last_tokens, last_t = meter.tokens, time.perf_counter()
        while True:
            await asyncio.sleep(PROGRESS_INTERVAL_S)
            now = time.perf_counter()
            rate = (meter.tokens - last_tokens) / (now - last_t)
            last_tokens, last_t = meter.tokens, now
            self.emit(TokenProgress(time.time(), endpoint_id, meter.in_flight, rate))


def _parse_tool_calls(tool_calls_json: str | None) -> list[dict] | None:
    if not tool_calls_json:
        return None
    calls = json.loads(tool_calls_json)
    return calls if isinstance(calls, list) else None

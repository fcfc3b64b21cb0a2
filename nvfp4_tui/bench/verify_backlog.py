"""The answers of a run waiting for their verified score (and a judge's), per endpoint, bounded.

Verifying can take a second (a code answer runs its hidden tests in a sandbox) and a judge is a
request to another server; scoring in the background lets a closed loop send its next request at
once, so exactly N stay in flight. Answers that arrive faster than they are checked wait in a
backlog of at most ``VERIFY_BACKLOG`` per endpoint; past it the endpoint's sends wait, and the
phase says for how long (``PhaseFinished.verify_wait_s``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace

import aiohttp

from nvfp4_tui.config.keys import api_key
from nvfp4_tui.config.profile import Profile
from nvfp4_tui.config.suites import Prompt, Suite
from nvfp4_tui.core.events import RequestFinished
from nvfp4_tui.core.outside_text import NO_SECRETS, Secrets, outside_text
from nvfp4_tui.scoring.judge import JudgeConfig, judge_answer
from nvfp4_tui.scoring.verify import score_verified_async, split_reasoning

VERIFY_BACKLOG = 32  # answers of one endpoint waiting for verification before its sends wait


class VerifyBacklog:
    """Scores answers in background tasks and holds an endpoint's sends while too many wait.

    Use it as an async context manager: it holds the judge's HTTP session while the run lasts.
    """

    def __init__(self, judge: JudgeConfig | None, secrets: Secrets = NO_SECRETS) -> None:
        self._judge = judge
        self._secrets = secrets  # the run's keys, scrubbed from the judge's and the tests' words
        self._judge_http: aiohttp.ClientSession | None = None
        self._pending: dict[str, set[asyncio.Task[None]]] = {}
        self._held_s: dict[str, float] = defaultdict(float)

    async def __aenter__(self) -> VerifyBacklog:
        if self._judge is not None:
            self._judge_http = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._judge_http is not None:
            await self._judge_http.close()

    def waiting(self, endpoint_id: str) -> int:
        """How many of the endpoint's answers wait for their scores now."""
        return len(self._pending.get(endpoint_id, ()))

    def score_then(
        self,
        endpoint_id: str,
        suite: Suite,
        prompt: Prompt,
        record: RequestFinished,
        done: Callable[[RequestFinished], None],
    ) -> None:
        """Hand ``record`` to ``done`` once its scores are in, without holding the caller.

        A failed request has nothing to score and goes to ``done`` at once.
        """
        if record.status == "error":
            done(record)
            return

        async def score() -> None:
            verified = None
            judged: tuple[float | None, str | None] = (None, None)
            try:
                verified = await score_verified_async(
                    suite,
                    prompt,
                    record.answer_text,
                    parse_tool_calls(record.tool_calls_json),
                    record.reasoning_text,
                )
                if self._judge is not None and self._judge_http is not None:
                    answer = split_reasoning(record.answer_text)[0]
                    judged = await judge_answer(
                        self._judge_http,
                        self._judge,
                        suite.name,
                        prompt.text,
                        answer,
                        secrets=self._secrets,
                    )
            finally:
                # Cancelled (the run is stopping): the row is still recorded, unverified.
                done(
                    replace(
                        record,
                        score_verified=verified[0] if verified else None,
                        # The reason can quote what the model's code printed: outside text.
                        score_verified_detail=(
                            outside_text(verified[1], self._secrets) if verified else None
                        ),
                        score_judge=judged[0],
                        score_judge_detail=judged[1],
                    )
                )

        pending = self._pending.setdefault(endpoint_id, set())
        task = asyncio.create_task(score())
        pending.add(task)
        task.add_done_callback(pending.discard)

    async def room(self, endpoint_id: str) -> None:
        """Wait while ``VERIFY_BACKLOG`` of the endpoint's answers wait for their scores.

        Answers arriving faster than the sandbox checks them (a fast server, an accelerated
        simulator) would otherwise queue without bound, each holding its text and its task; past
        the cap the endpoint sends at the pace of verification.
        """
        pending = self._pending.get(endpoint_id, set())
        if len(pending) < VERIFY_BACKLOG:
            return
        held_at = time.perf_counter()
        while len(pending) >= VERIFY_BACKLOG:
            await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        self._held_s[endpoint_id] += time.perf_counter() - held_at

    async def drain(self, endpoint_id: str, *, cancel: bool = False) -> None:
        """Wait for the endpoint's scoring in flight (cancelled first when the run stops)."""
        pending = list(self._pending.get(endpoint_id, ()))
        if cancel:
            for task in pending:
                task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def take_held_s(self, endpoint_id: str) -> float:
        """Seconds the endpoint's sends were held since the last call (a phase's wait)."""
        return self._held_s.pop(endpoint_id, 0.0)


def judge_config(profile: Profile) -> JudgeConfig | None:
    """The profile's judge with its key read from the environment, or None when it names none."""
    spec = profile.judge
    if spec is None:
        return None
    key = api_key(spec.api_key_env)
    return JudgeConfig(
        url=spec.url,
        model=spec.model,
        rubrics=spec.rubrics,
        api_key=key,
        timeout_s=spec.timeout_s,
        max_tokens=spec.max_tokens,
    )


def parse_tool_calls(tool_calls_json: str | None) -> list[dict] | None:
    """The tool calls a recorded answer made, as the scorers take them; None when it made none."""
    if not tool_calls_json:
        return None
    calls = json.loads(tool_calls_json)
    return calls if isinstance(calls, list) else None

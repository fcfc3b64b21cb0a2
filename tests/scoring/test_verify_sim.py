"""Simulated models: verified scores separate a strong model from a weak one, and a demo run
records both the heuristic and the verified score in every row and in FleetState."""

from __future__ import annotations

import asyncio
import json
import statistics
from collections import defaultdict
from typing import Any

import aiohttp
import pytest

from nvfp4_tui.bench.runner import Runner
from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.profile import Endpoint, Profile, RunPlan, SimSpec
from nvfp4_tui.config.suites import Prompt, Suite, load_suites
from nvfp4_tui.config.telemetry_choice import Telemetry
from nvfp4_tui.core.events import Event, RequestFinished
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.scoring.verify import score_verified_async
from nvfp4_tui.sim.codebank import SNIPPETS
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.sim.mathbank import known_problem
from nvfp4_tui.store.schema import events_to_frame
from tests.support.digest import digest

SUITES_DIR = BUILTIN_SUITES
SUITES = load_suites(SUITES_DIR, ["english", "japanese", "math", "coding", "design", "tool_call"])
QUALITY = {"strong": 0.95, "weak": 0.25}
SAMPLES = (1, 2)  # request seeds: two answers per prompt and model
TIME_SCALE = 50.0


def sim_endpoint(endpoint_id: str, quality: float, gpu: int) -> Endpoint:
    spec = SimSpec(decode_tps=3000.0, ttft_s=0.01, vram_used_mib=90_000.0, quality=quality, seed=5)
    return Endpoint(
        id=endpoint_id,
        label=endpoint_id,
        url="http://127.0.0.1:1",
        model="current",
        gpu=gpu,
        model_class="moe",
        telemetry=Telemetry("sim"),
        sim=spec,
    )


ENDPOINTS = tuple(sim_endpoint(name, q, i) for i, (name, q) in enumerate(QUALITY.items()))


async def ask(
    session: aiohttp.ClientSession, url: str, suite: Suite, prompt: Prompt, seed: int
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "current",
        "messages": list(prompt.messages(suite.system)),
        "max_tokens": suite.max_tokens,
        "temperature": 0.3,
        "seed": seed,
        "stream": False,
    }
    if prompt.tools:
        body["tools"] = list(prompt.tools)
    async with session.post(f"{url}/v1/chat/completions", json=body) as response:
        assert response.status == 200
        return (await response.json())["choices"][0]["message"]


async def test_a_stronger_simulated_model_gets_higher_verified_scores():
    async with SimFleet(ENDPOINTS, time_scale=TIME_SCALE) as fleet, aiohttp.ClientSession() as s:
        jobs = [
            (name, suite, prompt, fleet.urls[name], seed)
            for name in QUALITY
            for suite in SUITES.values()
            for prompt in suite.prompts
            for seed in SAMPLES
        ]
        messages = await asyncio.gather(*(ask(s, url, su, p, seed) for _, su, p, url, seed in jobs))
    verdicts = await asyncio.gather(
        *(
            score_verified_async(
                suite,
                prompt,
                message.get("content") or "",
                [{"id": c["id"], **c["function"]} for c in message.get("tool_calls") or []],
                message.get("reasoning_content") or "",
            )
            for (_, suite, prompt, _, _), message in zip(jobs, messages, strict=True)
        )
    )
    scores: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (name, suite, _, _, _), verdict in zip(jobs, verdicts, strict=True):
        assert verdict is not None and verdict[0] is not None, verdict
        scores[name, suite.name].append(verdict[0])
    means = {key: statistics.mean(values) for key, values in scores.items()}
    for suite in SUITES:
        assert means["strong", suite] > means["weak", suite], (suite, means)
    strong = statistics.mean(v for (n, _), vs in scores.items() if n == "strong" for v in vs)
    weak = statistics.mean(v for (n, _), vs in scores.items() if n == "weak" for v in vs)
    assert strong > weak + 0.1, (strong, weak)


async def test_a_demo_run_records_both_scores_per_row_and_in_state():
    names = ("math", "coding", "tool_call")
    plan = RunPlan(name="demo", suites=names, requests=1, warmup=False, timeout_s=30.0)
    events: list[Event] = []
    async with SimFleet(ENDPOINTS, time_scale=TIME_SCALE) as fleet:
        profile = Profile(path=SUITES_DIR.parent / "demo.toml", run=plan, endpoints=fleet.endpoints)
        runner = Runner(profile, {n: SUITES[n] for n in names}, "run-verify", events.append)
        assert await asyncio.wait_for(runner.run(), timeout=60) == "complete"
    rows = [e for e in events if isinstance(e, RequestFinished)]
    assert len(rows) == 2 * sum(len(SUITES[n].prompts) for n in names)
    for row in rows:
        assert row.status in ("ok", "incomplete"), row.error_message  # "length" is incomplete
        assert row.score_heuristic is not None and row.score_heuristic_detail
        assert row.score_verified is not None, row.score_verified_detail
        assert row.score_verified_detail
        if row.suite == "coding":
            assert "sandbox:" in row.score_verified_detail
    # The snapshot's requests table carries both scores and their details.
    frame = events_to_frame("requests", rows)
    assert frame["score_verified"].null_count() == 0
    assert frame["score_verified_detail"].null_count() == 0

    state = FleetState()
    state.apply_all(events)
    for endpoint_id in QUALITY:
        endpoint = state.endpoints[endpoint_id]
        for suite in names:
            stats = endpoint.quality_stats(suite, "score_verified")
            assert stats.n == len(SUITES[suite].prompts)
            assert stats.mean is not None and stats.ci95_low is not None
        assert "score_verified" in json.dumps(digest(state))
    summary = {e["id"]: e for e in digest(state)["endpoints"]}
    verified = {name: summary[name]["quality_overall"]["score_verified"] for name in QUALITY}
    assert verified["strong"]["n"] == verified["weak"]["n"] == 9
    assert verified["strong"]["mean"] > verified["weak"]["mean"]


@pytest.mark.parametrize("suite", ["math", "coding"])
def test_the_shipped_prompts_are_the_ones_the_simulator_knows(suite):
    # The worked solutions and code the simulator writes are for these prompts; if a prompt
    # is rewritten, the simulator's answers stop being checkable and the tests above weaken.
    for prompt in SUITES[suite].prompts:
        if suite == "math":
            assert known_problem(prompt.text) is not None, prompt.id
        else:
            assert set(prompt.check.defines) <= {s.name for s in SNIPPETS}, prompt.id

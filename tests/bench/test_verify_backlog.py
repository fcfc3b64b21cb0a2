"""Answers that arrive faster than the sandbox verifies them wait in a bounded backlog."""

from __future__ import annotations

import asyncio

import pytest

from nvfp4_tui.bench import verify_backlog
from nvfp4_tui.bench.runner import Runner
from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.profile import Endpoint, Profile, RunPlan, SimSpec
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.config.telemetry_choice import Telemetry
from nvfp4_tui.core.events import Event, PhaseFinished, RequestFinished
from nvfp4_tui.sim.fleet import SimFleet

SUITES_DIR = BUILTIN_SUITES
CONCURRENCY = 8
BACKLOG = 3
# Per prompt: 24 answers in all, twice what the workers and the backlog can hold at once.
REQUESTS = 8


def fast_endpoint() -> Endpoint:
    # Code answers in a few milliseconds: far faster than the sandbox runs their tests.
    spec = SimSpec(decode_tps=5000.0, ttft_s=0.001, vram_used_mib=90_000.0, quality=0.9, seed=3)
    return Endpoint(
        id="fast",
        label="fast",
        url="http://127.0.0.1:1",
        model="current",
        gpu=0,
        model_class="moe",
        telemetry=Telemetry("sim"),
        sim=spec,
    )


async def test_the_verification_backlog_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verify_backlog, "VERIFY_BACKLOG", BACKLOG)
    suites = load_suites(SUITES_DIR, ["coding"])
    plan = RunPlan(
        name="backlog",
        suites=("coding",),
        concurrency=(CONCURRENCY,),
        requests=REQUESTS,
        warmup=False,
    )
    rows: list[RequestFinished] = []
    waiting: list[int] = []
    phases: list[PhaseFinished] = []

    async with SimFleet((fast_endpoint(),), time_scale=50.0) as fleet:
        profile = Profile(path=SUITES_DIR.parent / "demo.toml", run=plan, endpoints=fleet.endpoints)

        def emit(event: Event) -> None:
            if isinstance(event, RequestFinished):
                rows.append(event)
                waiting.append(runner._backlog.waiting("fast"))
            elif isinstance(event, PhaseFinished):
                phases.append(event)

        runner = Runner(profile, suites, "run-backlog", emit)
        assert await asyncio.wait_for(runner.run(), timeout=120) == "complete"

    assert len(rows) == REQUESTS * len(suites["coding"].prompts)
    assert all(row.score_verified_detail for row in rows)
    # Each of the 8 workers may add its answer before it waits for room.
    assert max(waiting) <= BACKLOG + CONCURRENCY - 1
    # Holding sends lowered the load; the phase says by how much.
    [phase] = phases
    assert phase.verify_wait_s > 0

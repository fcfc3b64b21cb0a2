"""A replay of a recorded live session ends in the state the live run ended with."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from nvfp4_tui.bench.session import Session
from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.sources.base import ResetBatch
from nvfp4_tui.sources.replay import ReplaySource
from nvfp4_tui.telemetry.simulated import SimGpuSource
from tests.support.digest import digest

from .test_one_truth import live_cells, report_cells


async def test_replay_to_the_end_equals_the_live_state(tmp_path: Path) -> None:
    profile = load_profile(DEMO_PROFILE)
    run = replace(
        profile.run,
        suites=("english", "tool_call"),
        concurrency=(1, 2),
        requests=1,
        max_tokens=48,
        warmup=False,
    )
    profile = replace(profile, run=run, endpoints=profile.endpoints[:2])
    suites = load_suites(profile.suite_dirs, run.suites)
    live = FleetState()
    async with SimFleet(profile.endpoints, time_scale=20.0) as fleet:
        session = Session(
            with_urls(profile, fleet.urls),
            suites,
            tmp_path,
            subscribers=[live.apply],
            gpu_sources=[SimGpuSource(fleet.urls.values())],
            run_id="live",
        )
        session.open()
        result = await asyncio.wait_for(session.run(), 90)
    assert result.status == "complete"
    assert live.requests_done == 2 * 2 * sum(len(suites[s].prompts) for s in run.suites)

    replayed = FleetState()
    source = ReplaySource(result.snapshot, speed=None, hold_at_end=False)
    async with asyncio.timeout(30):
        async for batch in source.batches():
            if isinstance(batch, ResetBatch):
                replayed = FleetState()
            replayed.apply_all(batch)
    assert digest(replayed) == digest(live)
    assert replayed.status == "complete"
    # The live run's leaderboard, cell for cell, is the report's of its snapshot.
    assert live_cells(live) == report_cells(result.snapshot)
    assert replayed.gpus and all(track.samples for track in replayed.gpus.values())

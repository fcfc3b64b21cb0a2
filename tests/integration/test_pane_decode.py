"""The big number on a pane is the simulator's decode rate, second after second, at c=1 and c=4.

A run against the simulator (in its own process, as in the demo) is read the way ``--json``
reads it: every pane's figures sampled four times a second. Once a phase has run a few seconds, at
least 90% of the samples must lie within 5% of the simulator's per-stream decode rate at that
concurrency (its schedule, ``sim.schedule.decode_tps_at``, times the clock factor). The number
it replaced, the window's tokens over the streams in flight at its end, failed this by jumping
whenever a request started or ended inside the window.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from nvfp4_tui.bench.runner import Runner
from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.events import Event
from nvfp4_tui.core.figures.pane import pane_figures
from nvfp4_tui.core.figures.scores import DEFAULT_SCORE
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.sim.schedule import decode_tps_at
from tests.integration.fleet_files import endpoint_toml, write_suite

pytestmark = pytest.mark.slow  # two 5 s phases sampled in real time

TIME_SCALE = 3.0  # three times real time: the same schedule in a third of the time
PHASE_S = 5.0  # of sending per phase (the last answers finish after)
# Samples count from SETTLE_S into a phase (the first answers are in prefill) until it stops
# sending at PHASE_S: its last wave then runs with fewer in flight, each of them faster.
SETTLE_S = 2.0
SAMPLE_S = 0.25
WITHIN = 0.05
SHARE = 0.9
LINEUP = (("fast", 144.0), ("dense", 50.0))


def _profile(tmp_path: Path) -> Path:
    write_suite(tmp_path / "suites", "essay", max_tokens=300)
    run = f"""
[run]
name = "pane"
suites = ["essay"]
concurrency = [1, 4]
requests = 0
duration_s = {PHASE_S}
timeout_s = 30
warmup = false
"""
    endpoints = [
        endpoint_toml(eid, gpu, decode_tps=tps, ttft_s=0.1) for gpu, (eid, tps) in enumerate(LINEUP)
    ]
    path = tmp_path / "profile.toml"
    path.write_text(run.replace("requests = 0\n", "") + "".join(endpoints))
    return path


async def _run_sampled(runner: Runner, state: FleetState) -> list[tuple[str, Load, float, float]]:
    """(endpoint, level, seconds into the phase, big number) four times a second."""
    samples: list[tuple[str, Load, float, float]] = []
    task = asyncio.create_task(runner.run())
    async with asyncio.timeout(120):
        while not task.done():
            await asyncio.sleep(SAMPLE_S)
            now = time.time()
            for endpoint in state.endpoints.values():
                phase = endpoint.current_phase
                figures = pane_figures(endpoint, now, DEFAULT_SCORE)
                if phase is None or figures.decode_tps is None:
                    continue
                samples.append((endpoint.id, phase.load, now - phase.started_t, figures.decode_tps))
        assert await task == "complete"
    return samples


def test_the_big_number_is_the_schedules_decode_rate(tmp_path: Path) -> None:
    path = _profile(tmp_path)
    profile = load_profile(path)
    suites = load_suites(profile.suite_dirs, profile.run.suites)
    state = FleetState()

    def fold(event: Event) -> None:
        state.apply(event)

    with SimProcess(path, port_base=0, time_scale=TIME_SCALE) as sim:
        runner = Runner(with_urls(profile, sim.urls), suites, "pane", fold)
        samples = asyncio.run(_run_sampled(runner, state))

    for endpoint in profile.endpoints:
        assert endpoint.sim is not None
        for concurrency in (1, 4):
            load = Load("concurrency", concurrency)
            true_tps = decode_tps_at(endpoint.sim, concurrency) * TIME_SCALE
            mine = [
                tps
                for eid, level, into_s, tps in samples
                if eid == endpoint.id and level == load and SETTLE_S <= into_s <= PHASE_S
            ]
            assert len(mine) >= 6, (endpoint.id, load.label, len(mine))
            close = [tps for tps in mine if abs(tps / true_tps - 1) <= WITHIN]
            assert len(close) >= SHARE * len(mine), (endpoint.id, load.label, true_tps, mine)

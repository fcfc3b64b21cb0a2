"""A sweep against the simulator finds each endpoint's knee where its concurrency curve puts it.

Seven simulated endpoints, each with its own curve (the seed's among them), are swept at once
in one run. The simulator runs in its own process, as in the demo, so that its token clock and
the client's do not share one interpreter on this small machine. The model's knee is read from ``schedule.aggregate_tps_at`` with the stop rule's own
definition: the last level before aggregate throughput grows < 5%. The measured knee must be
within one step of it, found by the throughput rule, and no endpoint may climb past it by more
than the one step the rule needs to see it.
"""

from __future__ import annotations

import asyncio
import time
from itertools import pairwise
from pathlib import Path

import pytest

from nvfp4_tui.bench.runner import Runner
from nvfp4_tui.config.levels import load_levels
from nvfp4_tui.config.profile import SimSpec, load_profile, with_urls
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.events import EndpointStatus, Event, PhaseFinished
from nvfp4_tui.core.slo import capacity_points
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.sim.schedule import aggregate_tps_at
from tests.load.files import endpoint_toml, write_profile

pytestmark = pytest.mark.slow  # six 3 s steps of a real sweep

# Ten times real time: at the busiest step the fleet streams ~700 tokens a second, which a client
# starved by a loaded 2-core box still reads on time. At 25 times (~1,800 a second) it fell
# behind under eight busy processes, read the c=4 step ~25% low, and saw knees that are not there.
TIME_SCALE = 10.0
# Per-request speed relative to concurrency 1; None is the seed's Qwen3.6 scaling run.
CURVES: dict[str, str | None] = {
    "flat_after_1": "[[1, 1.0], [2, 0.5]]",
    "flat_after_2": "[[1, 1.0], [2, 0.9], [4, 0.45]]",
    "flat_after_4": "[[1, 1.0], [2, 0.95], [4, 0.9], [8, 0.45]]",
    "flat_after_8": "[[1, 1.0], [2, 1.0], [4, 0.9], [8, 0.8], [16, 0.4]]",
    "seed": None,
    "slow_after_2": "[[1, 1.0], [2, 1.0], [4, 0.52]]",
    "falls_after_4": "[[1, 1.0], [2, 1.0], [4, 1.0], [8, 0.3]]",
}
# Phases long enough for several requests at the highest step; the warm-up and cool-down
# windows keep the ramp and the drain out of each step's throughput.
RUN = """
duration_s = 3.0
warmup_s = 0.6
cooldown_s = 0.9
sweep = { max_steps = 6 }
"""


def model_knee(spec: SimSpec, ladder: list[int]) -> int:
    for before, after in pairwise(ladder):
        if aggregate_tps_at(spec, after) < aggregate_tps_at(spec, before) * 1.05:
            return before
    raise AssertionError("the ladder must reach every model knee")


def test_sweep_finds_every_knee_in_one_run(tmp_path: Path) -> None:
    endpoints = [
        endpoint_toml(name, i, decode_tps=4.0, curve=curve)
        for i, (name, curve) in enumerate(CURVES.items())
    ]
    profile = load_profile(write_profile(tmp_path, RUN, endpoints))
    suites = load_suites(profile.suite_dirs, profile.run.suites)
    ladder = [level.concurrency for level in load_levels(profile.run)]
    assert ladder == [1, 2, 4, 8, 16, 32]
    events: list[Event] = []

    started = time.monotonic()
    with SimProcess(profile.path, time_scale=TIME_SCALE, port_base=0) as sim:
        asyncio.run(Runner(with_urls(profile, sim.urls), suites, "knee", events.append).run())
    assert time.monotonic() - started < 60  # a bound on the loop, not a speed assertion

    found = {row.endpoint: (row, points) for row, points in capacity_points(events)}
    assert list(found) == list(CURVES)
    messages = {e.endpoint_id: e.message for e in events if isinstance(e, EndpointStatus)}
    for endpoint in profile.endpoints:
        assert endpoint.sim is not None
        row, points = found[endpoint.id]
        expected = model_knee(endpoint.sim, ladder)
        measured = [p.load.value for p in points]
        detail = f"{endpoint.id}: model knee {expected}, measured {row.knee} over {measured}"
        assert row.sweep_stop == "throughput", detail
        assert row.knee is not None, detail
        assert abs(ladder.index(int(row.knee)) - ladder.index(expected)) <= 1, detail
        # The rule fires at the first flat step: never more than one step past the model's knee.
        assert ladder.index(int(row.max_load or 0)) <= ladder.index(expected) + 2, detail
        assert measured == ladder[: len(measured)], detail
        assert "throughput" in (messages[endpoint.id] or ""), detail
        assert all(p.errors == 0 and p.requests > 0 for p in points), detail

    # Steps the sweep did not climb were planned but never run.
    run_phases = {(e.endpoint_id, e.concurrency) for e in events if isinstance(e, PhaseFinished)}
    assert ("flat_after_1", 4) not in run_phases
    assert ("flat_after_1", 2) in run_phases

"""Linear ramps (issue 28, item 4): a phase climbs to its level over its first ``ramp_s``
seconds; the open loop's rate from 0, the closed loop's slots opening one after another."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from nvfp4_tui.bench.load import phase_schedule, ramped
from nvfp4_tui.bench.runner import plan_phases
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import ConfigError, load_profile, with_overrides
from nvfp4_tui.core.events import PhasePlan, PhaseStarted, RequestFinished
from tests.load.files import endpoint_toml, run_plan, write_profile

SCALE = 10.0


def test_a_ramped_rate_sends_half_as_many_on_the_ramp_then_the_full_rate() -> None:
    assert ramped(0.0, 2.0) == 0.0
    assert ramped(1.0, 2.0) == pytest.approx(2.0)  # continuous where the ramp ends
    assert ramped(3.0, 2.0) == 4.0
    plan = PhasePlan("a", "s", 0, 40, rate_rps=10.0, arrivals="constant", ramp_s=2.0)
    offsets = phase_schedule(plan, "seed")
    assert offsets == sorted(offsets)
    assert sum(offset < 2.0 for offset in offsets) == 10  # 10 req/s x 2 s / 2
    gaps = [b - a for a, b in itertools.pairwise(offsets[10:])]
    assert gaps == pytest.approx([0.1] * len(gaps))
    on_ramp = [b - a for a, b in itertools.pairwise(offsets[:10])]
    assert on_ramp == sorted(on_ramp, reverse=True)  # the gaps shrink as the rate climbs


def test_the_profile_and_the_command_line_set_the_ramp(tmp_path: Path) -> None:
    path = write_profile(tmp_path, "ramp_s = 3", [endpoint_toml("a", 0)])
    plan = plan_run(load_profile(path))
    assert {p.ramp_s for p in plan_phases(plan.profile, plan.suites)} == {3.0}
    assert with_overrides(plan.profile, ramp_s=1.5).run.ramp_s == 1.5
    with pytest.raises(ConfigError, match="--ramp-s"):
        with_overrides(plan.profile, ramp_s=-1.0)


def test_a_ramped_closed_loop_holds_one_in_flight_until_its_second_slot_opens(
    tmp_path: Path,
) -> None:
    ramp_s = 2.0
    path = write_profile(
        tmp_path,
        f"concurrency = [4]\nduration_s = 4\nramp_s = {ramp_s}",
        [endpoint_toml("a", 0, decode_tps=400.0)],
    )
    plan = plan_run(load_profile(path))
    events, _ = run_plan(plan, time_scale=SCALE)
    (start,) = [e.t for e in events if isinstance(e, PhaseStarted)]
    rows = sorted((e for e in events if isinstance(e, RequestFinished)), key=lambda r: r.t)
    second_slot = start + ramp_s / 4 / SCALE  # it opens no sooner than this
    early = [r for r in rows if r.t < second_slot - 0.002]
    assert early  # the first slot sent at once
    for before, after in itertools.pairwise(early):
        # One slot open: each early request left after the one before it was answered.
        assert after.t >= before.t + (before.e2e_s or 0.0) / SCALE - 0.002
    assert len(rows) > len(early)

"""Gamma arrivals: gaps of mean 1 / rate whose spread the burstiness sets (1 / sqrt of it times
the mean: 1 is Poisson, below 1 burstier, above 1 more even), drawn from the run's seed, planned
into each open-loop phase and sent on that schedule."""

from __future__ import annotations

import statistics
from itertools import islice, pairwise
from pathlib import Path

import pytest

from nvfp4_tui.bench.load import ARRIVAL_SHAPES, arrival_offsets_s, phase_schedule
from nvfp4_tui.bench.runner import plan_phases
from nvfp4_tui.config.profile import ARRIVALS, ConfigError, load_profile, with_overrides
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.launch import arguments
from tests.load.test_profile_keys import write

RATE = 2.0
DRAWN = 4000


def _gaps(arrivals: str, burstiness: float = 1.0, seed: str = "0:a:0") -> list[float]:
    offsets = list(islice(arrival_offsets_s(RATE, arrivals, seed, burstiness), DRAWN))
    return [later - earlier for earlier, later in pairwise(offsets)]


@pytest.mark.parametrize("burstiness", [0.25, 1.0, 4.0])
def test_the_gaps_keep_the_rate_and_spread_as_the_burstiness_says(burstiness: float) -> None:
    gaps = _gaps("gamma", burstiness)
    mean = statistics.fmean(gaps)
    assert mean == pytest.approx(1 / RATE, rel=0.08)
    # The coefficient of variation of a gamma of shape k is 1 / sqrt(k).
    assert statistics.stdev(gaps) / mean == pytest.approx(burstiness**-0.5, rel=0.12)


def test_burstiness_one_spreads_like_poisson_and_a_seed_gives_one_schedule() -> None:
    gamma, poisson = _gaps("gamma", 1.0), _gaps("poisson")
    spread = [statistics.stdev(g) / statistics.fmean(g) for g in (gamma, poisson)]
    assert spread[0] == pytest.approx(spread[1], rel=0.1)
    assert _gaps("gamma", 0.5) == _gaps("gamma", 0.5)
    assert _gaps("gamma", 0.5) != _gaps("gamma", 0.5, seed="0:a:1")


def test_the_profile_plans_gamma_phases_and_the_command_line_can_ask_for_them(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, 'rate = 2\narrivals = "gamma"\nburstiness = 0.5\nrequests = 3')
    profile = load_profile(path)
    assert (profile.run.arrivals, profile.run.burstiness) == ("gamma", 0.5)
    phases = plan_phases(profile, load_suites(profile.suite_dirs, profile.run.suites))
    assert {(p.arrivals, p.burstiness) for p in phases} == {("gamma", 0.5)}
    schedule = phase_schedule(phases[0], "0:a:0")
    assert len(schedule) == phases[0].requests and schedule == sorted(schedule)

    poisson = load_profile(write(tmp_path, "rate = 2"))
    assert with_overrides(poisson, arrivals="gamma", burstiness=4.0).run.burstiness == 4.0
    with pytest.raises(ConfigError, match="--burstiness: only applies with gamma arrivals"):
        with_overrides(poisson, burstiness=4.0)
    with pytest.raises(ConfigError, match="--burstiness: expected a number above 0"):
        with_overrides(poisson, arrivals="gamma", burstiness=-1.0)
    closed = plan_phases(
        load_profile(write(tmp_path, "concurrency = [1]")),
        load_suites(profile.suite_dirs, profile.run.suites),
    )
    assert {(p.arrivals, p.burstiness) for p in closed} == {(None, None)}


def test_the_command_lines_choices_are_the_profiles() -> None:
    parser = arguments.argparse.ArgumentParser()
    arguments.add_plan_options(parser)
    option = next(a for a in parser._actions if a.dest == "arrivals")
    assert tuple(option.choices) == ARRIVALS


def test_every_arrival_shape_a_profile_may_name_has_a_draw() -> None:
    assert tuple(ARRIVAL_SHAPES) == ARRIVALS
    with pytest.raises(ValueError, match='arrivals must be "constant", "poisson" or "gamma"'):
        arrival_offsets_s(RATE, "bursty", "x")

"""Levels a plan cannot fill: said before the run; and a phase bounded by time holds its level by
cycling its prompts, against the simulated fleet."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4_tui.bench.runner import plan_phases, unfilled_levels
from nvfp4_tui.cli import main
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.events import PhaseFinished, RequestFinished
from tests.load.files import endpoint_toml, run_profile, write_profile


def _warnings(directory: Path, run: str, endpoints: int = 1) -> list[str]:
    path = write_profile(directory, run, [endpoint_toml(f"e{i}", i) for i in range(endpoints)])
    profile = load_profile(path)
    suites = load_suites(profile.suite_dirs, profile.run.suites)
    return unfilled_levels(plan_phases(profile, suites), suites)


def test_a_level_above_the_plans_requests_is_named_once(tmp_path: Path) -> None:
    # The one-prompt suite, once per phase: c=1 is full, c=2 and c=4 never are, on any endpoint.
    warnings = _warnings(tmp_path, "concurrency = [1, 2, 4]\nrequests = 1\n", endpoints=3)
    assert warnings == [
        f"warning: phase essay c={c}: its plan has 1 request (1 prompt), too few to hold {c} "
        f"in flight, so it never runs at full load; --requests {c} or --duration fills it"
        for c in (2, 4)
    ]
    assert _warnings(tmp_path, "concurrency = [1, 4]\nrequests = 4\n") == []
    assert _warnings(tmp_path, "concurrency = [1, 4]\nduration_s = 1\n") == []
    assert _warnings(tmp_path, "rate = [2, 4]\nrequests = 1\n") == []


def test_the_demo_says_so_before_it_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The built-in suites have 3 prompts: one request each is 3 at c=4, on each of 7 endpoints.
    args = ["demo", "--headless", "--suites", "math", "--concurrency", "1,4", "--requests", "1"]
    assert main([*args, "--time-scale", "20", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    warning = (
        "warning: phase math c=4: its plan has 3 requests (3 prompts), too few to hold 4 in "
        "flight, so it never runs at full load; --requests 2 or --duration fills it\n"
    )
    assert captured.err.count(warning) == 1
    assert "c=1:" not in captured.err


def test_a_phase_bounded_by_time_holds_its_level_by_cycling_prompts(tmp_path: Path) -> None:
    profile = load_profile(
        write_profile(tmp_path, "concurrency = [4]\nduration_s = 2\n", [endpoint_toml("e", 0)])
    )
    events, stats = run_profile(profile, time_scale=10.0)
    rows = [e for e in events if isinstance(e, RequestFinished)]
    [phase] = [e for e in events if isinstance(e, PhaseFinished)]
    # One prompt, sent again and again: four at a time for the whole phase.
    assert stats["max_in_flight"] == 4
    assert len(rows) > 4 and {r.prompt_id for r in rows} == {"p0"}
    assert sorted(r.request_index for r in rows) == list(range(len(rows)))
    assert all(r.status != "error" for r in rows)  # "incomplete": cut at max_tokens 16
    assert phase.full_load_s is not None and phase.full_load_s > 0.5 * phase.wall_s

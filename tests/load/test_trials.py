"""Trials (issue 28, item 6): the plan run N times, each to a snapshot of its own, and each
leaderboard figure as its mean over the runs with the 95% interval across them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.config.profile import ConfigError, load_profile, with_overrides
from nvfp4_tui.core.figures.trials import TRIAL_FIGURES, TrialChange, TrialRow, trial_changes
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.stats import t_quantile_975
from nvfp4_tui.output.report import snapshot_board
from nvfp4_tui.output.trials_report import render_trials
from nvfp4_tui.store.reader import open_snapshot
from tests.load.files import endpoint_toml, write_profile


def test_the_profile_and_the_command_line_set_trials(tmp_path: Path) -> None:
    profile = load_profile(write_profile(tmp_path, "trials = 3", [endpoint_toml("a", 0)]))
    assert profile.run.trials == 3
    assert with_overrides(profile, trials=5).run.trials == 5
    with pytest.raises(ConfigError, match="--trials"):
        with_overrides(profile, trials=0)


def test_trials_need_the_headless_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--trials", "2"]) != 0
    assert "--trials needs --headless" in capsys.readouterr().err


def test_a_demo_of_three_trials_writes_three_snapshots_and_their_spread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["demo", "--headless", "--suites", "math", "--concurrency", "2", "--requests", "1"]
    assert main([*args, "--time-scale", "20", "--out", str(tmp_path), "--trials", "3"]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("trial ")] == [
        "trial 1 of 3",
        "trial 2 of 3",
        "trial 3 of 3",
    ]
    paths = sorted(tmp_path.iterdir())
    assert [p.name.rsplit("-", 1)[1] for p in paths] == ["trial1", "trial2", "trial3"]
    assert "Trials: each figure's mean over 3 runs of the plan" in out
    snapshots = [open_snapshot(p) for p in paths]
    rows = json.loads(render_trials(snapshots, "json"))
    boards = [snapshot_board(s) for s in snapshots]
    first = boards[0].rows[0]
    (decode,) = [
        r
        for r in rows
        if (r["endpoint"], r["suite"], r["figure"]) == (first.endpoint, "math", "decode tok/s p50")
    ]
    values = [b.rows[0].decode.p50_tps for b in boards]
    assert decode["values"] == values and decode["n"] == decode["trials"] == 3
    mean = sum(values) / 3
    assert decode["mean"] == pytest.approx(mean)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / 2)
    assert decode["ci95_half"] == pytest.approx(t_quantile_975(2) * sd / math.sqrt(3))
    assert main(["trials", *map(str, paths)]) == 0
    assert "Trials: each figure's mean over 3 runs" in capsys.readouterr().out


def _row(values: tuple[float, ...]) -> TrialRow:
    return TrialRow("a", "s", Load("concurrency", 1.0), TRIAL_FIGURES[0], values, len(values))


def test_two_sets_of_trials_differ_only_past_their_spread() -> None:
    steady = _row((100.0, 101.0, 99.0))
    faster = TrialChange(steady, _row((110.0, 111.0, 109.0)))
    assert faster.relative == pytest.approx(0.10) and faster.significant is True
    # The same shift, but runs that scatter by ±15: not told apart from 3 runs each.
    noisy = TrialChange(_row((85.0, 100.0, 115.0)), _row((95.0, 110.0, 125.0)))
    assert noisy.significant is False
    assert TrialChange(_row((100.0,)), steady).significant is None  # one run: no spread
    (change,) = trial_changes([steady], [_row((110.0, 111.0, 109.0))])
    assert change.json()["kind"] == "trial_change" and change.json()["b_n"] == 3


def test_the_trials_command_sets_two_sets_side_by_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["demo", "--headless", "--suites", "math", "--concurrency", "1", "--requests", "1"]
    for name in ("a", "b"):
        out = tmp_path / name
        assert main([*args, "--time-scale", "20", "--out", str(out), "--trials", "2"]) == 0
    capsys.readouterr()
    a, b = (sorted(str(p) for p in (tmp_path / name).iterdir()) for name in ("a", "b"))
    assert main(["trials", *a, "--versus", *b, "--format", "json"]) == 0
    changes = json.loads(capsys.readouterr().out)
    assert changes and {c["kind"] for c in changes} == {"trial_change"}
    assert {(c["a_n"], c["b_n"]) for c in changes if c["figure"] == "TTFT s p50"} == {(2, 2)}

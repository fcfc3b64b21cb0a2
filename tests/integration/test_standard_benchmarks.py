"""Standard benchmarks end to end: the simulator answers HumanEval and a JSONL suite (right with
its quality as the chance), the runner asks greedily, the sandbox checks every answer, and the
report shows the scores in their own section, with the bad rows of the JSONL file named on
stderr and counted in the report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nvfp4_tui.bench.runner import Runner
from nvfp4_tui.cli import main
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile, with_overrides
from nvfp4_tui.core.figures.intervals import wilson_95
from nvfp4_tui.core.figures.plot_data import Omitted, published_figures
from nvfp4_tui.output.figures.inputs import figure_inputs
from nvfp4_tui.output.report import render
from nvfp4_tui.output.writeup import TableBlock, build_writeup
from nvfp4_tui.store.reader import open_snapshot
from tests.integration.fleet_files import endpoint_toml, write_profile

NUMBERS = """
[suite]
kind = "math"
scorer = "math"
max_tokens = 64
source = "numbers.jsonl"
benchmark = "Sums"
[suite.fields]
prompt = "q"
reference = "a"
"""
ROWS = [
    {"q": "What is 2 + 3?", "a": 5},
    "{broken",
    {"q": "What is 10 - 4?", "a": "6"},
    {"q": "What is 7 * 6?"},
    {"q": "What is 9 + 9?", "a": 18},
]


def fleet(tmp_path: Path, qualities: dict[str, float]) -> Path:
    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "numbers.toml").write_text(NUMBERS)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in ROWS]
    (suites / "numbers.jsonl").write_text("\n".join(lines) + "\n")
    endpoints = [
        endpoint_toml(eid, gpu, decode_tps=2000.0, ttft_s=0.01, sim_extra=f"quality = {q}")
        for gpu, (eid, q) in enumerate(qualities.items())
    ]
    return write_profile(tmp_path, endpoints, suites=["numbers"], concurrency=[4], requests=1)


def benchmark_rows(snapshot: Path) -> dict[tuple[str, str], dict]:
    rows = json.loads(render(snapshot, "json"))
    return {(r["suite"], r["endpoint"]): r for r in rows if r.get("kind") == "benchmark"}


def snapshot_of(out: str) -> Path:
    found = re.search(r"run complete; snapshot: (\S+)", out)
    assert found, out
    return Path(found.group(1))


def test_humaneval_is_asked_greedily_whatever_the_profiles_temperature(tmp_path):
    profile = with_overrides(load_profile(fleet(tmp_path, {"a": 0.5})), suites=("humaneval",))
    plan = plan_run(profile)
    assert profile.run.temperature == 0.3
    runner = Runner(plan.profile, plan.suites, "r", lambda event: None)
    suite = plan.suites["humaneval"]
    assert runner._request("a", suite, suite.prompts[0]).temperature == 0.0


def test_a_sample_of_humaneval_and_a_jsonl_suite_with_bad_rows_run_and_report(tmp_path, capsys):
    path = fleet(tmp_path, {"right": 1.0, "wrong": 0.0})
    argv = ["demo", "--profile", str(path), "--out", str(tmp_path / "out"), "--headless"]
    argv += ["--suites", "humaneval,numbers", "--limit", "6", "--time-scale", "50"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    jsonl = tmp_path / "suites" / "numbers.jsonl"
    assert f"{jsonl}: line 2: not JSON" in captured.err
    assert f"{jsonl}: line 4: field 'a': missing" in captured.err
    assert f"numbers: 2 unusable rows of {jsonl} left out; it runs the 3 others" in captured.err
    assert "Standard benchmark: HumanEval pass@1, greedy, n=6 of 164, chat prompt v1" in (
        captured.out
    )
    assert "Standard benchmark: Sums exact match, temperature 0.3, n=3 (every load level; 2 " in (
        captured.out
    )
    snapshot = snapshot_of(captured.out)
    rows = benchmark_rows(snapshot)
    scores = {key: (row["score"], row["problems_scored"]) for key, row in rows.items()}
    assert scores == {
        ("humaneval", "right"): (1.0, 6),
        ("humaneval", "wrong"): (0.0, 6),
        ("numbers", "right"): (1.0, 3),
        ("numbers", "wrong"): (0.0, 3),
    }
    # The write-up gives them a section of their own; its quality figure draws none of them.
    writeup = build_writeup(open_snapshot(snapshot))
    sections = {section.title: section for section in writeup.sections}
    blocks = sections["Standard benchmarks"].blocks
    titles = [block.table[0] for block in blocks if isinstance(block, TableBlock)]
    assert [t.split(",")[0] for t in titles] == [
        "Standard benchmark: HumanEval pass@1",
        "Standard benchmark: Sums exact match",
    ]
    quality = {f.name: f for f in published_figures(figure_inputs(open_snapshot(snapshot)))}
    assert isinstance(quality["quality"], Omitted)


@pytest.mark.slow  # all 164 problems through the sandbox: about 25 s on two cores
def test_all_of_humaneval_scores_the_simulators_quality_within_its_interval(tmp_path, capsys):
    quality = 0.7
    path = fleet(tmp_path, {"model": quality})
    argv = ["demo", "--profile", str(path), "--out", str(tmp_path / "out"), "--headless"]
    assert main([*argv, "--suites", "humaneval", "--time-scale", "50"]) == 0
    (row,) = benchmark_rows(snapshot_of(capsys.readouterr().out)).values()
    assert (row["problems"], row["problems_scored"]) == (164, 164)
    assert row["ci95_low"] <= quality <= row["ci95_high"]
    assert (row["ci95_low"], row["ci95_high"]) == pytest.approx(wilson_95(row["score"], 164))

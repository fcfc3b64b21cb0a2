"""Synthetic prompts by length (issue 28, item 1): lengths drawn from a distribution, prompts of
as many one-token words, asked for through ``ignore_eos`` and ``min_tokens``, and the lengths
asked reported beside the server's own counts."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path

import pytest

from nvfp4_tui.config.plan import LaunchPlan, plan_run
from nvfp4_tui.config.profile import ConfigError, load_profile, with_overrides
from nvfp4_tui.config.suites import load_suite
from nvfp4_tui.config.synthetic import SYNTHETIC_SUITE, generated, parse_synthetic
from nvfp4_tui.core.events import Event, ProbeFinished, RequestFinished, RunStarted
from nvfp4_tui.core.figures.pane import pane_figures
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.output.report import render
from nvfp4_tui.sim.tokens import count_tokens
from tests.load.files import endpoint_toml, run_plan, write_profile
from tests.load.test_profile_keys import write
from tests.support.factories import write_snapshot


def test_each_distribution_draws_the_lengths_it_names() -> None:
    fixed = [a.tokens_in for a, _ in generated(parse_synthetic("isl=300,osl=20", "x"))]
    assert fixed == [300] * 100
    normal = parse_synthetic("isl=500,osl=100,dist=normal,sd=40,osl_sd=5,prompts=2000", "x")
    drawn = [a for a, _ in generated(normal)]
    assert statistics.fmean(a.tokens_in for a in drawn) == pytest.approx(500, abs=4)
    assert statistics.stdev(a.tokens_in for a in drawn) == pytest.approx(40, rel=0.08)
    assert statistics.stdev(a.tokens_out for a in drawn) == pytest.approx(5, rel=0.1)
    clipped = parse_synthetic("isl=50,osl=10,dist=normal,sd=40,min=20,max=60,prompts=500", "x")
    lengths = [n for a, _ in generated(clipped) for n in (a.tokens_in, a.tokens_out)]
    assert (min(lengths), max(lengths)) == (20, 60)  # clipped, and both clips reached
    uniform = parse_synthetic("isl_dist=uniform,isl_min=10,isl_max=14,osl=5,prompts=500", "x")
    assert {a.tokens_in for a, _ in generated(uniform)} == {10, 11, 12, 13, 14}


def test_a_histogram_draws_its_lengths_by_their_weights(tmp_path: Path) -> None:
    path = tmp_path / "mix.toml"
    path.write_text(
        '[suite]\nkind = "synthetic"\n[suite.synthetic]\nprompts = 3000\nignore_eos = false\n'
        'isl = { dist = "histogram", lengths = [64, 512], weights = [3, 1] }\nosl = 32\n'
    )
    suite = load_suite(path)
    counts = Counter(p.asked.tokens_in for p in suite.prompts if p.asked)
    assert set(counts) == {64, 512}
    assert counts[64] / len(suite.prompts) == pytest.approx(0.75, abs=0.03)
    assert suite.kind == "synthetic" and suite.max_tokens == 32
    assert suite.synthetic is not None and not suite.synthetic.ignore_eos


def test_a_prompt_is_as_many_tokens_as_asked_and_the_same_for_a_seed() -> None:
    spec = parse_synthetic("isl=400,osl=8,dist=normal,sd=50,prompts=20", "x")
    made = generated(spec)
    assert made == generated(spec)
    assert made != generated(parse_synthetic("isl=400,osl=8,dist=normal,sd=50,seed=1", "x"))
    for asked, text in made:
        assert len(text.split()) == asked.tokens_in
        assert count_tokens(text) == asked.tokens_in  # the simulator's tokenizer agrees
    # No two prompts share more than a word or two of prefix: a prefix cache sees each anew.
    starts = Counter(" ".join(text.split()[:3]) for _, text in made)
    assert max(starts.values()) == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("isl=512", "--synthetic: osl: missing; expected an integer from 1 to"),
        (
            "isl=512,osl=big",
            '--synthetic: osl: expected an integer from 1 to 1048576 or a table, got "big"',
        ),
        ("isl=512,osl=8,dist=normal", "--synthetic: isl.sd: missing; expected a number > 0"),
        (
            "isl=512,osl=8,dist=poisson",
            '--synthetic: isl.dist: expected "fixed", "normal", "uniform" or "histogram"',
        ),
        ("isl=512,osl=8,sd=3", '--synthetic: isl.sd: not used by dist = "fixed"'),
        ("isl=512,osl=8,isl_sdd=3", "--synthetic: isl_sdd: unknown key; did you mean 'isl_sd'?"),
        (
            "isl=512;osl=8",
            '--synthetic: isl: expected an integer from 1 to 1048576 or a table, got "512;osl=8"',
        ),
        ("isl=512,osl", "--synthetic: expected key=value pairs such as isl=512,osl=128"),
        ("isl_dist=uniform,isl_min=9,isl_max=3,osl=8", "--synthetic: isl.min: 9 is above max 3"),
        ("isl=512,osl=8,prompts=0", "--synthetic: prompts: expected an integer from 1 to 100000"),
    ],
)
def test_a_bad_spec_is_one_line_naming_the_key(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_synthetic(spec, "--synthetic")
    assert any(line.startswith(message) for line in raised.value.problems), raised.value.problems
    assert all("\n" not in line for line in raised.value.problems)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "max_tokens = 64\n[suite.synthetic]\nisl = 8\nosl = 8",
            'suite.max_tokens: not used by kind = "synthetic"',
        ),
        ("", "suite.synthetic: missing; expected a table"),
        (
            '[suite.synthetic]\nisl = 8\nosl = 8\n[[prompt]]\nid = "a"\ntext = "b"',
            "prompt: not allowed with kind",
        ),
        (
            '[suite.synthetic]\nosl = 8\nisl = { dist = "histogram", lengths = [1, 2], weights = [1] }',
            "suite.synthetic.isl.weights: expected 2 weights, one per length",
        ),
    ],
)
def test_a_bad_synthetic_suite_file_names_the_file_and_key(
    tmp_path: Path, body: str, message: str
) -> None:
    path = tmp_path / "syn.toml"
    path.write_text('[suite]\nkind = "synthetic"\n' + body + "\n")
    with pytest.raises(ConfigError) as raised:
        load_suite(path)
    assert f"{path}: {message}" in "\n".join(raised.value.problems)
    other = tmp_path / "text.toml"
    other.write_text(
        '[suite]\nkind = "math"\nmax_tokens = 8\n[suite.synthetic]\nisl = 8\nosl = 8\n'
        '[[prompt]]\nid = "a"\ntext = "b"\n'
    )
    with pytest.raises(
        ConfigError, match=r'suite\.synthetic: only allowed when suite\.kind = "synthetic"'
    ):
        load_suite(other)


def test_the_command_line_runs_it_alone_or_beside_the_suites_and_the_plan_carries_it(
    tmp_path: Path,
) -> None:
    profile = load_profile(write(tmp_path, ""))
    alone = with_overrides(profile, synthetic="isl=64,osl=16,prompts=5")
    assert alone.run.suites == (SYNTHETIC_SUITE,)
    beside = with_overrides(profile, suites=("math",), synthetic="isl=64,osl=16,prompts=5")
    assert beside.run.suites == ("math", SYNTHETIC_SUITE)
    plan = plan_run(beside)
    suite = plan.suites[SYNTHETIC_SUITE]
    assert [p.asked.tokens_out for p in suite.prompts if p.asked] == [16] * 5
    assert LaunchPlan.from_plain(json.loads(json.dumps(plan.to_plain()))) == plan
    with pytest.raises(ConfigError, match="--synthetic: osl: missing"):
        with_overrides(profile, synthetic="isl=64")


def test_the_profile_key_needs_no_suites_and_says_what_is_wrong(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        '[run]\nsynthetic = "isl=32,osl=4,prompts=2"\n[[endpoint]]\nid = "a"\n'
        'url = "http://127.0.0.1:8016"\nmodel = "m"\ngpu = 0\n'
    )
    profile = load_profile(path)
    assert profile.run.suites == (SYNTHETIC_SUITE,)
    assert len(plan_run(profile).suites[SYNTHETIC_SUITE].prompts) == 2
    path.write_text(path.read_text().replace("osl=4", "osl=-4"))
    with pytest.raises(ConfigError) as raised:
        load_profile(path)
    assert raised.value.problems == [
        f"{path}: run.synthetic: osl: expected an integer from 1 to 1048576 or a table, got -4"
    ]


def _run(tmp_path: Path, spec: str, extra: str = "") -> tuple[list[Event], Path]:
    path = write_profile(
        tmp_path,
        "requests = 1\nconcurrency = [2]",
        [endpoint_toml("a", 0, decode_tps=400.0, extra=extra)],
    )
    plan = plan_run(with_overrides(load_profile(path), synthetic=spec))
    events, _ = run_plan(plan, time_scale=20.0)
    return events, write_snapshot(tmp_path / "snapshots", "syn", events)


def test_a_synthetic_run_gets_the_lengths_it_asked_for_and_the_report_sets_them_side_by_side(
    tmp_path: Path,
) -> None:
    events, snapshot = _run(tmp_path, "isl=120,osl=24,dist=normal,sd=10,prompts=6")
    rows = [e for e in events if isinstance(e, RequestFinished)]
    assert len(rows) == 6
    for row in rows:
        assert (row.status, row.finish_reason) == ("ok", "length")  # the length asked: whole
        assert row.tokens_out == row.tokens_out_asked
        # The simulator's chat template: 3 tokens a prompt, 4 a message.
        assert row.tokens_in_asked is not None and row.tokens_in == row.tokens_in_asked + 7
        assert row.score_heuristic is None
    lengths = [r for r in json.loads(render(snapshot, "json")) if r.get("kind") == "lengths"]
    asked = statistics.fmean(r.tokens_out_asked or 0 for r in rows)
    assert lengths == [
        {
            "kind": "lengths",
            "endpoint": "a",
            "suite": SYNTHETIC_SUITE,
            "requests": 6,
            "counted": 6,
            "input_asked_mean": pytest.approx(
                statistics.fmean(r.tokens_in_asked or 0 for r in rows)
            ),
            "input_received_mean": pytest.approx(statistics.fmean(r.tokens_in or 0 for r in rows)),
            "input_gap_mean": pytest.approx(7.0),
            "output_asked_mean": pytest.approx(asked),
            "output_received_mean": pytest.approx(asked),
            "output_gap_mean": pytest.approx(0.0),
            "output_exact": 6,
            "output_short": 0,
            "length_fields_refused": None,
        }
    ]
    text = render(snapshot, "text")
    assert "Synthetic lengths: tokens asked against the server's usage" in text


def test_without_ignore_eos_a_server_may_stop_short_and_the_report_counts_it(
    tmp_path: Path,
) -> None:
    events, snapshot = _run(tmp_path, "isl=60,osl=900,prompts=4,ignore_eos=false")
    rows = [e for e in events if isinstance(e, RequestFinished)]
    # The simulated model stops where it likes, now and then running on to the limit.
    short = sum(r.tokens_out is not None and r.tokens_out < 900 for r in rows)
    assert short >= 2
    (lengths,) = [r for r in json.loads(render(snapshot, "json")) if r.get("kind") == "lengths"]
    assert (lengths["output_exact"], lengths["output_short"]) == (4 - short, short)
    assert lengths["output_gap_mean"] < 0


def test_a_server_that_refuses_the_length_fields_gets_each_prompt_again_without_them(
    tmp_path: Path,
) -> None:
    """transformers serve's HTTP 422 to ignore_eos and min_tokens (the simulator's quirk):
    kept as one probe per refusal, the prompts answered, the report saying why they may be
    short."""
    quirk = "[endpoint.sim.quirks]\nvllm_sampling_fields = false"
    events, snapshot = _run(tmp_path, "isl=60,osl=900,prompts=4", extra=quirk)
    rows = [e for e in events if isinstance(e, RequestFinished)]
    assert len(rows) == 4 and {r.status for r in rows} <= {"ok", "incomplete"}
    refusals = [e for e in events if isinstance(e, ProbeFinished) and e.purpose == "length_fields"]
    # Those sent before the first refusal came back (two in flight), then none.
    assert 1 <= len(refusals) <= 2 and refusals[0].http_status == 422
    assert "Unexpected fields in the request: {'ignore_eos', 'min_tokens'}" in (
        refusals[0].error_message or ""
    )
    (lengths,) = [r for r in json.loads(render(snapshot, "json")) if r.get("kind") == "lengths"]
    assert lengths["requests"] == 4 and lengths["output_short"] >= 2
    assert "Unexpected fields" in lengths["length_fields_refused"]
    assert "refused" in render(snapshot, "text")


def test_the_panes_show_no_quality_row_for_a_suite_never_scored(tmp_path: Path) -> None:
    plan = plan_run(
        with_overrides(
            load_profile(write_profile(tmp_path, "requests = 1", [endpoint_toml("a", 0)])),
            suites=("essay",),
            synthetic="isl=16,osl=4,prompts=2",
        )
    )
    events, _ = run_plan(plan, time_scale=20.0)
    (started,) = [e for e in events if isinstance(e, RunStarted)]
    assert started.unscored == (SYNTHETIC_SUITE,)
    state = FleetState()
    state.apply_all(events)
    endpoint = state.endpoints["a"]
    assert endpoint.suites() == ("essay", SYNTHETIC_SUITE)
    figures = pane_figures(endpoint, events[-1].t, "heuristic")
    assert [q.suite for q in figures.quality] == ["essay"]

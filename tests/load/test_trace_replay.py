"""Trace replay (issue 28, item 2): Mooncake's JSONL and our own, requests sent at the trace's
times (sped up), prompts that share their prefixes where the trace's hash_ids do, the server's
prefix cache seeing it, and how late each send left in the report."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from nvfp4_tui.bench.runner import plan_phases
from nvfp4_tui.config.plan import LaunchPlan, plan_run
from nvfp4_tui.config.profile import ConfigError, load_profile, with_overrides
from nvfp4_tui.config.suites import trace_suite
from nvfp4_tui.config.trace import TRACE_ARRIVALS, TRACE_SUITE, TraceSpec
from nvfp4_tui.core.events import Event, RequestFinished
from nvfp4_tui.output.report import render
from tests.load.files import endpoint_toml, run_plan, write_profile
from tests.support.factories import write_snapshot


def _mooncake(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _shared(count: int, gap_ms: int = 100) -> list[dict]:
    """Even requests share two blocks, odd ones one; each has a block of its own after."""
    return [
        {
            "timestamp": 5000 + i * gap_ms,
            "input_length": 40 + i,
            "output_length": 6,
            "hash_ids": [1, 2, 100 + i] if i % 2 == 0 else [1, 200 + i],
        }
        for i in range(count)
    ]


def test_mooncake_and_plain_lines_give_times_lengths_and_shared_prefixes(tmp_path: Path) -> None:
    path = _mooncake(tmp_path / "t.jsonl", _shared(4))
    with path.open("a") as f:  # ours, on the same clock in seconds, sent first
        f.write(json.dumps({"at_s": 4.5, "input_tokens": 10, "output_tokens": 3}) + "\n\n")
    suite = trace_suite(TraceSpec(path, speedup=2.0, block_tokens=16))
    assert suite.name == TRACE_SUITE and suite.exact_lengths
    assert [p.at_s for p in suite.prompts] == pytest.approx([0.0, 0.25, 0.3, 0.35, 0.4])
    assert [p.id for p in suite.prompts] == ["line-5", "line-1", "line-2", "line-3", "line-4"]
    assert [(p.asked.tokens_in, p.asked.tokens_out) for p in suite.prompts if p.asked] == [
        (10, 3),
        (40, 6),
        (41, 6),
        (42, 6),
        (43, 6),
    ]
    words = [p.messages(None)[0]["content"].split() for p in suite.prompts]
    assert [len(w) for w in words] == [10, 40, 41, 42, 43]
    assert words[1][:32] == words[3][:32] and words[1][32:] != words[3][32:]  # ids 1, 2
    assert words[1][:16] == words[2][:16] and words[1][16:32] != words[2][16:32]  # id 1
    assert words[0][:10] != words[1][:10]  # no ids: its own words
    assert words == [p.messages(None)[0]["content"].split() for p in suite.prompts]  # stable


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: not JSON: Expecting property name enclosed in double quotes"),
        ('{"timestamp": -1, "input_length": 5, "output_length": 1}', "field 'timestamp'"),
        ('{"timestamp": 1, "input_length": 0, "output_length": 1}', "field 'input_length'"),
        ('{"at_s": 1, "input_tokens": 5}', "field 'output_tokens': expected an integer"),
        ('{"timestamp": 1, "input_length": 5, "output_length": 1, "hash_ids": [-2]}', "hash_ids"),
        ('{"when": 3}', "line 2: expected a 'timestamp' (Mooncake's, in ms) or an 'at_s' field"),
        ("[1, 2]", "line 2: expected a JSON object"),
    ],
)
def test_a_bad_line_is_one_line_naming_the_file_line_and_field(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"at_s": 0, "input_tokens": 5, "output_tokens": 1}\n' + line + "\n")
    with pytest.raises(ConfigError) as raised:
        trace_suite(TraceSpec(path))
    (problem,) = raised.value.problems
    assert problem.startswith(f"--trace: {path}: ") and message in problem


def test_a_missing_or_empty_trace_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"none\.jsonl: file not found"):
        trace_suite(TraceSpec(tmp_path / "none.jsonl"))
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ConfigError, match="no requests"):
        trace_suite(TraceSpec(tmp_path / "empty.jsonl"))


def _profile(tmp_path: Path, run: str) -> Path:
    return write_profile(tmp_path, run, [endpoint_toml("a", 0, decode_tps=400.0)])


def test_the_profile_and_the_command_line_name_a_trace(tmp_path: Path) -> None:
    _mooncake(tmp_path / "t.jsonl", _shared(3))
    path = _profile(tmp_path, 'trace = "t.jsonl"\ntrace_speedup = 4\ntrace_block_tokens = 16')
    profile = load_profile(path)
    assert profile.run.suites == ("essay", TRACE_SUITE)
    assert profile.run.trace == TraceSpec(tmp_path / "t.jsonl", 4.0, 16)
    plan = plan_run(profile)
    assert [p.at_s for p in plan.suites[TRACE_SUITE].prompts] == pytest.approx([0.0, 0.025, 0.05])
    assert LaunchPlan.from_plain(json.loads(json.dumps(plan.to_plain()))) == plan
    plain = load_profile(_profile(tmp_path / "plain", ""))
    alone = with_overrides(plain, trace=tmp_path / "t.jsonl")
    assert alone.run.suites == (TRACE_SUITE,)
    faster = with_overrides(profile, trace_speedup=10.0)
    assert faster.run.trace == TraceSpec(tmp_path / "t.jsonl", 10.0, 16)
    with pytest.raises(ConfigError, match="--trace-speedup: only applies with a trace"):
        with_overrides(plain, trace_speedup=2.0)
    path.write_text(path.read_text().replace('trace = "t.jsonl"\n', ""))
    with pytest.raises(ConfigError) as raised:
        load_profile(path)
    assert f"{path}: run.trace_speedup: only applies with trace" in raised.value.problems


def test_the_trace_is_one_open_loop_phase_whatever_the_levels(tmp_path: Path) -> None:
    _mooncake(tmp_path / "t.jsonl", _shared(5))
    path = _profile(tmp_path, 'trace = "t.jsonl"\nconcurrency = [1, 4]\nrequests = 2')
    plan = plan_run(load_profile(path))
    phases = plan_phases(plan.profile, plan.suites)
    assert [(p.suite, p.concurrency, p.rate_rps) for p in phases] == [
        ("essay", 1, None),
        (TRACE_SUITE, 0, 10.0),  # 4 gaps over 0.4 s
        ("essay", 4, None),
    ]
    trace_plan = phases[1]
    assert trace_plan.arrivals == TRACE_ARRIVALS and trace_plan.requests == 5


def _replay(tmp_path: Path, lines: list[dict]) -> tuple[list[Event], dict, Path]:
    _mooncake(tmp_path / "t.jsonl", lines)
    path = _profile(tmp_path, 'trace = "t.jsonl"\ntrace_block_tokens = 16')
    profile = load_profile(path)
    plan = plan_run(replace(profile, run=replace(profile.run, suites=(TRACE_SUITE,))))
    events, stats = run_plan(plan, time_scale=20.0)
    return events, stats, write_snapshot(tmp_path / "snapshots", "trace", events)


def test_a_replay_sends_every_line_at_its_time_and_the_prefix_cache_sees_the_shared_blocks(
    tmp_path: Path,
) -> None:
    events, stats, snapshot = _replay(tmp_path, _shared(8))
    rows = sorted((e for e in events if isinstance(e, RequestFinished)), key=lambda r: r.t)
    assert [r.prompt_id for r in rows] == [f"line-{i}" for i in range(1, 9)]
    assert all(r.status == "ok" and r.tokens_out == 6 for r in rows)
    assert all(r.late_s is not None for r in rows)  # each send measured against its time
    # Every request after the first begins with a block seen before (id 1), the even ones
    # after the first even one with two (ids 1 and 2): the simulator's cache counts them.
    assert stats["prefix_hits"] >= 7 * 16
    schedule = [r for r in json.loads(render(snapshot, "json")) if r.get("kind") == "schedule"]
    assert [(s["endpoint"], s["suite"], s["sent"], s["unsent"]) for s in schedule] == [
        ("a", TRACE_SUITE, 8, 0)
    ]
    assert schedule[0]["late_max_s"] >= schedule[0]["late_p50_s"] >= 0
    assert "Schedule fidelity" in render(snapshot, "text")


def test_without_hash_ids_nothing_is_shared(tmp_path: Path) -> None:
    lines = [{**line, "hash_ids": []} for line in _shared(6)]
    _, stats, _ = _replay(tmp_path, lines)
    assert stats["prefix_hits"] == 0


def test_trace_errors_name_where_it_was_given_and_keep_the_profiles_settings(
    tmp_path: Path,
) -> None:
    _mooncake(tmp_path / "t.jsonl", _shared(3))
    path = _profile(
        tmp_path,
        'trace = "t.jsonl"\ntrace_speedup = 4\ntrace_block_tokens = 16\nmax_concurrency = 2',
    )
    profile = load_profile(path)
    assert profile.run.max_concurrency == 2  # a trace is an open loop: the cap applies
    other = _mooncake(tmp_path / "u.jsonl", _shared(2))
    given = with_overrides(profile, trace=other)
    assert given.run.trace == TraceSpec(other, 4.0, 16)
    (tmp_path / "t.jsonl").write_text('{"at_s": "x"}\n')
    with pytest.raises(ConfigError) as raised:
        plan_run(profile)
    assert raised.value.problems[0].startswith(f"{path}: run.trace: {tmp_path / 't.jsonl'}: line 1")
    with pytest.raises(ConfigError) as raised:
        plan_run(with_overrides(profile, trace=tmp_path / "none.jsonl"))
    assert raised.value.problems == [f"--trace: {tmp_path / 'none.jsonl'}: file not found"]
    with pytest.raises(ConfigError, match="--trace: expected a JSONL file"):
        with_overrides(profile, trace=Path(""))


def test_a_trace_spanning_more_than_a_week_is_a_unit_mistake(tmp_path: Path) -> None:
    path = _mooncake(
        tmp_path / "t.jsonl",
        [{**line, "timestamp": t} for line, t in zip(_shared(2), (0, 10**14), strict=True)],
    )
    with pytest.raises(ConfigError, match=r"line 2: sent \d+ days after the first line"):
        trace_suite(TraceSpec(path))

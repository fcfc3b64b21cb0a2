"""Multi-turn sessions (issue 28, item 3): conversations as the unit of concurrency, each turn
sent with the history so far, a think time between turns, and per-turn TTFT in the report."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from nvfp4_tui.bench.runner import plan_phases, unfilled_levels
from nvfp4_tui.bench.sessions import after, conversations, with_history
from nvfp4_tui.config.plan import LaunchPlan, plan_run
from nvfp4_tui.config.profile import ConfigError, load_profile, with_overrides
from nvfp4_tui.config.sessions import SESSIONS_SUITE, SessionsSpec
from nvfp4_tui.core.events import Event, RequestFinished
from nvfp4_tui.output.report import render
from tests.load.files import endpoint_toml, run_plan, write_profile
from tests.support.factories import write_snapshot

SCALE = 20.0


def _profile(tmp_path: Path, run: str = "") -> Path:
    return write_profile(tmp_path, run, [endpoint_toml("a", 0, decode_tps=400.0)])


def test_the_profile_and_the_command_line_plan_sessions(tmp_path: Path) -> None:
    path = _profile(tmp_path, "sessions = 3\nturns = 2\nthink_s = 0.5\nturn_osl = 8")
    profile = load_profile(path)
    assert profile.run.suites == ("essay", SESSIONS_SUITE)
    assert profile.run.sessions == SessionsSpec(3, 2, 0.5, turn_osl=8)
    plan = plan_run(profile)
    suite = plan.suites[SESSIONS_SUITE]
    assert [(p.id, p.turn) for p in suite.prompts][:3] == [
        ("s0000-t1", 1),
        ("s0000-t2", 2),
        ("s0001-t1", 1),
    ]
    assert LaunchPlan.from_plain(json.loads(json.dumps(plan.to_plain()))) == plan
    cli = with_overrides(load_profile(_profile(tmp_path / "b")), sessions=4, turns=5)
    assert cli.run.suites == (SESSIONS_SUITE,) and cli.run.sessions == SessionsSpec(4, 5)
    longer = with_overrides(profile, think_s=2.0)
    assert longer.run.sessions == SessionsSpec(3, 2, 2.0, turn_osl=8)
    with pytest.raises(ConfigError, match="--turns: only applies with sessions"):
        with_overrides(load_profile(_profile(tmp_path / "c")), turns=2)
    with pytest.raises(ConfigError, match="--sessions"):
        with_overrides(profile, sessions=0)
    path.write_text(path.read_text().replace("sessions = 3\n", ""))
    with pytest.raises(ConfigError) as raised:
        load_profile(path)
    assert f"{path}: run.turns: only applies with sessions" in raised.value.problems


def test_each_level_runs_every_conversation_once(tmp_path: Path) -> None:
    path = _profile(tmp_path, "sessions = 3\nturns = 2\nconcurrency = [1, 2]\nrequests = 4")
    plan = plan_run(load_profile(path))
    phases = [p for p in plan_phases(plan.profile, plan.suites) if p.suite == SESSIONS_SUITE]
    assert [(p.concurrency, p.requests) for p in phases] == [(1, 6), (2, 6)]


def test_a_conversation_carries_every_earlier_turn_and_its_answer(tmp_path: Path) -> None:
    plan = plan_run(load_profile(_profile(tmp_path, "sessions = 2\nturns = 3")))
    talks = list(conversations(plan.suites[SESSIONS_SUITE].prompts))
    assert [[index for index, _ in talk] for talk in talks] == [[0, 1, 2], [3, 4, 5]]
    first, second = talks[0][0][1], talks[0][1][1]
    record = RequestFinished(
        t=0.0,
        endpoint_id="a",
        suite=SESSIONS_SUITE,
        prompt_id=first.id,
        concurrency=1,
        phase_index=0,
        request_index=0,
        status="ok",
        queue_s=0.0,
        answer_text="an answer",
    )
    history = after((), first, record)
    sent = with_history(second, history).messages(None)
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"] == first.text and sent[1]["content"] == "an answer"
    assert sent[2]["content"] == second.text


def _run(tmp_path: Path, run: str) -> tuple[list[Event], Path]:
    plan = plan_run(with_overrides(load_profile(_profile(tmp_path, run)), suites=()))
    plan = plan_run(with_overrides(plan.profile, sessions=3, turns=3, think_s=0.5))
    events, _ = run_plan(plan, time_scale=SCALE)
    return events, write_snapshot(tmp_path / "snapshots", "sessions", events)


def test_sessions_run_turn_after_turn_with_the_history_growing(tmp_path: Path) -> None:
    events, snapshot = _run(tmp_path, "concurrency = [2]")
    rows = [e for e in events if isinstance(e, RequestFinished)]
    assert len(rows) == 9 and {r.status for r in rows} == {"ok"}
    by_session: dict[str, list[RequestFinished]] = {}
    for row in sorted(rows, key=lambda r: r.t):
        by_session.setdefault(row.prompt_id.split("-")[0], []).append(row)
    for turns in by_session.values():
        assert [r.turn for r in turns] == [1, 2, 3]  # in order, one at a time
        inputs = [r.tokens_in or 0 for r in turns]
        assert inputs[0] < inputs[1] < inputs[2]  # the history came along
        for before, later in itertools.pairwise(turns):
            # Sent after the answer came and the think time passed (a floor: never sooner).
            answered = before.t + (before.e2e_s or 0.0) / SCALE
            assert later.t >= answered + 0.5 / SCALE - 0.005
    turn_rows = [r for r in json.loads(render(snapshot, "json")) if r.get("kind") == "turns"]
    assert [(r["endpoint"], r["turn"], r["requests"]) for r in turn_rows] == [
        ("a", 1, 3),
        ("a", 2, 3),
        ("a", 3, 3),
    ]
    means = [r["input_tokens_mean"] for r in turn_rows]
    assert means == sorted(means) and means[0] < means[-1]
    assert "Multi-turn sessions by turn" in render(snapshot, "text")


def test_sessions_keep_their_shape_under_other_options(tmp_path: Path) -> None:
    """What a hostile review found: a rate, a sample and a bare --sessions must not turn
    conversations into single requests or drop the profile's settings."""
    path = _profile(tmp_path, "sessions = 3\nturns = 4\nthink_s = 0.5\nturn_isl = 16")
    profile = load_profile(path)
    with pytest.raises(ConfigError, match=r"run\.sessions: a conversation is the unit"):
        with_overrides(profile, rate_rps=(2.0,))
    more = with_overrides(profile, sessions=5)
    assert more.run.sessions == SessionsSpec(5, 4, 0.5, turn_isl=16)
    assert with_overrides(profile, think_s=0.0).run.sessions == SessionsSpec(3, 4, 0.0, 16)
    sampled = plan_run(with_overrides(profile, sample=2))
    assert len(sampled.suites[SESSIONS_SUITE].prompts) == 12  # every turn of every session
    assert len(sampled.suites["essay"].prompts) == 1


def test_a_level_the_conversations_cannot_fill_says_so(tmp_path: Path) -> None:
    plan = plan_run(load_profile(_profile(tmp_path, "sessions = 2\nturns = 3\nconcurrency = [4]")))
    assert unfilled_levels(plan_phases(plan.profile, plan.suites), plan.suites) == [
        "warning: phase essay c=4: its plan has 2 requests (1 prompt), too few to hold 4 in "
        "flight, so it never runs at full load; --requests 4 or --duration fills it",
        f"warning: phase {SESSIONS_SUITE} c=4: 2 conversations, too few to hold 4 in flight, so "
        "it never runs at full load; --sessions 4 fills it",
    ]

"""The context ladder (issue 29): prompts filled to target lengths, hiding facts at depths to be
recalled exactly, sized to each endpoint's context; speed and recall by length, and the
simulator's long-context model (prefill and decode by length, a KV budget that queues, recall
that falls with depth and length)."""

from __future__ import annotations

import asyncio
import io
import json
from dataclasses import replace
from pathlib import Path
from random import Random

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.config.checks import PromptCheck, RecallFact
from nvfp4_tui.config.context_ladder import (
    ANSWER_TOKENS,
    ContextLadder,
    Haystack,
    PromptTokens,
    hidden_facts,
    ladder_facts,
    longest,
    parse_context_lengths,
)
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import ConfigError, load_profile, with_overrides
from nvfp4_tui.config.suites import Prompt, Suite, context_suites, load_suite
from nvfp4_tui.core.events import (
    EndpointConfig,
    PhaseFinished,
    PhaseStarted,
    ProbeFinished,
    RequestFinished,
    ServerSample,
)
from nvfp4_tui.core.figures.context import (
    LadderGauges,
    LadderRow,
    recall_by_depth,
    recall_detail,
    rung_capacities,
)
from nvfp4_tui.output.pane_json import PaneJsonLines
from nvfp4_tui.output.report import render
from nvfp4_tui.output.writeup import TableBlock, build_writeup
from nvfp4_tui.scoring.recall_check import score_recall
from nvfp4_tui.scoring.verify import score_verified
from nvfp4_tui.sim.kv_cache import context_speed_factor
from nvfp4_tui.sim.load import EndpointLoad
from nvfp4_tui.sim.recall import recall_answer, recall_chance
from nvfp4_tui.sim.schedule import expected_ttft_s
from nvfp4_tui.store.reader import open_snapshot
from tests.load.files import endpoint_toml, run_plan, write_profile
from tests.load.test_profile_keys import write
from tests.sim.simclient import make_spec
from tests.support.factories import write_snapshot

LADDER = ContextLadder((1024,))
FACTS = ladder_facts(LADDER, 1024, 0)


def test_lengths_read_in_k_of_1024_with_max_for_each_endpoints_own(tmp_path: Path) -> None:
    ladder = parse_context_lengths("1k, 4K,1500,max", "--context-lengths")
    assert ladder.lengths == (1024, 4096, 1500, None)
    profile = load_profile(write(tmp_path, 'context_lengths = "16k,1k"'))
    assert profile.run.suites == ("english", "context_1k", "context_16k")  # shortest first
    assert plan_run(with_overrides(profile, context_lengths="1k,max")).suites.keys() == {
        "context_1k",
        "context_max",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1k,lots", "--context-lengths: expected lengths from 256 to 2048k tokens or max"),
        ("100", "--context-lengths: expected lengths from 256 to 2048k tokens or max"),
        ("4k,4096", "--context-lengths: 4k is given twice"),
    ],
)
def test_a_bad_length_is_one_line_naming_the_option(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_context_lengths(text, "--context-lengths")
    (line,) = raised.value.problems
    assert line.startswith(message)


def test_the_profile_key_names_file_and_key(tmp_path: Path) -> None:
    path = write(tmp_path, "context_lengths = 4096")
    with pytest.raises(ConfigError) as raised:
        load_profile(path)
    assert raised.value.problems == [
        f"{path}: run.context_lengths: expected a string such as '1k,4k,16k,max'"
    ]


def test_a_rate_is_refused_its_capacity_is_read_per_level_in_flight(tmp_path: Path) -> None:
    path = write(tmp_path, 'context_lengths = "1k"\nrate = [1.0]')
    with pytest.raises(ConfigError) as raised:
        load_profile(path)
    assert raised.value.problems == [
        f"{path}: run.context_lengths: the context ladder's capacity is read per level in "
        "flight: use concurrency, not rate"
    ]
    with pytest.raises(ConfigError, match="use concurrency, not rate"):
        with_overrides(load_profile(write(tmp_path, "")), context_lengths="1k", rate_rps=(2.0,))


def test_a_prompt_holds_its_facts_at_their_depths_and_is_as_long_as_asked() -> None:
    for length in (300, 4096, 32768):
        text = Haystack(length, FACTS, "k").text()
        found = hidden_facts(text)
        assert [(name, code) for _, name, code in found] == [(f.name, f.code) for f in FACTS]
        depths = [depth for depth, _, _ in found]
        assert depths == sorted(depths) and depths[-1] - depths[0] > 0.6
        # Words are a token each; the header, question and facts take the rest of the length.
        assert length - 160 <= len(text.split()) <= length
    long = hidden_facts(Haystack(32768, FACTS, "k").text())
    assert [round(d, 2) for d, _, _ in long] == [0.0, 0.5, 1.0]


def test_each_send_begins_anew_so_no_prefix_is_cached_but_keeps_its_facts() -> None:
    prompt = Haystack(2048, FACTS, "k")
    first, second = prompt.sent("0|0").text(), prompt.sent("0|1").text()
    assert first != second and prompt.sent("0|0").text() == first  # the same for the same send
    header = len(first.split("\n\n")[0]) + 2  # shared, as a system message would be
    assert first[header : header + 200] != second[header : header + 200]
    assert [f[1:] for f in hidden_facts(first)] == [f[1:] for f in hidden_facts(second)]


def test_rungs_are_sized_to_each_endpoints_context() -> None:
    rung, top = Haystack(4096, FACTS, "k"), Haystack(None, FACTS, "k")

    def length(haystack: Haystack | None) -> int | None:
        return None if haystack is None else haystack.tokens_in

    assert length(rung.sized(None)) == 4096  # context unknown: as asked, the server judges
    assert top.sized(None) is None  # max of an unknown context: not sent
    assert length(rung.sized(131_072)) == 4096
    assert length(top.sized(2048)) == longest(2048)
    assert length(rung.sized(2048)) == longest(2048)  # capped, not dropped
    assert longest(2048) + ANSWER_TOKENS < 2048
    assert rung.sized(300) is None  # no room for a ladder prompt at all
    with pytest.raises(ValueError, match="sized"):
        top.text()
    # Sized by how the server counts: its fixed part, then its tokens a filler word.
    fine = PromptTokens(fixed=400.0, per_word=3.0)
    assert rung.sized(None, fine) == replace(rung, filler_words=(4096 - 400) // 3)
    learned = PromptTokens().learned(rung.probe(0), 500)
    assert learned == PromptTokens(fixed=500.0)
    assert learned.learned(rung.probe(256), 500 + 3 * 256) == PromptTokens(500.0, 3.0)


def test_recall_is_exact_per_fact_under_its_own_name() -> None:
    check = PromptCheck(facts=FACTS)
    a, b, c = FACTS
    right = f"{a.name}: {a.code}\n{b.name.upper()} - {b.code}\nThe {c.name}'s code is {c.code}."
    assert score_recall(check, right) == (1.0, "recall:0=1,0.5=1,1=1")
    swapped = f"{a.name}: {b.code}\n{b.name}: {a.code}\n{c.name}: {c.code}"
    assert score_recall(check, swapped) == (pytest.approx(1 / 3), "recall:0=0,0.5=0,1=1")
    longer = f"{a.name}: {a.code}9\n{b.name}: 12{b.code}"
    assert score_recall(check, longer)[0] == 0.0  # a longer number is another number
    # Named first in a preamble, then answered: every mention is tried.
    preamble = f"The codes of the {a.name}, the {b.name} and the {c.name}:\n" + "\n".join(
        f"{f.name.replace(' ', '-')}: {f.code}" for f in FACTS
    )
    assert score_recall(check, preamble)[0] == 1.0
    elsewhere = f"{a.name}: not found\nNote: {a.code} appears somewhere"
    assert score_recall(check, elsewhere)[0] == 0.0  # a code on another line is not its answer
    assert score_verified(_ladder_suite(), replace(_ladder_prompt(), check=check), "", None) == (
        0.0,
        "recall:0=0,0.5=0,1=0",
    )  # an empty answer found nothing, at every depth
    assert recall_by_depth("recall:0=1,0.5=0,1=1|reasoning_chars:40") == [
        (0.0, True),
        (0.5, False),
        (1.0, True),
    ]
    assert recall_by_depth(recall_detail([(0.25, True)])) == [(0.25, True)]
    assert recall_by_depth("passed 3/5") == []


def _ladder_suite() -> Suite:
    return context_suites(LADDER, Path("x"))["context_1k"]


def _ladder_prompt() -> Prompt:
    return _ladder_suite().prompts[0]


def test_the_simulated_model_forgets_the_middle_of_long_contexts_first() -> None:
    spec = make_spec(quality=0.8)
    assert recall_chance(spec, 2048, 0.5) == 1.0  # the default curve: whole at short lengths
    long = [recall_chance(spec, 131_072, d) for d in (0.0, 0.25, 0.5, 0.75, 1.0)]
    assert long[0] == long[-1] > long[1] > long[2] < long[3]
    assert recall_chance(spec, 131_072, 0.5) < recall_chance(spec, 32_768, 0.5) < 1.0
    weaker = make_spec(quality=0.5)
    assert recall_chance(weaker, 131_072, 0.5) < long[2]
    text = Haystack(300, FACTS, "k").text()
    answer = recall_answer(make_spec(), text, Random(0))
    assert answer is not None and score_recall(PromptCheck(facts=FACTS), answer)[0] == 1.0
    forgetful = make_spec(recall_curve=((256, 0.0),), quality=1.0)
    miss = recall_answer(forgetful, text, Random(0)) or ""
    assert score_recall(PromptCheck(facts=FACTS), miss)[0] < 1.0
    assert recall_answer(spec, "Write an essay.", Random(0)) is None


def test_decode_slows_past_the_contexts_its_speed_was_declared_at() -> None:
    fp8, bf16 = make_spec(kv_cache_dtype="fp8"), make_spec(kv_cache_dtype="auto")
    assert context_speed_factor(fp8, 4 * 4096, 4) == 1.0
    at_128k = context_speed_factor(fp8, 131_072, 1)
    assert 0.2 < at_128k < context_speed_factor(fp8, 32_768, 1) < 1.0
    assert context_speed_factor(bf16, 131_072, 1) < at_128k  # twice the bytes to read


def test_a_full_kv_cache_queues_first_come_first_served() -> None:
    async def main() -> None:
        load = EndpointLoad(lambda: 0.0, kv_capacity_tokens=10_000)
        assert await load.admit(4_000) == (1, False)
        assert await load.admit(4_000) == (2, False)
        third = asyncio.ensure_future(load.admit(4_000))
        small = asyncio.ensure_future(load.admit(100))  # fits, but waits its turn
        await asyncio.sleep(0)
        assert (load.waiting, load.running) == (2, 2)
        load.release(4_000, 4_000)
        # Both fit once one left: each runs with the other (3 in all).
        assert await third == (3, True) and await small == (3, True)
        assert load.kv_reserved == 8_100 and load.waiting == 0

    asyncio.run(main())


def test_capacity_is_what_ran_when_the_server_first_queued() -> None:
    def level(c: int, running: float, waiting: float) -> LadderRow:
        return LadderRow(
            "a", "context_4k", c, 4096, requests=4, errors=0, tokens_in_mean=4110.0,
            ttft_mean_s=None, ttft_p50_s=None, prefill_tps_mean=None, decode_tps_mean=None,
            recall_mean=None, recall_by_depth=(), running_peak=running, waiting_peak=waiting,
            server_polls=3,
        )  # fmt: skip

    full = rung_capacities([level(1, 1, 0), level(2, 2, 0), level(4, 2, 2)])
    assert [(r.fits, r.at_least, r.full_at, r.label) for r in full] == [
        (2, False, 4, "fits 2 × 4,096 tokens at once")
    ]
    roomy = rung_capacities([level(1, 1, 0), level(8, 4, 0)])  # 4 requests never filled c=8
    assert [(r.fits, r.at_least) for r in roomy] == [(4, True)]
    # Polls that missed the queue: the server's own queue time still tells.
    missed = replace(level(4, 2, 0), server_queue_mean_s=0.8, ttft_mean_s=1.3)
    assert [(r.fits, r.full_at) for r in rung_capacities([level(2, 2, 0), missed])] == [(2, 4)]
    # A sampled peak under what a lower level held: the lower level's is what fits.
    low_poll = rung_capacities([level(2, 2, 0), level(4, 1, 3)])
    assert [(r.fits, r.full_at) for r in low_poll] == [(2, 4)]
    # Waiting seen, but all four ran at once in the end (a prefill's turn): room for four.
    assert [r.at_least for r in rung_capacities([level(4, 4, 2)])] == [True]
    # A level of one is never full, and a level whose every request failed holds nothing.
    lone = replace(level(1, 1, 1), server_queue_mean_s=5.0, ttft_mean_s=6.0)
    failed = replace(level(4, 0, 0), requests=0, errors=4)
    assert [(r.fits, r.at_least) for r in rung_capacities([lone, failed])] == [(1, True)]
    # A step's wait, or a prefill's turn, is no full cache: small beside the TTFT.
    for queue_s, ttft_s in ((0.002, 0.5), (0.4, 20.0)):
        brief = replace(level(4, 4, 0), server_queue_mean_s=queue_s, ttft_mean_s=ttft_s)
        assert [r.at_least for r in rung_capacities([brief])] == [True]


def test_a_polls_count_since_before_the_rung_began_is_left_to_the_phase_before() -> None:
    gauges = LadderGauges({"context_4k"})
    gauges.apply(PhaseStarted(100.0, "a", "context_4k", 4, 0))
    gauges.apply(ServerSample(101.0, "a", requests_running=2, requests_waiting=0))
    gauges.apply(PhaseFinished(105.0, "a", "context_4k", 4, 0, 4, 0, 40, 5.0))
    gauges.apply(PhaseStarted(105.5, "a", "context_4k", 1, 1))
    # Its queue times are the c=4 phase's last requests': not the c=1 phase's.
    leak = ServerSample(106.0, "a", requests_running=1, queue_count=2, queue_mean_s=2.0)
    gauges.apply(leak)
    gauges.apply(ServerSample(107.0, "a", requests_running=1, queue_count=1, queue_mean_s=0.001))
    one = gauges.gauges[("a", "context_4k", 1)]
    assert (one.polls, one.queued, one.queue_s) == (2, 1, pytest.approx(0.001))


def _ladder_run(tmp_path: Path, lengths: str, context: int | None = None, sim: str = "") -> list:
    path = write_profile(
        tmp_path,
        "requests = 1\nconcurrency = [1]",
        [endpoint_toml("a", 0, decode_tps=300.0, ttft_s=0.05) + "prefill_tps = 16000\n" + sim],
    )
    plan = plan_run(with_overrides(load_profile(path), context_lengths=lengths))
    config = () if context is None else (EndpointConfig("a", max_model_len=context),)
    events, _ = run_plan(plan, time_scale=10.0, configuration=config)
    snapshot = write_snapshot(tmp_path / "snapshots", "ladder", events)
    rows = [r for r in json.loads(render(snapshot, "json")) if r.get("kind") == "context"]
    return [events, rows, render(snapshot, "text")]


def test_a_ladder_run_reports_speed_and_recall_by_length(tmp_path: Path) -> None:
    events, rows, text = _ladder_run(tmp_path, "4k,1k,max", context=8192)
    sent = [e for e in events if isinstance(e, RequestFinished)]
    assert {e.suite for e in sent} == {"context_1k", "context_4k", "context_max"}
    assert all(e.status == "ok" and e.score_verified == 1.0 for e in sent)
    assert [(r["suite"], r["input_tokens_asked"]) for r in rows] == [
        ("context_1k", 1024),
        ("context_4k", 4096),
        ("context_max", longest(8192)),
    ]
    spec = make_spec(ttft_s=0.05, prefill_tps=16000.0)
    for row in rows:
        assert row["requests"] == 2 and row["recall_mean"] == 1.0
        assert row["recall_by_depth"] == {"0": 1.0, "0.5": 1.0, "1": 1.0}
        # The server's count is the length asked: the calibration probes told how it counts.
        assert row["input_tokens_mean"] == pytest.approx(row["input_tokens_asked"], rel=0.01)
        # Never before the schedule's prefill; how much after is the box's (fidelity.py
        # measures that): bounded here only far above any scheduling delay.
        expected = expected_ttft_s(spec, round(row["input_tokens_mean"]))
        assert 0.97 * expected <= row["ttft_mean_s"] <= 3 * expected + 0.5
        assert row["prefill_tps_mean"] < 16000
    ttfts = [r["ttft_mean_s"] for r in rows]
    assert ttfts == sorted(ttfts) and ttfts[-1] > 3 * ttfts[0]
    assert "Context ladder: TTFT (mean, p50)" in text
    assert "Context ladder recall by depth" in text and "depth 50%" in text
    assert "TTFT mean by context length" in text  # the chart, rung by rung
    # The HTML and Markdown write-up carries the same tables, under "Workloads".
    writeup = build_writeup(open_snapshot(tmp_path / "snapshots" / "ladder"))
    (workloads,) = [section for section in writeup.sections if section.title == "Workloads"]
    titles = [block.table[0] for block in workloads.blocks if isinstance(block, TableBlock)]
    assert [t.split(":")[0] for t in titles] == ["Context ladder", "Context ladder recall by depth"]


def test_rungs_are_measured_in_the_servers_tokens_whatever_its_tokenizer(tmp_path: Path) -> None:
    """A tokenizer that cuts our words in three (the real-server stage's tiny model): the
    calibration probe's usage says so, and every rung comes out as long as asked, in its
    tokens, the top one within the context."""
    quirk = "[endpoint.sim.quirks]\ntoken_scale = 3.0\n"
    events, rows, _ = _ladder_run(tmp_path, "1k,max", context=8192, sim=quirk)
    bare, filled = [e for e in events if isinstance(e, ProbeFinished)]  # no warm-up here
    assert {bare.purpose, filled.purpose} == {"context_tokens"}
    assert bare.tokens_in is not None and filled.tokens_in is not None
    assert filled.tokens_in - bare.tokens_in == 3 * 256  # the 256 filler words, cut in three
    assert all(e.status == "ok" for e in events if isinstance(e, RequestFinished))
    for row in rows:
        asked = row["input_tokens_asked"]
        assert row["input_tokens_mean"] == pytest.approx(asked, rel=0.01), row
    assert rows[-1]["input_tokens_asked"] == longest(8192)


def test_a_rung_capped_to_an_earlier_ones_length_is_sent_once(tmp_path: Path) -> None:
    events, rows, _ = _ladder_run(tmp_path, "16k,max,1k", context=8192)
    sent = [e for e in events if isinstance(e, RequestFinished)]
    assert {e.suite for e in sent} == {"context_1k", "context_16k"}  # max is 16k's length here
    assert [(r["suite"], r["input_tokens_asked"]) for r in rows] == [
        ("context_1k", 1024),
        ("context_16k", longest(8192)),
    ]


def test_without_a_known_context_the_max_rung_is_not_sent(tmp_path: Path) -> None:
    events, rows, _ = _ladder_run(tmp_path, "1k,max")
    assert {e.suite for e in events if isinstance(e, RequestFinished)} == {"context_1k"}
    assert [r["suite"] for r in rows] == ["context_1k"]


def test_a_suite_file_cannot_take_a_ladder_rungs_name(tmp_path: Path) -> None:
    path = tmp_path / "context_notes.toml"
    path.write_text('[suite]\nkind = "text"\nmax_tokens = 8\nmin_words = 5\n')
    with pytest.raises(ConfigError) as raised:
        load_suite(path)
    assert any(
        "suite.name: 'context_' begins the context ladder's suites" in line
        for line in raised.value.problems
    )


def test_a_suite_file_cannot_claim_the_ladders_kind_or_scorer(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text('[suite]\nkind = "context"\nscorer = "recall"\nmax_tokens = 8\n')
    with pytest.raises(ConfigError) as raised:
        load_suite(path)
    kind, scorer = (
        next(line for line in raised.value.problems if f"suite.{key}:" in line)
        for key in ("kind", "scorer")
    )
    assert '"synthetic", got "context"' in kind.replace(" |", ",")
    assert kind.count('"context"') == 1 and scorer.count('"recall"') == 1  # only as given


def test_facts_are_the_same_for_a_seed_and_differ_between_prompts() -> None:
    assert ladder_facts(LADDER, 1024, 0) == FACTS
    assert ladder_facts(LADDER, 1024, 1) != FACTS
    assert all(isinstance(f, RecallFact) and len(f.code) == 6 for f in FACTS)


def test_an_answer_is_long_enough_to_time_its_decode(tmp_path: Path) -> None:
    """min_tokens keeps the model writing past its line of codes: decode tok/s rests on 64
    tokens or more, not on a dozen."""
    events, rows, _ = _ladder_run(tmp_path, "1k")
    sent = [e for e in events if isinstance(e, RequestFinished)]
    assert sent and all((e.tokens_out or 0) >= 64 and e.score_verified == 1.0 for e in sent)
    assert rows[0]["decode_tps_mean"] == pytest.approx(300.0, rel=0.1)  # the endpoint's


def test_the_command_lines_help_is_whole() -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0


def test_a_server_that_refuses_min_tokens_gets_each_prompt_again_without(tmp_path: Path) -> None:
    """transformers serve answers vLLM's sampling fields with HTTP 422: the refusal is kept as
    a probe, and the ladder goes on without min_tokens."""
    quirk = "[endpoint.sim.quirks]\nvllm_sampling_fields = false\n"
    events, rows, _ = _ladder_run(tmp_path, "1k", sim=quirk)
    refused = [e for e in events if isinstance(e, ProbeFinished) and e.purpose == "length_fields"]
    assert len(refused) == 1 and refused[0].http_status == 422
    sent = [e for e in events if isinstance(e, RequestFinished)]
    assert len(sent) == 2 and all(e.status == "ok" and e.score_verified == 1.0 for e in sent)
    assert rows[0]["recall_mean"] == 1.0


def test_headless_json_ends_with_the_ladders_rows(tmp_path: Path) -> None:
    events, rows, _ = _ladder_run(tmp_path, "1k,4k")
    out = io.StringIO()
    panes = PaneJsonLines(stream=out)
    for event in events:
        panes(event)
    panes.print_server_view()
    printed = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r for r in printed if r["kind"] == "context"] == rows  # as the report has them

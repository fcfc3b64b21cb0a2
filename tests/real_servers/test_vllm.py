"""Against vLLM's CPU build: the run's rows are the server's own counts, token for token.

One server (the head-size-64 model with the hermes tool parser) serves every test here, through a
wire tap that records what crossed the socket and the usage the server sent on each reply.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from nvfp4_tui.config.context_ladder import longest
from nvfp4_tui.store.reader import open_snapshot
from tests.real_servers import servers, tool
from tests.real_servers.servers import RunningServer
from tests.support.wire_tap import Exchange, WireTap

pytestmark = [pytest.mark.real, pytest.mark.timeout(servers.TEST_TIMEOUT_S)]

CHAT = "/v1/chat/completions"
LEVELS = [1, 4]


@pytest.fixture(scope="module")
def tapped_run(
    vllm: RunningServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[tool.ToolRun, list[Exchange], dict[str, float]]]:
    """One run of two suites at c=1 and c=4 through the tap, and vLLM's counters' change."""
    work = tmp_path_factory.mktemp("vllm-run")
    with WireTap(vllm.port) as tap:
        profile = tool.write_profile(
            work / "profile.toml", tap.url, suites=["english", "tool_call"], concurrency=LEVELS
        )
        before = tool.vllm_counters(vllm.url)
        ran = tool.run(profile, work / "out")
        after = tool.vllm_counters(vllm.url)
        exchanges = tap.exchanges(CHAT)
    assert ran.returncode == 0, ran.output
    yield ran, exchanges, {name: after[name] - before[name] for name in after}


def test_every_row_counts_what_the_server_sent(tapped_run) -> None:
    ran, exchanges, _ = tapped_run
    rows = ran.snapshot.requests()
    assert rows.height > 0
    assert rows.filter(pl.col("status") == "error").is_empty()
    assert set(rows.get_column("http_status")) == {200}
    assert not rows.get_column("tokens_estimated").any()  # vLLM sends usage
    # The wire's usage per reply, rows and probe alike: the same multiset of counts.
    wire = sorted((e.prompt_tokens, e.completion_tokens) for e in exchanges)
    counted = [(r["tokens_in"], r["tokens_out"]) for r in rows.iter_rows(named=True)]
    counted += [(p.tokens_in, p.tokens_out) for p in ran.probes()]
    assert sorted(counted) == wire


def test_rows_and_probes_add_up_to_vllms_counters(tapped_run) -> None:
    ran, exchanges, change = tapped_run
    rows = ran.snapshot.requests()
    probes = ran.probes()
    assert len(probes) == 1  # the warm-up: on the wire, in the counters, in no row
    assert len(exchanges) == rows.height + len(probes)
    prompt = rows.get_column("tokens_in").sum() + sum(p.tokens_in or 0 for p in probes)
    generated = rows.get_column("tokens_out").sum() + sum(p.tokens_out or 0 for p in probes)
    assert change["vllm:prompt_tokens_total"] == prompt
    assert change["vllm:generation_tokens_total"] == generated


def test_the_servers_figures_are_in_the_report(tapped_run) -> None:
    ran, _, _ = tapped_run
    server_rows = [r for r in tool.report_rows(ran.snapshot) if r.get("kind") == "server"]
    assert sorted(r["concurrency"] for r in server_rows) == LEVELS
    for row in server_rows:
        assert row["endpoint"] == "real"
        for key in (
            "client_ttft_mean_s",
            "server_ttft_mean_s",
            "client_itl_mean_s",
            "server_itl_mean_s",
            "server_queue_mean_s",
            "server_prefill_mean_s",
            "server_decode_mean_s",
            "kv_cache_peak_pct",
            "kv_cache_mean_pct",
            "running_peak",
            "waiting_peak",
            "preemptions",
        ):
            assert row[key] is not None, key
        # TTFT comes from vLLM's histograms, counted for every request. running_peak is a
        # gauge read at each scrape: a short level can fall between two, reading 0 (CI saw
        # it with a second CI run beside it), so only its presence is asserted above.
        assert row["server_ttft_mean_s"] > 0 and row["running_peak"] >= 0


def test_the_wire_saw_every_row_first(tapped_run) -> None:
    """Measured, not asserted: the client's TTFT and E2E never precede the wire's (what
    benchmarks/real_server.py reports as client - wire)."""
    ran, exchanges, _ = tapped_run
    import real_server  # benchmarks/, on the path by this directory's conftest

    pairs = real_server.pair(ran.snapshot.requests(), exchanges, ran.probes())
    assert len(pairs) == ran.snapshot.requests().height
    for row, wire in pairs:
        assert wire.ttft_s is not None and row["ttft_s"] >= wire.ttft_s
        assert wire.e2e_s is not None and row["e2e_s"] >= wire.e2e_s


def test_init_writes_a_profile_that_runs(vllm: RunningServer, tmp_path: Path) -> None:
    profile = tmp_path / "profile.toml"
    done = tool.cli("init", vllm.url, "--out", str(profile))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "max_tokens" in profile.read_text()  # a random model never stops by itself
    # The profile as written; the plan narrowed on the command line to one prompt a suite.
    ran = tool.run(
        profile, tmp_path / "out", "--limit", "1", "--requests", "1", "--concurrency", "1"
    )
    assert ran.returncode == 0, ran.output
    assert ran.snapshot.status == "complete"
    rows = ran.snapshot.requests()
    assert rows.height > 0 and rows.filter(pl.col("status") == "error").is_empty()


def test_synthetic_lengths_are_written_to_the_token(vllm: RunningServer, tmp_path: Path) -> None:
    """vLLM takes ignore_eos and min_tokens: every answer is exactly as long as asked, and the
    prompt's input counts only the chat template beyond what was asked."""
    profile = tool.write_profile(
        tmp_path / "profile.toml", vllm.url, suites=["english"], concurrency=[2], max_tokens=256
    )
    spec = "isl=48,osl_dist=uniform,osl_min=8,osl_max=40,prompts=6,seed=3"
    ran = tool.run(profile, tmp_path / "out", "--synthetic", spec)
    assert ran.returncode == 0, ran.output
    rows = ran.snapshot.requests()
    assert set(rows.get_column("suite")) == {"synthetic"}
    assert rows.height == 6 and rows.filter(pl.col("status") != "ok").is_empty()
    assert rows.get_column("tokens_out").to_list() == rows.get_column("tokens_out_asked").to_list()
    assert len(set(rows.get_column("tokens_out_asked"))) > 1  # drawn, not one fixed length
    gaps = (rows.get_column("tokens_in") - rows.get_column("tokens_in_asked")).to_list()
    assert min(gaps) >= 0, gaps
    (lengths,) = [r for r in tool.report_rows(ran.snapshot) if r.get("kind") == "lengths"]
    assert lengths["output_exact"] == 6 and lengths["output_short"] == 0
    assert lengths["output_gap_mean"] == 0


def test_a_trace_with_shared_prefixes_moves_the_prefix_cache(
    vllm: RunningServer, tmp_path: Path
) -> None:
    """Four requests of a Mooncake trace begin with the same block (hash id 1), two have their
    own words: vLLM's prefix cache hits on the shared beginning, and every line is sent."""
    trace = tmp_path / "trace.jsonl"
    lines = [
        {"timestamp": i * 200, "input_length": 120 + 10 * i, "output_length": 8, "hash_ids": ids}
        for i, ids in enumerate([[1], [1], [], [1], [], [1]])
    ]
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines))
    profile = tool.write_profile(
        tmp_path / "profile.toml", vllm.url, suites=["english"], concurrency=[1]
    )
    before = tool.vllm_counters(vllm.url)
    ran = tool.run(profile, tmp_path / "out", "--trace", str(trace), "--trace-speedup", "4")
    after = tool.vllm_counters(vllm.url)
    assert ran.returncode == 0, ran.output
    rows = ran.snapshot.requests()
    assert rows.height == 6 and rows.filter(pl.col("status") != "ok").is_empty()
    assert rows.get_column("tokens_out").to_list() == [8] * 6
    # The 2nd, 4th and 6th shared line find at least one whole block of the 1st's cached.
    assert after[tool.PREFIX_HITS] - before[tool.PREFIX_HITS] >= 3 * 16
    (schedule,) = [r for r in tool.report_rows(ran.snapshot) if r.get("kind") == "schedule"]
    assert schedule["sent"] == 6 and schedule["unsent"] == 0


def test_sessions_send_their_history_and_vllm_caches_it(
    vllm: RunningServer, tmp_path: Path
) -> None:
    """Two conversations of three turns: each turn's prompt holds the earlier turns (vLLM
    counts them), and the prefix cache hits on the history it prefilled before."""
    profile = tool.write_profile(
        tmp_path / "profile.toml", vllm.url, suites=["english"], concurrency=[2]
    )
    before = tool.vllm_counters(vllm.url)
    ran = tool.run(profile, tmp_path / "out", "--sessions", "2", "--turns", "3")
    after = tool.vllm_counters(vllm.url)
    assert ran.returncode == 0, ran.output
    rows = ran.snapshot.requests().sort("t")
    assert rows.height == 6 and rows.filter(pl.col("status") != "ok").is_empty()
    for session in ("s0000", "s0001"):
        turns = rows.filter(pl.col("prompt_id").str.starts_with(session))
        assert turns.get_column("turn").to_list() == [1, 2, 3]
        inputs = turns.get_column("tokens_in").to_list()
        assert inputs[0] < inputs[1] < inputs[2], inputs
    assert after[tool.PREFIX_HITS] - before[tool.PREFIX_HITS] >= 4 * 16  # turns 2 and 3
    turn_rows = [r for r in tool.report_rows(ran.snapshot) if r.get("kind") == "turns"]
    assert [r["turn"] for r in turn_rows] == [1, 2, 3]


def test_a_ramped_plan_in_two_trials_sliced(vllm: RunningServer, tmp_path: Path) -> None:
    """--ramp-s, --trials and --slice against vLLM: two snapshots, each phase's slices adding
    up to its rows, and the trials' table over both."""
    profile = tool.write_profile(
        tmp_path / "profile.toml", vllm.url, suites=["english"], concurrency=[2]
    )
    out = tmp_path / "out"
    args = ["--ramp-s", "1", "--trials", "2", "--slice", "2", "--headless", "--out", str(out)]
    done = tool.cli("run", str(profile), *args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Trials: each figure's mean over 2 runs" in done.stdout
    snapshots = sorted(out.iterdir())
    assert [p.name.rsplit("-", 1)[1] for p in snapshots] == ["trial1", "trial2"]
    for path in snapshots:
        report = tool.cli("report", str(path), "--format", "json", timeout_s=120)
        rows = json.loads(report.stdout)
        sliced = [r for r in rows if r.get("kind") == "slice"]
        requests = open_snapshot(path).requests()
        assert sum(r["requests"] for r in sliced) == requests.height > 0
        assert {r["slice_s"] for r in sliced} == {2.0}  # the run's own slice, from its profile


def test_the_context_ladder_climbs_to_the_models_own_context(
    vllm: RunningServer, tmp_path: Path
) -> None:
    """The tiny model's tokenizer cuts our short words in about three: the rungs are sized by
    vLLM's own counts of two calibration prompts, so each is as long as asked in its tokens,
    and ``max`` fills the 2048 it said it takes, with no request refused for its length.
    (Under ~512 of its tokens the header, facts and question alone are longer than asked.)"""
    profile = tool.write_profile(
        tmp_path / "profile.toml", vllm.url, suites=["english"], concurrency=[1]
    )
    ran = tool.run(profile, tmp_path / "out", "--context-lengths", "512,1k,max")
    assert ran.returncode == 0, ran.output
    rows = ran.snapshot.requests()
    assert set(rows.get_column("suite")) == {"context_512", "context_1k", "context_max"}
    assert rows.filter(pl.col("status") == "error").is_empty(), rows.get_column("error_message")
    ladder = [r for r in tool.report_rows(ran.snapshot) if r.get("kind") == "context"]
    assert [(r["suite"], r["input_tokens_asked"]) for r in ladder] == [
        ("context_512", 512),
        ("context_1k", 1024),
        ("context_max", longest(servers.MAX_MODEL_LEN)),
    ]
    for row in ladder:
        asked = row["input_tokens_asked"]
        assert row["input_tokens_mean"] == pytest.approx(asked, rel=0.03), row
        assert row["ttft_mean_s"] > 0 and row["prefill_tps_mean"] > 0
        assert 0.0 <= row["recall_mean"] <= 1.0  # random weights: whatever it says, checked
        assert set(row["recall_by_depth"]) == {"0", "0.5", "1"}


def test_the_capacity_step_sees_vllm_queue_when_its_kv_cache_is_small(
    vllm_small_kv: RunningServer, tmp_path: Path
) -> None:
    """A KV cache of 20 blocks of 128 (2,560 tokens) holds two 1K-token requests: at four in flight
    vLLM runs two and queues the rest (``vllm:num_requests_waiting``), and the report says
    how many fit from what it ran then."""
    profile = tool.write_profile(
        tmp_path / "profile.toml", vllm_small_kv.url, suites=["english"], concurrency=[1]
    )
    extra = ("--context-lengths", "1k", "--concurrency", "1,4", "--duration", "6")
    ran = tool.run(profile, tmp_path / "out", *extra)
    assert ran.returncode == 0, ran.output
    report = tool.report_rows(ran.snapshot)
    levels = {r["concurrency"]: r for r in report if r.get("kind") == "context"}
    assert set(levels) == {1, 4} and all(r["server_polls"] > 0 for r in levels.values())
    assert levels[1]["server_waiting_peak"] == 0
    assert levels[4]["server_waiting_peak"] >= 1, levels[4]
    (capacity,) = [r for r in report if r.get("kind") == "context_capacity"]
    assert capacity["full_at_concurrency"] == 4 and not capacity["at_least"]
    assert capacity["fits"] == levels[4]["server_running_peak"]
    assert 1 <= capacity["fits"] <= 2  # 2,560 tokens hold two prompts of 1K and their answers
    # The cache as vLLM's cache_config_info says it: the CPU build's blocks are 128 tokens.
    assert (capacity["kv_block_size"], capacity["kv_blocks"]) == (128, 20)

"""The context ladder's capacity step end to end (issue 29, items 4 and 5): a simulated endpoint
whose KV cache holds two 4K-token requests in 16 bits runs a rung at 1, 2 and 4 in flight; the
server's own gauges, polled while each level ran, show it queueing at 4, and the report says it
fits 2. The same endpoint with an FP8 cache (the same bytes, twice the tokens) fits all four,
and ``compare`` sets the two side by side by length: the seed's FP8-KV experiment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.output.report import render_snapshot
from nvfp4_tui.store.reader import open_snapshot
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite

pytestmark = pytest.mark.slow  # whole runs against the simulator, polled once a second

# In 16 bits 10,000 tokens: two requests of ~4,100 (prompt and answer) fit, a third waits. At
# 10 tok/s an answer of a few lines takes about two seconds: each level spans a few polls.
KV_CACHE_TOKENS_8BIT = 20_000


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The ladder's 4K rung at c=1, 2 and 4, once with a 16-bit cache and once with FP8."""
    made = {}
    for dtype in ("auto", "fp8"):
        work = tmp_path_factory.mktemp(dtype)
        write_suite(work / "suites", "essay")
        sim = (
            f"kv_cache_tokens = {KV_CACHE_TOKENS_8BIT}\nprefill_tps = 8000\n"
            f'kv_cache_dtype = "{dtype}"\n[endpoint.sim.measured_with]\nkv_cache_dtype = "{dtype}"'
        )
        endpoints = [endpoint_toml("e0", 0, decode_tps=10.0, ttft_s=0.1, sim_extra=sim)]
        path = write_profile(work, endpoints, suites=["essay"], concurrency=[1], requests=2)
        out = work / "out"
        argv = ["demo", "--profile", str(path), "--out", str(out), "--headless"]
        assert main([*argv, "--context-lengths", "4k", "--concurrency", "1,2,4"]) == 0
        (made[dtype],) = out.iterdir()
    return made


def _report(snapshot: Path) -> list[dict]:
    return json.loads(render_snapshot(open_snapshot(snapshot), "json"))


def test_a_rung_that_overfills_the_kv_cache_queues_and_the_report_says_what_fits(
    runs: dict[str, Path],
) -> None:
    report = _report(runs["auto"])
    levels = [r for r in report if r.get("kind") == "context"]
    assert [(r["suite"], r["concurrency"], r["requests"]) for r in levels] == [
        ("context_4k", c, 4) for c in (1, 2, 4)
    ]
    assert all(r["recall_mean"] == 1.0 and r["server_polls"] > 0 for r in levels)
    by_level = {r["concurrency"]: r for r in levels}
    assert by_level[1]["server_waiting_peak"] == by_level[2]["server_waiting_peak"] == 0
    assert by_level[4]["server_waiting_peak"] >= 1
    assert by_level[4]["server_running_peak"] == 2
    (capacity,) = [r for r in report if r.get("kind") == "context_capacity"]
    assert capacity == {
        "kind": "context_capacity",
        "endpoint": "e0",
        "suite": "context_4k",
        "input_tokens_asked": 4096,
        "fits": 2,
        "at_least": False,
        "full_at_concurrency": 4,
        # What the server said of its cache at run start (vLLM's cache_config_info).
        "kv_cache_dtype": "auto",
        "kv_block_size": 16,
        "kv_blocks": KV_CACHE_TOKENS_8BIT // 2 // 16,
    }
    text = render_snapshot(open_snapshot(runs["auto"]), "text")
    assert "fits 2 × 4,096 tokens at once" in text and "auto, 625 blocks × 16 tokens" in text


def test_compare_sets_an_fp8_cache_beside_a_16_bit_one_by_length(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    (fp8,) = [r for r in _report(runs["fp8"]) if r.get("kind") == "context_capacity"]
    assert (fp8["fits"], fp8["at_least"], fp8["kv_blocks"]) == (4, True, 1250)
    assert main(["compare", str(runs["auto"]), str(runs["fp8"]), "--format", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert any("kv_cache_dtype" in change for change in body["configuration_changes"])
    (capacity,) = body["context_capacity"]
    assert (capacity["a"]["fits"], capacity["b"]["fits"]) == (2, 4)
    assert [(p["suite"], p["concurrency"]) for p in body["context"]] == [
        ("context_4k", c) for c in (1, 2, 4)
    ]
    assert all(p["a"]["recall_mean"] == p["b"]["recall_mean"] == 1.0 for p in body["context"])
    assert main(["compare", str(runs["auto"]), str(runs["fp8"])]) == 0
    text = capsys.readouterr().out
    assert "Context capacity, A → B" in text
    assert "2 (auto, 625 blocks × 16 tokens)" in text and "≥ 4 (fp8, 1,250 blocks × 16" in text

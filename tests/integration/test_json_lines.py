"""``demo --headless --json``: one JSON object per endpoint per second with what its pane shows,
and nothing else on stdout; the last objects give each endpoint's final figures per level."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite

KEYS = {
    "t",
    "endpoint",
    "status",
    "level",
    "shown_level",
    "decode_tps",
    "decode_kind",
    "decode_tps_p50",
    "aggregate_tps",
    "ttft_p50_s",
    "in_flight",
    "target",
    "score",
    "quality",
    "decode_tps_pooled_by_level",
    "decode_tps_p50_by_level",
    "ttft_p50_s_by_level",
    "server",
    "timing_doubt_s",
    "time_scale",
}


def test_json_needs_headless(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--json"]) == 2
    assert "--json goes with --headless" in capsys.readouterr().err


@pytest.mark.slow  # a whole demo, headless
def test_demo_json_lines_carry_the_panes_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 200 tokens at 100 tok/s, twice real time: a request lasts 1 s, each phase a few seconds, so
    # several of the per-second lines fall while streams decode.
    write_suite(tmp_path / "suites", "essay", max_tokens=200)
    endpoints = [
        endpoint_toml(eid, gpu, decode_tps=100.0, ttft_s=0.1) for gpu, eid in enumerate("ab")
    ]
    path = write_profile(tmp_path, endpoints, suites=["essay"], concurrency=[1, 2], requests=3)
    argv = ["demo", "--profile", str(path), "--out", str(tmp_path / "out"), "--headless"]
    assert main([*argv, "--json", "--time-scale", "2"]) == 0
    captured = capsys.readouterr()
    # The server's view per level follows the panes' lines (tests/integration/test_server_view).
    lines = [o for line in captured.out.splitlines() if "kind" not in (o := json.loads(line))]
    assert lines and all(set(line) == KEYS for line in lines)
    assert "snapshot:" in captured.err and "run complete" in captured.err
    assert {line["endpoint"] for line in lines} == {"a", "b"}
    assert all(line["time_scale"] == 2 for line in lines)
    # This suite has no verifying scorer: once scores arrive the default falls back, and says so.
    scored = [line for line in lines if line["quality"]["essay"]["n"]]
    assert scored and all(line["score"] == "heuristic" for line in scored)
    ts = [line["t"] for line in lines if line["endpoint"] == "a"]
    assert ts == sorted(ts)
    live = [line for line in lines if line["decode_kind"] == "live"]
    assert live and all(line["level"] in ("c=1", "c=2") for line in live)
    final = {line["endpoint"]: line for line in lines[-2:]}
    moments = [(line["endpoint"], line["t"]) for line in lines]
    assert len(final) == 2 and len(moments) == len(set(moments))  # the end is printed once
    for line in final.values():
        assert line["status"] == "done" and line["decode_kind"] == "final"
        assert set(line["decode_tps_pooled_by_level"]) == {"c=1", "c=2"}
        assert line["shown_level"] == "c=1"
        assert line["decode_tps"] == line["decode_tps_pooled_by_level"]["c=1"]
        assert line["decode_tps_p50"] == line["decode_tps_p50_by_level"]["c=1"]
        assert line["ttft_p50_s"] == line["ttft_p50_s_by_level"]["c=1"]
        assert line["server"] is None or line["server"]["peak"]
        essay = line["quality"]["essay"]
        assert (
            essay["n"] == 6 and 0 <= essay["ci95_low"] <= essay["mean"] <= essay["ci95_high"] <= 1
        )

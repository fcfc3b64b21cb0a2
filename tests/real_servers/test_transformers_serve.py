"""Against `transformers serve`: usage in a `choices: []` chunk of its own, no `[DONE]`, no
/metrics, one request at a time. The rows still count what the server sent and end `ok` or
`incomplete` (a finish_reason came), never as errors."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.real_servers import servers, tool
from tests.real_servers.servers import RunningServer
from tests.support.wire_tap import WireTap

pytestmark = [pytest.mark.real, pytest.mark.timeout(servers.TEST_TIMEOUT_S)]


def test_rows_count_what_transformers_serve_sent(
    transformers_server: RunningServer, tmp_path: Path
) -> None:
    model = transformers_server.spec.args[-1]  # it serves the model dir under its path
    with WireTap(transformers_server.port) as tap:
        profile = tool.write_profile(
            tmp_path / "profile.toml",
            tap.url,
            suites=["english"],
            concurrency=[1, 4],
            model=model,
        )
        ran = tool.run(profile, tmp_path / "out")
        exchanges = tap.exchanges("/v1/chat/completions")
    assert ran.returncode == 0, ran.output
    rows = ran.snapshot.requests()
    assert rows.height > 0
    assert rows.filter(pl.col("status") == "error").is_empty(), rows.select(
        "error_kind", "error_message"
    )
    assert set(rows.get_column("finish_reason")) <= {"stop", "length"}
    assert not rows.get_column("tokens_estimated").any()  # its usage chunk was read
    wire = sorted((e.prompt_tokens, e.completion_tokens) for e in exchanges)
    counted = [(r["tokens_in"], r["tokens_out"]) for r in rows.iter_rows(named=True)]
    counted += [(p.tokens_in, p.tokens_out) for p in ran.probes()]
    assert sorted(counted) == wire
    # No /metrics: no server figures, and no row claims any.
    assert not [r for r in tool.report_rows(ran.snapshot) if r.get("kind") == "server"]


def test_synthetic_prompts_go_without_the_length_fields_it_refuses(
    transformers_server: RunningServer, tmp_path: Path
) -> None:
    """transformers serve answers ignore_eos and min_tokens with HTTP 422: the refusal is kept
    as a probe, the prompt is sent again without them, and the report says so."""
    model = transformers_server.spec.args[-1]
    profile = tool.write_profile(
        tmp_path / "profile.toml",
        transformers_server.url,
        suites=["english"],
        concurrency=[1],
        max_tokens=256,
        model=model,
    )
    ran = tool.run(profile, tmp_path / "out", "--synthetic", "isl=40,osl=12,prompts=3")
    assert ran.returncode == 0, ran.output
    rows = ran.snapshot.requests()
    assert rows.height == 3 and rows.filter(pl.col("status") != "ok").is_empty()
    assert (rows.get_column("tokens_out") <= 12).all()
    (refused,) = [p for p in ran.probes() if p.purpose == "length_fields"]
    assert refused.http_status == 422 and "ignore_eos" in (refused.error_message or "")
    (lengths,) = [r for r in tool.report_rows(ran.snapshot) if r.get("kind") == "lengths"]
    assert lengths["requests"] == 3
    assert "Unexpected fields" in lengths["length_fields_refused"]

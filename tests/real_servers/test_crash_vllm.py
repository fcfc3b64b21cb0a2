"""Against a vLLM that refuses tool choice (no tool parser flags) and whose engine dies on its
first generation (a head size of 16, which its CPU attention does not support).

The tests run in this order on one server: the refusal first (rejected before the engine runs),
then the death.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.events import EndpointStatus
from tests.real_servers import servers, tool
from tests.real_servers.servers import RunningServer

pytestmark = [pytest.mark.real, pytest.mark.timeout(servers.TEST_TIMEOUT_S)]

REFUSAL = "--enable-auto-tool-choice"  # in vLLM's HTTP 400 for tool_choice "auto"
GIVE_UP_S = 30.0


def test_tool_choice_without_the_parser_is_http_400_with_vllms_message(
    vllm_fragile: RunningServer, tmp_path: Path
) -> None:
    profile = tool.write_profile(
        tmp_path / "profile.toml", vllm_fragile.url, suites=["tool_call"], concurrency=[1]
    )
    ran = tool.run(profile, tmp_path / "out")
    rows = ran.snapshot.requests()
    assert rows.height > 0
    assert set(rows.get_column("status")) == {"error"}
    assert set(rows.get_column("error_kind")) == {"http_4xx"}
    assert set(rows.get_column("http_status")) == {400}
    assert all(REFUSAL in m for m in rows.get_column("error_message"))
    (probe,) = ran.probes()
    assert probe.http_status == 400  # the warm-up was refused too, and is the first error
    assert rows.sort("t").row(0, named=True)["request_index"] == -1
    # What the user sees: the report's errors table names the server's message.
    errors = [r for r in tool.report_rows(ran.snapshot) if r.get("kind") == "error"]
    assert [(r["endpoint"], r["error_kind"]) for r in errors] == [("real", "http_4xx")]
    assert REFUSAL in errors[0]["first_message"]
    assert errors[0]["count"] == rows.height
    assert vllm_fragile.alive()  # refused before the engine ran: the next test kills it


def test_an_engine_that_dies_ends_the_run_down_with_vllms_message(
    vllm_fragile: RunningServer, tmp_path: Path
) -> None:
    # When a request meets the dead server before the run's last watch does, the endpoint waits
    # out an outage for a server that never comes back: the default 600 s is the whole bound of
    # tool.run, so the test gives up sooner (it failed so once in CI, on a busy box).
    profile = tool.write_profile(
        tmp_path / "profile.toml",
        vllm_fragile.url,
        suites=["english"],
        concurrency=[1],
        outage_give_up_s=GIVE_UP_S,
    )
    ran = tool.run(profile, tmp_path / "out")
    assert ran.returncode == exit_codes.ALL_DOWN, ran.output
    assert ran.snapshot.status == "aborted"
    rows = ran.snapshot.requests()
    errors = rows.filter(pl.col("status") == "error")
    assert errors.height == rows.height > 0  # not one silent success
    first = rows.sort("t").row(0, named=True)
    assert "EngineCore" in (first["error_message"] or ""), first
    report = tool.report_rows(ran.snapshot)
    error_rows = [r for r in report if r.get("kind") == "error"]
    assert any("EngineCore" in (r["first_message"] or "") for r in error_rows), error_rows
    statuses = [
        e.status
        for e in ran.snapshot.events()
        if isinstance(e, EndpointStatus) and e.endpoint_id == "real"
    ]
    assert statuses[-1] == "down"

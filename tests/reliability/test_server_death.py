"""A server that dies under a request: an error object in an HTTP 200 stream, then gone.

vLLM's engine does this on a model it cannot run (head size 16 on CPU): the first request gets
HTTP 200, one SSE error event and [DONE], and the server exits. The run must end with error rows
carrying the server's message, the endpoint ``down``, the rest of the fleet untouched, and exit
``exit_codes.SERVER_DIED``, not ``done`` and 0. The simulator plays it (``engine_crash_at``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.core import exit_codes
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.sim.quirks import ENGINE_CRASH_MESSAGE
from nvfp4_tui.store.reader import open_snapshot
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.runs import pointed_at, record_run, rows_of, statuses_of, write_run_profile

REQUESTS = 3
BOUND_S = 60.0
CRASHES = "engine_crash_at = 1\n"


def fleet_profile(directory: Path, *, requests: int, warmup: bool) -> Path:
    endpoints = [
        endpoint_toml("steady", 0, decode_tps=400.0, ttft_s=0.01),
        endpoint_toml("dies", 1, decode_tps=400.0, ttft_s=0.01)
        + f"\n[endpoint.sim.quirks]\n{CRASHES}",
    ]
    path = write_run_profile(
        directory, endpoints, requests=requests, timeout_s=5.0, outage_give_up_s=1.0
    )
    if warmup:
        path.write_text(path.read_text().replace("warmup = false", "warmup = true"))
    return path


def test_a_server_dying_on_its_warm_up_ends_down_with_its_message_and_exit_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = fleet_profile(tmp_path, requests=REQUESTS, warmup=True)
    out = tmp_path / "out"
    with SimProcess(path, port_base=0) as sim:
        live = pointed_at(path, sim.urls)
        assert main(["run", str(live), "--out", str(out), "--headless"]) == exit_codes.SERVER_DIED
    assert exit_codes.SERVER_DIED == 5
    printed = capsys.readouterr().out
    assert "run complete" in printed
    assert f"{'dies':<16} was down:" in printed and ENGINE_CRASH_MESSAGE[:30] in printed
    assert "a server died during the run (dies): exit 5" in printed
    # The headless phase line counts the warm-up's failure and the HTTP 500s vLLM's API server
    # answers the plan with until it exits.
    (line,) = [x for x in printed.splitlines() if x.startswith("dies ") and " req " in x]
    assert f"   {1 + REQUESTS} req   {1 + REQUESTS} err" in line

    (snapshot_dir,) = (p for p in out.iterdir() if p.is_dir())
    snapshot = open_snapshot(snapshot_dir)
    rows = rows_of(snapshot)
    assert rows["steady"].height == REQUESTS and "error" not in rows["steady"]["status"]
    dies = rows["dies"].sort("t")
    assert dies.get_column("status").to_list() == ["error"] * (1 + REQUESTS)
    assert dies.get_column("error_kind").to_list() == ["protocol"] + ["http_5xx"] * REQUESTS
    assert all(ENGINE_CRASH_MESSAGE in m for m in dies.get_column("error_message"))
    assert dies.get_column("http_status").to_list() == [200] + [500] * REQUESTS
    last = statuses_of(snapshot.events(), "dies")[-1]
    assert last.status == "down" and "server error in stream" in (last.message or "")
    assert statuses_of(snapshot.events(), "steady")[-1].status == "done"
    # Following the finished run says the same.
    assert main(["follow", str(snapshot_dir), "--headless"]) == exit_codes.SERVER_DIED


@pytest.mark.parametrize("requests", [1, REQUESTS])
async def test_a_server_dying_on_a_planned_request_ends_down_not_done(
    tmp_path: Path, requests: int
) -> None:
    # One request: the plan ends with the crash, and the endpoint must not read "done".
    profile = load_profile(fleet_profile(tmp_path, requests=requests, warmup=False))
    async with SimFleet(profile.endpoints, time_scale=5.0) as fleet, asyncio.timeout(BOUND_S):
        result, snapshot = await record_run(with_urls(profile, fleet.urls), tmp_path / "out")
    assert result.status == "complete" and result.exit_code == exit_codes.SERVER_DIED
    assert set(result.died) == {"dies"} and set(result.down) == {"dies"}
    rows = rows_of(snapshot)
    assert rows["steady"].height == requests and "error" not in rows["steady"]["status"]
    dies = rows["dies"].sort("t")
    assert set(dies.get_column("status")) == {"error"}
    assert ENGINE_CRASH_MESSAGE in dies.get_column("error_message")[0]
    last = statuses_of(snapshot.events(), "dies")[-1]
    assert last.status == "down" and ENGINE_CRASH_MESSAGE[:30] in (last.message or "")

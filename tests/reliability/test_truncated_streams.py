"""Streams cut short are errors everywhere: llama.cpp's server aborting them at c=4.

A new request makes llama.cpp's server end every stream in flight with a role chunk and [DONE],
no finish_reason and no content; those rows once read ``ok`` with 0 tokens, and the pane said
"no errors". Played by the simulator (``new_request_aborts``), each is a ``truncated`` error
row, and the headless line, the leaderboard and the pane count it as an error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.store.reader import open_snapshot
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.runs import pointed_at, rows_of, write_run_profile

CONCURRENCY = 4
REQUESTS = 3  # per prompt of the one-prompt suite: 3 sent 4 at a time, all overlapping


def test_aborted_streams_are_truncated_errors_in_every_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llamacpp = endpoint_toml("llamacpp", 0, decode_tps=100.0, ttft_s=0.5) + (
        '\n[endpoint.sim.quirks]\nusage = "none"\nnew_request_aborts = true\n'
    )
    path = write_run_profile(
        tmp_path, [llamacpp], requests=REQUESTS, concurrency=CONCURRENCY, timeout_s=10.0
    )
    out = tmp_path / "out"
    with SimProcess(path, port_base=0) as sim:
        assert main(["run", str(pointed_at(path, sim.urls)), "--out", str(out), "--headless"]) == 0
    printed = capsys.readouterr().out

    (snapshot_dir,) = (p for p in out.iterdir() if p.is_dir())
    snapshot = open_snapshot(snapshot_dir)
    rows = rows_of(snapshot)["llamacpp"]
    truncated = rows.filter(rows["error_kind"] == "truncated")
    # All three go out at once; each arrival aborts those before it, so only the last answers.
    assert rows.height == REQUESTS and truncated.height == REQUESTS - 1
    assert set(truncated["status"]) == {"error"} and truncated["ttft_s"].null_count() == 2
    assert "error" not in rows.filter(rows["error_kind"].is_null())["status"]

    (line,) = [x for x in printed.splitlines() if x.startswith("llamacpp ") and " req " in x]
    assert f"{REQUESTS:>4} req {REQUESTS - 1:>3} err" in line
    state = FleetState()
    state.apply_all(snapshot.events())
    (cell,) = state.figures.rows()
    assert (cell.errors, cell.ok + cell.incomplete) == (REQUESTS - 1, 1)
    pane = state.endpoints["llamacpp"]
    assert pane.requests_error == REQUESTS - 1
    assert pane.last_error is not None and pane.last_error.kind == "truncated"

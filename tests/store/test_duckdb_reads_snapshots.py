"""Snapshots are plain Parquet tables: DuckDB, reading many runs with one glob, gets the same
totals as ``nvfp4-tui report --format json`` (README: "Many runs at once")."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.core.events import Event, RequestFinished, RunFinished
from tests.support.factories import T0, endpoint_info, request, seeded_run, write_snapshot

# The report's cell totals in SQL: a row that failed is counted, never timed or scored; a
# trimmed one (warm-up, cool-down) is counted and scored, not timed.
TOTALS_SQL = """
SELECT
    regexp_extract(filename, '([^/]+)/requests\\.parquet$', 1) AS run,
    endpoint_id, suite, concurrency,
    count(*) FILTER (WHERE status <> 'error') AS n,
    count(*) FILTER (WHERE status = 'incomplete') AS incomplete,
    count(*) FILTER (WHERE status = 'error' AND coalesce(error_kind, '') <> 'suspect') AS errors,
    avg(decode_tps) FILTER (
        WHERE status <> 'error' AND NOT coalesce(trimmed, false) AND isfinite(decode_tps)
    ) AS decode_tps_mean,
    avg(tokens_out) FILTER (
        WHERE status <> 'error' AND NOT coalesce(trimmed, false) AND tokens_out IS NOT NULL
    ) AS tokens_out_mean
FROM read_parquet('{root}/*/requests.parquet', filename = true, union_by_name = true)
GROUP BY ALL
ORDER BY ALL
"""


def _run(run_id: str, seed: int) -> list[Event]:
    endpoints = [endpoint_info("a", 0), endpoint_info("b", 1)]
    events = seeded_run(run_id, seed, endpoints, ["english", "math"], n=12)
    finished = events.pop()
    assert isinstance(finished, RunFinished)
    extra: list[RequestFinished] = [
        request("a", t=T0 + 50, request_index=90, status="error", error_kind="http_5xx"),
        request("a", t=T0 + 51, request_index=91, status="incomplete", tokens_out=256,
                decode_tps=99.0, ttft_s=0.3, e2e_s=2.0),
        request("b", t=T0 + 52, request_index=92, decode_tps=500.0, tokens_out=7,
                trimmed=True),
    ]  # fmt: skip
    return [*events, *extra, finished]


def test_duckdb_over_many_snapshots_matches_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "snapshots"
    paths = [write_snapshot(root, run_id, _run(run_id, seed)) for seed, run_id in enumerate("xy")]
    rows = duckdb.sql(TOTALS_SQL.format(root=root)).fetchall()
    by_cell = {(run, e, s, c): rest for run, e, s, c, *rest in rows}
    assert {key[0] for key in by_cell} == {"x", "y"}
    compared = 0
    for path in paths:
        assert main(["report", "--format", "json", str(path)]) == 0
        for cell in json.loads(capsys.readouterr().out):
            if "kind" in cell:
                continue  # the rows beside the leaderboard (server view, errors, capacity)
            n, incomplete, errors, decode, tokens = by_cell[
                (path.name, cell["endpoint"], cell["suite"], cell["concurrency"])
            ]
            assert (n, incomplete, errors) == (cell["n"], cell["incomplete"], cell["errors"])
            assert decode == pytest.approx(cell["decode_tps_mean"], rel=1e-9)
            assert tokens == pytest.approx(cell["tokens_out_mean"], rel=1e-9)
            compared += 1
    assert compared == len(by_cell) == 8  # 2 runs x 2 endpoints x 2 suites
    # The rows this test added are in the totals: an error, an incomplete, an untimed one.
    assert tuple(by_cell[("x", "a", "english", 1)][:3]) == (13, 1, 1)
    assert by_cell[("x", "b", "english", 1)][0] == 13

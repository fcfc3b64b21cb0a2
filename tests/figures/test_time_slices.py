"""Time slices (issue 28, item 5): each phase's figures per slice of S seconds, in the report,
its JSON and a chart; requests by when they were sent, tokens by when their answer ended."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile, with_overrides
from nvfp4_tui.core.events import RequestFinished
from nvfp4_tui.core.figures.slices import SlicedRequest, slice_rows
from nvfp4_tui.output.report import render_snapshot
from nvfp4_tui.output.slices_table import run_slice_s
from nvfp4_tui.store.reader import open_snapshot
from tests.load.files import endpoint_toml, run_plan, write_profile
from tests.support.factories import write_snapshot


def _sent(at_s: float, e2e_s: float | None, failed: bool = False, phase: int = 0) -> SlicedRequest:
    return SlicedRequest(
        endpoint_id="a",
        suite="s",
        phase_index=phase,
        sent_s=at_s,
        ended_s=None if e2e_s is None else at_s + e2e_s,
        failed=failed,
        tokens_out=None if failed else 10,
        ttft_s=None if failed else 0.1 * (1 + at_s),
        e2e_s=e2e_s,
        decode_tps=50.0,
    )


def test_requests_count_where_sent_and_tokens_where_their_answer_ended() -> None:
    sent = [
        _sent(0.5, 1.0),
        _sent(1.0, 6.0),
        _sent(2.5, None, failed=True),
        _sent(0.2, 0.1, phase=1),
    ]
    rows = slice_rows(sent, slice_s=2.0)
    assert [(r.phase_index, r.index, r.start_s) for r in rows] == [
        (0, 0, 0.0),
        (0, 1, 2.0),
        (0, 2, 4.0),
        (0, 3, 6.0),  # the long answer ended at 7 s: the empty slices before it are kept
        (1, 0, 0.0),
    ]
    assert [r.requests for r in rows] == [2, 1, 0, 0, 1]
    assert [r.errors for r in rows] == [0, 1, 0, 0, 0]
    assert [r.throughput_tps for r in rows] == [5.0, 0.0, 0.0, 5.0, 5.0]
    assert rows[0].ttft_mean_s == pytest.approx(0.175) and rows[2].ttft_mean_s is None
    assert rows[0].json()["kind"] == "slice"
    with pytest.raises(ValueError, match="slice must be > 0"):
        slice_rows([], 0.0)


def test_the_runs_own_slice_comes_from_its_manifest_when_usable() -> None:
    assert run_slice_s({"profile": {"run": {"slice_s": 5}}}) == 5.0
    for bad in (
        None,
        {},
        {"profile": []},
        {"profile": {"run": {"slice_s": True}}},
        {"profile": {"run": {"slice_s": -1}}},
        {"profile": {"run": {"slice_s": float("nan")}}},
    ):
        assert run_slice_s(bad) is None


def test_a_run_sliced_adds_up_to_its_rows(tmp_path: Path) -> None:
    path = write_profile(
        tmp_path,
        "concurrency = [2]\nslice_s = 2",
        [endpoint_toml("a", 0, decode_tps=80.0)],
    )
    plan = plan_run(with_overrides(load_profile(path), slice_s=1.5, duration_s=6.0))
    assert plan.profile.run.slice_s == 1.5
    events, _ = run_plan(plan, time_scale=10.0)
    snapshot = open_snapshot(write_snapshot(tmp_path / "snapshots", "sliced", events))
    rows = [e for e in events if isinstance(e, RequestFinished)]
    report = json.loads(render_snapshot(snapshot, "json", slice_s=1.5))
    sliced = [r for r in report if r.get("kind") == "slice"]
    assert sliced and {r["slice_s"] for r in sliced} == {1.5}
    assert sum(r["requests"] for r in sliced) == len(rows)
    tokens = sum(r.tokens_out or 0 for r in rows if r.status != "error")
    assert sum(r["throughput_tps"] for r in sliced) * 1.5 == pytest.approx(tokens)
    text = render_snapshot(snapshot, "text", slice_s=1.5)
    assert "Time slices of 1.5 s per phase" in text and "Throughput per 1.5 s slice" in text
    # No slice asked, and none in the manifest (write_snapshot records no profile): no table.
    assert "Time slices" not in render_snapshot(snapshot, "text")

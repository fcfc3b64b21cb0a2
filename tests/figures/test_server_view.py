"""The server's view per level, from hand-built polls: gauges inside a level's window, deltas to
the level their interval overlaps most, exact pooled means, and the gap's note."""

from __future__ import annotations

import pytest

from nvfp4_tui.core.events import (
    Event,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RunStarted,
    ServerSample,
)
from nvfp4_tui.core.figures.server_view import ServerViewFold
from tests.support.factories import T0, endpoint_info, request


def _sample(t: float, **fields: float) -> ServerSample:
    return ServerSample(T0 + t, "a", **fields)  # type: ignore[arg-type]


def _run(*samples: ServerSample, lag_p99_s: float | None = None) -> list[Event]:
    plans = (PhasePlan("a", "essay", 1, 2), PhasePlan("a", "essay", 4, 2))
    events: list[Event] = [RunStarted(T0, "r", "r", (endpoint_info("a"),), plans)]
    for index, (level, start, end) in enumerate(((1, 1.0, 5.0), (4, 5.2, 9.0))):
        events.append(PhaseStarted(T0 + start, "a", "essay", level, index))
        for i in range(2):
            events.append(
                request(
                    t=T0 + start + i,
                    concurrency=level,
                    phase_index=index,
                    request_index=i,
                    ttft_s=0.1 * level + 0.1 * i,
                    e2e_s=1.0 + 0.1 * level + 0.1 * i,
                    chunks=101,
                )
            )
        events.append(
            PhaseFinished(
                T0 + end, "a", "essay", level, index, 2, 0, 200, end - start,
                loop_lag_p99_s=lag_p99_s,
            )
        )  # fmt: skip
    events += samples
    return sorted(events, key=lambda e: e.t)


def _rows(events: list[Event]):
    fold = ServerViewFold()
    for event in events:
        fold.apply(event)
    return {row.load.label: row for row in fold.rows()}


def test_no_polls_no_rows() -> None:
    assert _rows(_run()) == {}


def test_each_level_gets_its_gauges_and_the_deltas_its_polls_cover() -> None:
    rows = _rows(
        _run(
            _sample(0.5, requests_running=0, kv_cache_pct=0, preemptions_total=2),
            _sample(3.0, requests_running=1, requests_waiting=0, kv_cache_pct=10,
                    preemptions_total=2, ttft_count=1, ttft_mean_s=0.05,
                    prefix_cache_hit_pct=50, prefix_cache_queries=100),
            # Covers 3.0-5.5: mostly the first level's tail, though it falls in the second.
            _sample(5.5, requests_running=4, requests_waiting=2, kv_cache_pct=30,
                    preemptions_total=3, ttft_count=1, ttft_mean_s=0.15,
                    prefix_cache_hit_pct=100, prefix_cache_queries=300),
            _sample(9.5, requests_running=0, kv_cache_pct=0, preemptions_total=1,
                    ttft_count=2, ttft_mean_s=0.4, itl_count=200, itl_mean_s=0.011,
                    queue_count=2, queue_mean_s=0.02, prefill_count=2, prefill_mean_s=0.3,
                    decode_count=2, decode_mean_s=1.1),
        )
    )  # fmt: skip
    one, four = rows["c=1"], rows["c=4"]
    assert (one.server_polls, four.server_polls) == (1, 1)
    assert (one.running_peak, one.kv_cache_peak_pct, one.kv_cache_mean_pct) == (1, 10, 10)
    assert (four.running_peak, four.waiting_peak, four.kv_cache_peak_pct) == (4, 2, 30)
    assert one.server_ttft_mean_s == pytest.approx(0.1) and one.server_ttft_count == 2
    assert one.preemptions == 1  # 2 -> 2 -> 3
    assert four.preemptions == 1  # the counter restarted at 1: all of it is new
    assert one.prefix_cache_hit_rate == pytest.approx((50 * 100 + 100 * 300) / 400 / 100)
    assert four.server_ttft_mean_s == pytest.approx(0.4) and four.server_itl_mean_s == 0.011
    assert (four.server_queue_mean_s, four.server_prefill_mean_s) == (0.02, 0.3)
    assert four.server_decode_mean_s == 1.1
    # The client's: TTFT 0.1, 0.2 at c=1; decode 1.0 s over 100 gaps each.
    assert one.client_ttft_mean_s == pytest.approx(0.15)
    assert one.client_itl_mean_s == pytest.approx(0.01)
    assert one.ttft_gap_s == pytest.approx(0.05)
    json = one.json()
    assert json["kind"] == "server" and json["load"] == "c=1" and json["concurrency"] == 1


def test_a_gap_beyond_the_timing_doubt_is_noted() -> None:
    polls = (
        _sample(0.5),
        _sample(3.0, ttft_count=2, ttft_mean_s=0.149),
        _sample(8.0, ttft_count=2, ttft_mean_s=0.2),
    )
    rows = _rows(_run(*polls))
    assert rows["c=1"].note == ""  # 1 ms: within the 5 ms floor
    assert "time outside the server" in rows["c=4"].note  # 250 ms
    lagged = _rows(_run(*polls, lag_p99_s=0.3))
    assert lagged["c=4"].note == "" and lagged["c=4"].timing_doubt_s == 0.3


def test_compare_shows_each_runs_server_view_per_level(tmp_path, capsys) -> None:
    import json

    from nvfp4_tui.cli import main

    from .edge_run import edge_snapshot

    a = edge_snapshot(tmp_path / "a")
    b = edge_snapshot(tmp_path / "b")
    assert main(["compare", str(a), str(b)]) == 0
    text = capsys.readouterr().out
    section = text.split("Server view, A → B")[1]
    [row] = [line for line in section.splitlines() if line.startswith("Zero MoE") and "c=4" in line]
    assert "150.0 → 150.0" in row  # the server's TTFT mean at c=4, in both runs
    assert main(["compare", str(a), str(b), "--format", "json"]) == 0
    pairs = json.loads(capsys.readouterr().out)["server_view"]
    assert [(p["endpoint_a"], p["load"]) for p in pairs] == [
        ("zero", "c=1"),
        ("zero", "c=4"),
        ("single", "c=1"),
        ("broken", "c=1"),
    ]
    assert pairs[1]["a"] == pairs[1]["b"] and pairs[1]["a"]["server_ttft_mean_s"] == 0.15

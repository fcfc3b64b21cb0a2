"""A report reads the run's events and only the requests capacity at SLO needs, never samples."""

from __future__ import annotations

from pathlib import Path

from nvfp4_tui.core.events import (
    Event,
    GpuSample,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RunFinished,
    RunStarted,
    ServerSample,
)
from nvfp4_tui.core.slo import capacity_points
from nvfp4_tui.output.report import board_of, load_json_rows
from nvfp4_tui.store.reader import open_snapshot
from tests.support.factories import T0, endpoint_info, request, write_snapshot

LEVELS = (1, 2, 4)
PER_PHASE = 8


def _plans(endpoint_id: str) -> tuple[PhasePlan, ...]:
    if endpoint_id == "slo":
        return tuple(PhasePlan("slo", "english", c, PER_PHASE, slo_ttft_s=0.3) for c in LEVELS)
    if endpoint_id == "sweep":
        return tuple(PhasePlan("sweep", "english", c, PER_PHASE, sweep=True) for c in LEVELS)
    return tuple(PhasePlan(endpoint_id, "english", c, PER_PHASE) for c in LEVELS)


def capacity_run() -> list[Event]:
    """Three endpoints (with SLO targets, a sweep, neither) over three levels, sampled all along."""
    ids = ("slo", "sweep", "plain")
    infos = tuple(endpoint_info(e, n, label=e, model="m") for n, e in enumerate(ids))
    events: list[Event] = [
        RunStarted(T0, "r", "r", infos, tuple(p for e in ids for p in _plans(e)))
    ]
    t = T0
    for index, c in enumerate(LEVELS):
        for endpoint_id in ids:
            events.append(PhaseStarted(t, endpoint_id, "english", c, index))
            for i in range(PER_PHASE):
                events.append(
                    request(
                        endpoint_id,
                        t=t + i * 0.5,
                        prompt_id="p",
                        concurrency=c,
                        phase_index=index,
                        request_index=i,
                        ttft_s=0.1 * c,
                        e2e_s=1.0 + 0.2 * c,
                        tokens_out=100 + i,
                        decode_tps=100.0 / c,
                        e2e_tps=90.0 / c,
                        score_heuristic=0.8,
                    )
                )
            events.append(
                PhaseFinished(t + 5.0, endpoint_id, "english", c, index, PER_PHASE, 0, 800, 5.0)
            )
        for step in range(10):
            events.extend(GpuSample(t + step * 0.5, gpu, vram_used_mib=1000.0) for gpu in range(3))
            events.extend(ServerSample(t + step * 0.5, e, kv_cache_pct=10.0) for e in ids)
        t += 6.0
    events.append(RunFinished(t, "complete"))
    return events


def test_report_events_hold_the_run_and_the_requests_capacity_reads(tmp_path: Path) -> None:
    snapshot = open_snapshot(write_snapshot(tmp_path, "run", capacity_run()))
    everything = snapshot.events()
    assert snapshot.event_count == len(everything)
    chosen = snapshot.report_events()
    expected = [
        e
        for e in everything
        if not isinstance(e, GpuSample | ServerSample)
        and (not isinstance(e, RequestFinished) or e.endpoint_id in ("slo", "sweep"))
    ]
    assert chosen == expected
    assert snapshot.report_events() == chosen  # kept, and handed out as a copy
    run_events = sorted(snapshot.run_events(), key=lambda e: e.t)  # row order, by t here
    assert run_events == [e for e in chosen if not isinstance(e, RequestFinished)]


def test_the_report_reads_the_same_from_them_as_from_every_event(tmp_path: Path) -> None:
    snapshot = open_snapshot(write_snapshot(tmp_path, "run", capacity_run()))
    everything, chosen = snapshot.events(), snapshot.report_events()
    points = capacity_points(chosen)
    assert [row.endpoint for row, _ in points] == ["slo", "sweep"]
    assert all(load_points for _, load_points in points)
    assert points == capacity_points(everything)
    assert load_json_rows(chosen) == load_json_rows(everything)
    requests = snapshot.requests()
    assert board_of(requests, chosen).rows == board_of(requests, everything).rows

"""A JSON-ready digest of what a FleetState holds durably: tests compare a live run's state with
its replay's, and a reduction with one of the same events in another order.

Durable only: no effect of TokenProgress, no recent windows. Floats are rounded to 10
significant digits so that sums taken in another order (a replay that sorts rows by time)
compare equal.
"""

from __future__ import annotations

from typing import Any

from nvfp4_tui.core.endpoint_state import EndpointState
from nvfp4_tui.core.figures.leaderboard import LeaderRow
from nvfp4_tui.core.figures.scores import SCORE_NAMES
from nvfp4_tui.core.gpu_track import GpuTrack
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.core.stats import StatsSummary


def digest(state: FleetState) -> dict[str, Any]:
    """The run, each endpoint and each GPU, as plain JSON values."""
    return {
        "run": {
            "run_id": state.run_id,
            "run_name": state.run_name,
            "started_t": state.started_t,
            "finished_t": state.finished_t,
            "status": state.status,
            "message": state.finish_message,
            "total_requests": state.total_requests,
            "requests_done": state.requests_done,
            "requests_ok": state.requests_ok,
            "requests_incomplete": state.requests_incomplete,
            "errors": state.errors,
        },
        "endpoints": [_endpoint_digest(e) for e in state.endpoints.values()],
        "gpus": [_gpu_digest(state.gpus[g]) for g in sorted(state.gpus)],
    }


def _r(x: float | None) -> float | None:
    if x is None:
        return None
    return float(f"{x:.10g}")


def _stats_digest(s: StatsSummary) -> dict[str, Any]:
    return {
        "n": s.n,
        "mean": _r(s.mean),
        "std": _r(s.std),
        "ci95_low": _r(s.ci95_low),
        "ci95_high": _r(s.ci95_high),
    }


def _endpoint_digest(e: EndpointState) -> dict[str, Any]:
    quality = {
        name: {
            suite: _stats_digest(stats)
            for suite in sorted(e.suites())
            if (stats := e.quality_stats(suite, name)).n
        }
        for name in SCORE_NAMES
    }
    return {
        "id": e.id,
        "label": e.info.label,
        "model": e.info.model,
        "status": e.status,
        "planned_requests": e.planned_requests,
        "requests_ok": e.requests_ok,
        "requests_incomplete": e.requests_incomplete,
        "requests_error": e.requests_error,
        "requests_suspect": e.requests_suspect,
        "phases": [
            {
                "phase_index": p.phase_index,
                "suite": p.suite,
                "concurrency": p.concurrency,
                "rate_rps": p.rate_rps,
                "state": p.state,
                "requests_done": p.requests_done,
                "errors": p.errors,
                "output_tokens": p.output_tokens,
                "wall_s": _r(p.wall_s),
                "throughput_tps": _r(p.throughput_tps),
            }
            for p in e.phase_progress()
        ],
        "throughput": [
            {
                "load": row.load.label,
                "phases": row.phases,
                "output_tokens": row.output_tokens,
                "wall_s": _r(row.wall_s),
                "throughput_tps": _r(row.throughput_tps),
            }
            for row in e.throughput_by_load()
        ],
        "quality": {name: by_suite for name, by_suite in quality.items() if by_suite},
        "quality_overall": {
            name: _stats_digest(stats)
            for name in sorted(SCORE_NAMES)
            if (stats := e.figures.suite_quality(e.id, None, name)).n
        },
        "leaderboard": [_leader_digest(row) for row in e.leaderboard()],
        "last_error": None
        if e.last_error is None
        else {
            "t": e.last_error.t,
            "kind": e.last_error.kind,
            "message": e.last_error.message,
        },
        "server_samples": e.server_samples,
        "server_latest_t": e.server_latest.t if e.server_latest else None,
        "gpu": e.info.gpu,
    }


def _leader_digest(row: LeaderRow) -> dict[str, Any]:
    return {
        "suite": row.suite,
        "concurrency": row.concurrency,
        "rate_rps": row.rate_rps,
        "requests": row.requests,
        "ok": row.ok,
        "incomplete": row.incomplete,
        "errors": row.errors,
        "suspect": row.suspect,
        "quality": {name: _stats_digest(row.score(name)) for name in sorted(row.quality)},
        "decode_tps": _stats_digest(row.decode_tps),
        "e2e_tps": _stats_digest(row.e2e_tps),
        "tokens_out_mean": _r(row.tokens_out_mean),
        "ttft_p50_s": _r(row.ttft_p50_s),
        "throughput_tps": _r(row.throughput_tps),
        "full_load_share": _r(row.full_load_share),
    }


def _gpu_digest(track: GpuTrack) -> dict[str, Any]:
    latest = track.latest
    return {
        "gpu": track.gpu,
        "samples": track.samples,
        "first_vram_mib": track.first_vram_mib,
        "last_vram_mib": track.last_vram_mib,
        "latest_t": latest.t if latest else None,
        "latest_power_w": latest.power_w if latest else None,
        "latest_util_gpu_pct": latest.util_gpu_pct if latest else None,
    }

"""What a GPU pane shows as figures, free of Textual: the pane formats them and
``--headless --json`` prints them, one object per endpoint per second, so a script reads exactly
the numbers a person sees.

Every figure is of one load level, and says which (``shown_level``): a c=4 phase's TTFT is not
pooled with c=1's. The big number is the endpoint's decode tok/s per stream, pooled
(``figures.timings``: tokens after the first chunk over the seconds spent decoding). While a
phase runs it is the live rate (``EndpointState.live_decode_tps``), or with no live progress
(a replay) the rate of the last requests at the phase's level; between two phases, of the last
requests at the level last run. Paused, it is blank: a number standing still beside a "paused"
mark reads as a measurement. Once the endpoint is done it is the rate pooled over every request
at its base level, beside the other levels'; the median request's own rate stands beside it.
A done pane shows the run's peaks of the server's gauges, not their last scrape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nvfp4_tui.core.endpoint_state import EndpointState
from nvfp4_tui.core.figures.scores import score_label
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.stats import half_width


@dataclass(frozen=True)
class SuiteQuality:
    suite: str
    mean: float | None
    n: int
    ci95_low: float | None  # Wilson: inside [0, 1]
    ci95_high: float | None

    @property
    def ci_half(self) -> float | None:
        return half_width(self.ci95_low, self.ci95_high)


@dataclass(frozen=True)
class LevelFigures:
    """One load level, every suite together: decode tok/s pooled and the median request's own
    rate, and the TTFT median."""

    load: Load
    decode_tps: float | None  # pooled
    decode_p50_tps: float | None
    ttft_p50_s: float | None


@dataclass(frozen=True)
class ServerGauges:
    """The server's own KV cache use and its running and waiting requests: the last scrape's
    while the endpoint runs, the run's peaks (``peak``) once it is done."""

    kv_cache_pct: float | None
    running: float | None
    waiting: float | None
    peak: bool


@dataclass(frozen=True)
class PaneFigures:
    endpoint: str
    status: str
    level: Load | None  # the load level of the phase running now
    shown_level: Load | None  # the level the decode and TTFT figures are of
    decode_tps: float | None  # the big number
    decode_kind: str  # what the big number is: "live", "recent", "paused", "final" or "none"
    decode_p50_tps: float | None  # the median request's own rate at ``shown_level``
    aggregate_tps: float | None  # every stream in flight together (live progress only)
    ttft_p50_s: float | None  # of the requests at ``shown_level``
    in_flight: int | None
    target: int | None
    score_name: str
    quality: tuple[SuiteQuality, ...]
    levels: tuple[LevelFigures, ...]  # once an endpoint's phase at a level finished
    server: ServerGauges | None  # None before the server's first scrape
    timing_doubt_s: float | None  # the worst finished phase's, when over the threshold
    time_scale: float  # a simulator's clock factor: every figure here is in modelled time

    def json(self, t_s: float | None) -> dict[str, Any]:
        """The ``--json`` line of this pane at ``t_s`` seconds since the run started."""
        return {
            "t": None if t_s is None else round(t_s, 3),
            "endpoint": self.endpoint,
            "status": self.status,
            "level": None if self.level is None else self.level.label,
            "shown_level": None if self.shown_level is None else self.shown_level.label,
            "decode_tps": self.decode_tps,
            "decode_kind": self.decode_kind,
            "decode_tps_p50": self.decode_p50_tps,
            "aggregate_tps": self.aggregate_tps,
            "ttft_p50_s": self.ttft_p50_s,
            "in_flight": self.in_flight,
            "target": self.target,
            "score": score_label(self.score_name),
            "quality": {
                q.suite: {
                    "mean": q.mean,
                    "n": q.n,
                    "ci95_low": q.ci95_low,
                    "ci95_high": q.ci95_high,
                }
                for q in self.quality
            },
            "decode_tps_pooled_by_level": {lv.load.label: lv.decode_tps for lv in self.levels},
            "decode_tps_p50_by_level": {lv.load.label: lv.decode_p50_tps for lv in self.levels},
            "ttft_p50_s_by_level": {lv.load.label: lv.ttft_p50_s for lv in self.levels},
            "server": None
            if self.server is None
            else {
                "kv_cache_pct": self.server.kv_cache_pct,
                "requests_running": self.server.running,
                "requests_waiting": self.server.waiting,
                "peak": self.server.peak,
            },
            "timing_doubt_s": self.timing_doubt_s,
            "time_scale": self.time_scale,
        }


def level_figures(endpoint: EndpointState, load: Load) -> LevelFigures:
    """The endpoint's figures at one load level, every suite together."""
    timings = endpoint.level_timings(load)
    if timings is None:
        return LevelFigures(load, None, None, None)
    decode = timings.decode()
    return LevelFigures(load, decode.pooled_tps, decode.p50_tps, timings.ttft_p50_s)


def server_gauges(endpoint: EndpointState) -> ServerGauges | None:
    """The last scrape's gauges, or the run's peaks once the endpoint is done."""
    latest = endpoint.server_latest
    if latest is None:
        return None
    if endpoint.status == "done":
        return ServerGauges(
            endpoint.kv_cache_peak_pct,
            endpoint.requests_running_peak,
            endpoint.requests_waiting_peak,
            peak=True,
        )
    return ServerGauges(
        latest.kv_cache_pct, latest.requests_running, latest.requests_waiting, peak=False
    )


def pane_figures(endpoint: EndpointState, now: float, score_name: str) -> PaneFigures:
    phase = endpoint.current_phase
    rows = endpoint.leaderboard()
    levels = tuple(level_figures(endpoint, lv.load) for lv in endpoint.throughput_by_load())
    status = endpoint.status
    shown_level = phase.load if phase is not None else endpoint.last_load
    if status == "paused":
        decode, kind = None, "paused"
    elif phase is not None:
        live = endpoint.live_decode_tps(now)
        decode = live if live is not None else endpoint.decode_tps_now(now)
        kind = "live" if live is not None else "recent" if decode is not None else "none"
    elif status == "done" and levels:
        decode, kind, shown_level = levels[0].decode_tps, "final", levels[0].load
    else:  # between two phases: the last requests at the level last run
        decode = endpoint.recent_decode_tps(shown_level)
        kind = "recent" if decode is not None else "none"
    shown = level_figures(endpoint, shown_level) if shown_level is not None else None
    return PaneFigures(
        endpoint=endpoint.id,
        status=status,
        level=phase.load if phase is not None else None,
        shown_level=shown_level,
        decode_tps=decode,
        decode_kind=kind,
        decode_p50_tps=shown.decode_p50_tps if shown else None,
        aggregate_tps=endpoint.live_tokens_per_s if endpoint.streaming else None,
        ttft_p50_s=shown.ttft_p50_s if shown else None,
        in_flight=endpoint.in_flight,
        target=endpoint.target_concurrency,
        score_name=score_name,
        quality=tuple(
            SuiteQuality(suite, q.mean, q.n, q.ci95_low, q.ci95_high)
            for suite in endpoint.scored_suites()
            for q in (endpoint.quality_stats(suite, score_name),)
        ),
        levels=levels,
        server=server_gauges(endpoint),
        timing_doubt_s=max(
            (r.timing_doubt_s for r in rows if r.timing_doubt_s is not None), default=None
        ),
        time_scale=endpoint.info.time_scale,
    )

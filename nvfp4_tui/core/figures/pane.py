"""What a GPU pane shows as figures, free of Textual: the pane formats them and
``--headless --json`` prints them, one object per endpoint per second, so a script reads exactly
the numbers a person sees.

The big number is the endpoint's decode tok/s per stream. While a phase runs it is the live
rate (``EndpointState.live_decode_tps``), or with no live progress (a replay) the mean of the
last requests at the phase's load level; between two phases, the mean of the last requests.
Paused, it is blank: a number standing still beside a "paused" mark reads as a measurement.
Once the endpoint is done it is the mean decode at its base load level, beside the means at its
other levels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nvfp4_tui.core.endpoint_state import EndpointState
from nvfp4_tui.core.figures.board import pooled_mean
from nvfp4_tui.core.figures.leaderboard import LeaderRow
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
class LevelDecode:
    """The mean decode tok/s per request at one load level, every suite together."""

    load: Load
    decode_tps: float | None


@dataclass(frozen=True)
class PaneFigures:
    endpoint: str
    status: str
    level: Load | None  # the load level of the phase running now
    decode_tps: float | None  # the big number
    decode_kind: str  # what the big number is: "live", "recent", "paused", "final" or "none"
    aggregate_tps: float | None  # every stream in flight together (live progress only)
    ttft_p50_s: float | None  # of the recent requests
    in_flight: int | None
    target: int | None
    score_name: str
    quality: tuple[SuiteQuality, ...]
    levels: tuple[LevelDecode, ...]  # once an endpoint's phase at a level finished
    timing_doubt_s: float | None  # the worst finished phase's, when over the threshold
    time_scale: float  # a simulator's clock factor: every figure here is in modelled time

    def json(self, t_s: float | None) -> dict[str, Any]:
        """The ``--json`` line of this pane at ``t_s`` seconds since the run started."""
        return {
            "t": None if t_s is None else round(t_s, 3),
            "endpoint": self.endpoint,
            "status": self.status,
            "level": None if self.level is None else self.level.label,
            "decode_tps": self.decode_tps,
            "decode_kind": self.decode_kind,
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
            "decode_tps_by_level": {level.load.label: level.decode_tps for level in self.levels},
            "timing_doubt_s": self.timing_doubt_s,
            "time_scale": self.time_scale,
        }


def level_decodes(endpoint: EndpointState, rows: tuple[LeaderRow, ...]) -> tuple[LevelDecode, ...]:
    """The endpoint's mean decode per load level with a finished phase, lowest load first."""
    return tuple(
        LevelDecode(level.load, pooled_mean(r.decode_tps for r in rows if r.load == level.load))
        for level in endpoint.throughput_by_load()
    )


def pane_figures(endpoint: EndpointState, now: float, score_name: str) -> PaneFigures:
    phase = endpoint.current_phase
    rows = endpoint.leaderboard()
    levels = level_decodes(endpoint, rows)
    status = endpoint.status
    if status == "paused":
        decode, kind = None, "paused"
    elif phase is not None:
        live = endpoint.live_decode_tps(now)
        decode = live if live is not None else endpoint.decode_tps_now(now)
        kind = "live" if live is not None else "recent" if decode is not None else "none"
    elif status == "done" and levels:
        decode, kind = levels[0].decode_tps, "final"
    else:  # between two phases: the last requests, whatever their level
        decode = endpoint.recent_decode_tps()
        kind = "recent" if decode is not None else "none"
    return PaneFigures(
        endpoint=endpoint.id,
        status=status,
        level=phase.load if phase is not None else None,
        decode_tps=decode,
        decode_kind=kind,
        aggregate_tps=endpoint.live_tokens_per_s if endpoint.streaming else None,
        ttft_p50_s=endpoint.ttft_p50_recent_s,
        in_flight=endpoint.in_flight,
        target=endpoint.target_concurrency,
        score_name=score_name,
        quality=tuple(
            SuiteQuality(suite, q.mean, q.n, q.ci95_low, q.ci95_high)
            for suite in endpoint.suites()
            for q in (endpoint.quality_stats(suite, score_name),)
        ),
        levels=levels,
        timing_doubt_s=max(
            (r.timing_doubt_s for r in rows if r.timing_doubt_s is not None), default=None
        ),
        time_scale=endpoint.info.time_scale,
    )

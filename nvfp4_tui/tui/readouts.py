"""Read-outs the views derive from FleetState's public data: labels, series, load curves and
which score to show.

Everything here is a pure function of the state (and ``now`` where time matters): no Textual, no
I/O, so it is tested without an app. The leaderboard's figures themselves (quality per suite,
speed against class, Pareto, route per task) live in ``nvfp4_tui.core.figures.board``, which the
report reads too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from nvfp4_tui.core.endpoint_state import EndpointState
from nvfp4_tui.core.events import EndpointInfo
from nvfp4_tui.core.figures import scores
from nvfp4_tui.core.figures.board import Board
from nvfp4_tui.core.figures.scores import JUDGE, SCORE_CYCLE
from nvfp4_tui.core.readouts import TpsPoint
from nvfp4_tui.core.slo import CapacityRow, Load, LoadKind
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui import units

CLASS_NAMES = {"moe": "MoE", "dense": "Dense"}


def _has_scores(state: FleetState) -> Callable[[str], bool]:
    return state.figures.has_scores


def shown_score(state: FleetState, wanted: str) -> str:
    """The score to show when ``wanted`` is asked for (``figures.scores.shown_score``)."""
    return scores.shown_score(_has_scores(state), wanted)


def next_score(state: FleetState, shown: str) -> str | None:
    """The score ``v`` switches to from ``shown``: the next of ``SCORE_CYCLE`` the run can show
    (the judge's only once it has graded something); None when there is no other."""
    start = SCORE_CYCLE.index(shown) if shown in SCORE_CYCLE else -1
    for name in SCORE_CYCLE[start + 1 :] + SCORE_CYCLE[: start + 1]:
        available = (
            state.figures.has_scores(name) if name == JUDGE else shown_score(state, name) == name
        )
        if name != shown and available:
            return name
    return None


def class_name(model_class: str) -> str:
    return CLASS_NAMES.get(model_class, model_class)


def gpu_tag(info: EndpointInfo) -> str:
    """``GPU 3``, or ``GPU ?`` for an endpoint that names no GPU index."""
    return f"GPU {info.gpu}" if info.gpu is not None else "GPU ?"


def class_badge(info: EndpointInfo) -> str:
    """``MoE 3B/256E`` or ``Dense 27B``: the class with active parameters and experts."""
    parts = [class_name(info.model_class)]
    if info.active_params_b is not None:
        parts.append(f"{info.active_params_b:g}B")
    if info.experts is not None:
        parts[-1] = f"{parts[-1]}/{info.experts}E" if len(parts) > 1 else f"{info.experts}E"
    return " ".join(parts)


def short_labels(endpoints: Sequence[EndpointInfo]) -> dict[str, str]:
    """Column headers: each label's first word up to its first hyphen, unless two would clash."""
    short = {e.id: e.label.split()[0].split("-")[0] if e.label.strip() else e.id for e in endpoints}
    if len(set(short.values())) < len(short):
        return {e.id: e.label for e in endpoints}
    return short


def phase_text(endpoint: EndpointState) -> str | None:
    """The phase running now, e.g. ``math · c4`` or ``math · 2 req/s``; None between phases."""
    phase = endpoint.current_phase
    if phase is None:
        return None
    # A closed loop keeps the header's compact "c4"; an open loop says its rate.
    level = phase.load.label if phase.rate_rps is not None else f"c{phase.concurrency}"
    return f"{phase.suite} · {level}"


def decode_bins(
    points: Iterable[TpsPoint],
    now: float,
    *,
    window_s: float = 60.0,
    bins: int = 60,
    hold_s: float = 2.0,
) -> list[float]:
    """Decode tok/s over the last ``window_s`` in ``bins`` equal bins (each bin's highest point).

    The highest, not the mean: a stream waiting for its first token reports 0 tok/s, and those
    zeros say nothing about decode speed.

    A bin without points holds the previous value while the last point is under ``hold_s`` old
    (progress arrives a few times a second, so narrow bins would otherwise flicker to zero), and
    is 0 after that: nothing was streaming.
    """
    if bins < 1:
        return []
    start = now - window_s
    width_s = window_s / bins
    highest: list[float | None] = [None] * bins
    for point in points:
        if start <= point.t <= now:
            index = min(bins - 1, int((point.t - start) / width_s))
            value = highest[index]
            highest[index] = point.decode_tps if value is None else max(value, point.decode_tps)
    values: list[float] = []
    held, held_t = 0.0, -math.inf
    for index in range(bins):
        value = highest[index]
        if value is not None:
            held, held_t = value, start + (index + 1) * width_s
            values.append(held)
        else:
            bin_end = start + (index + 1) * width_s
            values.append(held if bin_end - held_t <= hold_s else 0.0)
    return values


def histogram(values: Sequence[float], bins: int) -> tuple[list[float], list[int]]:
    """Equal-width bins from the lowest to the highest value: (bin centres, counts)."""
    values = [v for v in values if math.isfinite(v)]  # a damaged snapshot's NaN or inf
    if not values or bins < 1:
        return [], []
    low, high = min(values), max(values)
    if high <= low:
        return [low], [len(values)]
    width = (high - low) / bins
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, int((value - low) / width))] += 1
    return [low + width * (i + 0.5) for i in range(bins)], counts


# ---- leaderboard ------------------------------------------------------------------------------


def base_text(board: Board) -> str:
    """The base load level as titles show it: ``c=1``, ``2 req/s``, or an em dash."""
    load = board.base_load
    return units.DASH if load is None else load.label


@dataclass(frozen=True)
class LoadCurve:
    """One endpoint's aggregate throughput against load, and its knee (None: still growing)."""

    endpoint_id: str
    points: tuple[tuple[Load, float], ...]  # (load level, tok/s), lowest load first
    knee: Load | None


def load_curves(state: FleetState, board: Board) -> list[LoadCurve]:
    """Per endpoint, in the run's order: aggregate throughput at each load level with a finished
    phase (the report's figure), and the knee as the capacity table and the sweep's stop rule
    read it."""
    by_endpoint: dict[str, list[tuple[Load, float]]] = {}
    for level in board.levels:
        if level.throughput_tps is not None:
            by_endpoint.setdefault(level.endpoint, []).append((level.load, level.throughput_tps))
    curves = []
    for endpoint in state.endpoints.values():
        points = tuple(by_endpoint.get(endpoint.id, ()))
        knee = endpoint.load.knee()
        knee_load = knee.load if knee is not None else None
        curves.append(
            LoadCurve(endpoint.id, points, knee_load if knee_load in dict(points) else None)
        )
    return curves


# ---- service levels ---------------------------------------------------------------------------


def capacity_rows(state: FleetState) -> list[CapacityRow]:
    """Capacity at SLO of each endpoint that runs with SLO targets or a load sweep."""
    return [
        e.load.capacity_row(e.id)
        for e in state.endpoints.values()
        if e.load.has_slo or e.load.sweep
    ]


def load_text(kind: LoadKind, value: float | None) -> str:
    """``c=4`` or ``2 req/s``; an em dash when there is none."""
    return units.DASH if value is None else Load(kind, value).label


def slo_text(row: CapacityRow) -> str:
    """The targets of a capacity row: ``TTFT ≤ 500 ms · TPOT ≤ 50 ms · ≥ 90% met``."""
    parts = [f"{name} ≤ {units.seconds_as_ms(value)}" for name, value in row.slo_targets]
    parts.append(f"≥ {row.slo_attainment * 100:.0f}% met")
    return " · ".join(parts)

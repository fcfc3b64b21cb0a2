"""The fleet recommendation: which endpoint to route each task to, with the evidence, computed
from ``board.route_by_task`` rather than written by hand (the seed's "GPU 0-1: … coding").

A suite whose evidence is too thin (fewer than ``ROUTE_MIN_PROMPTS`` prompts scored on some
endpoint) routes nowhere and is listed as such; a run where every suite is too thin makes no
recommendation at all, and says how much more it would need.
"""

from __future__ import annotations

from dataclasses import dataclass

from nvfp4_tui.core.figures.board import ROUTE_MIN_PROMPTS, Board, Route, route_by_task


@dataclass(frozen=True)
class Assignment:
    """One endpoint and the suites routed to it, in the run's suite order."""

    endpoint_id: str
    gpu: int | None
    suites: tuple[str, ...]


@dataclass(frozen=True)
class FleetRecommendation:
    score_name: str
    min_prompts: int  # ROUTE_MIN_PROMPTS when it was computed
    routes: tuple[Route, ...]  # one per suite with scores, picked or not
    assignments: tuple[Assignment, ...]  # endpoints some suite routes to, in the run's order
    unrouted: tuple[str, ...]  # endpoints no suite routes to (while some suite does)

    @property
    def picked(self) -> tuple[Route, ...]:
        return tuple(r for r in self.routes if r.endpoint_id is not None)

    @property
    def thin(self) -> tuple[Route, ...]:
        """Suites with too few prompts scored to route."""
        return tuple(r for r in self.routes if r.endpoint_id is None)

    @property
    def recommends(self) -> bool:
        """False when no suite had enough evidence: there is no recommendation to make."""
        return bool(self.picked)

    @property
    def best_covered(self) -> int | None:
        """The most prompts any suite has scored on every endpoint (what a thin run lacks)."""
        return max((r.min_prompts for r in self.routes), default=None)


def fleet_recommendation(board: Board, score_name: str) -> FleetRecommendation:
    routes = tuple(route_by_task(board, score_name))
    gpus = {e.id: e.gpu for e in board.endpoints}
    by_endpoint: dict[str, list[str]] = {}
    for route in routes:
        if route.endpoint_id is not None:
            by_endpoint.setdefault(route.endpoint_id, []).append(route.suite)
    assignments = tuple(
        Assignment(eid, gpus.get(eid), tuple(by_endpoint[eid]))
        for eid in board.endpoint_ids
        if eid in by_endpoint
    )
    unrouted = (
        tuple(eid for eid in board.endpoint_ids if eid not in by_endpoint) if by_endpoint else ()
    )
    return FleetRecommendation(score_name, ROUTE_MIN_PROMPTS, routes, assignments, unrouted)

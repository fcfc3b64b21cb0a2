"""Which faults hit one request: drawn from the endpoint's seed and the request's number.

Given the same ``FaultSpec``, seed and request counter, the same request fails the same way,
which keeps fault tests reproducible. Mid-stream faults land strictly inside the stream: after
the first chunk and before the last.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from random import Random
from typing import Any

from nvfp4_tui.config.profile import FaultSpec

HTTP_STATUSES = (400, 404, 422, 429, 500, 503)
DEFAULT_HTTP_STATUS = 500


@dataclass(frozen=True)
class FaultPlan:
    """The faults of one request; chunk positions count the stream's content chunks."""

    http_status: int | None = None
    stall_at: int | None = None
    reset_at: int | None = None
    malformed_at: int | None = None
    cutoff_at: int | None = None


def draw_faults(spec: FaultSpec, seed: int, request_number: int, chunks: int) -> FaultPlan:
    """The faults of request ``request_number`` of an endpoint whose stream has ``chunks``."""
    rng = Random(f"faults|{seed}|{request_number}")

    def position(rate: float) -> int | None:
        hit = rng.random() < rate
        at = rng.randint(1, max(chunks - 2, 1))  # drawn either way, so draws stay aligned
        return at if hit and chunks >= 3 else None

    status = None
    if rng.random() < spec.error_rate:
        status = spec.http_status or DEFAULT_HTTP_STATUS
    stall_at = position(spec.stall_rate)
    return FaultPlan(
        http_status=status,
        stall_at=stall_at if spec.stall_s > 0 else None,
        reset_at=position(spec.reset_rate),
        malformed_at=position(spec.malformed_rate),
        cutoff_at=position(spec.cutoff_rate),
    )


def faults_from_json(body: Any) -> FaultSpec:
    """A FaultSpec from a JSON object; raises ValueError naming the first bad field."""
    if not isinstance(body, dict):
        raise ValueError("expected a JSON object with FaultSpec fields")
    known = {f.name: f for f in fields(FaultSpec)}
    unknown = sorted(set(body) - set(known))
    if unknown:
        raise ValueError(f"unknown fault fields {unknown}; expected some of {sorted(known)}")
    values: dict[str, Any] = {}
    for name, value in body.items():
        if name == "down":
            if not isinstance(value, bool):
                raise ValueError("down: expected true or false")
        elif name == "http_status":
            if value is not None and value not in HTTP_STATUSES:
                raise ValueError(f"http_status: expected one of {list(HTTP_STATUSES)} or null")
        elif isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError(f"{name}: expected a number >= 0")
        elif name.endswith("_rate") and value > 1:
            raise ValueError(f"{name}: expected a number from 0 to 1")
        values[name] = float(value) if name not in ("down", "http_status") else value
    return FaultSpec(**values)


def faults_to_json(spec: FaultSpec) -> dict[str, Any]:
    return {f.name: getattr(spec, f.name) for f in fields(FaultSpec)}

"""The fleet's totals: what every endpoint (or one node's) adds up to right now.

The grid's spare cell, the table view's node rows and the compact view's foot line all show
these; they format, this module sums.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nvfp4_tui.core.endpoint_state import EndpointState


@dataclass(frozen=True)
class FleetTotals:
    endpoints: int
    active: int  # endpoints with a phase running now
    decode_tps: float | None  # tokens per second decoded by every stream together
    # Some endpoint had no live progress (a replay): its share is its recent mean decode per
    # stream times the streams in flight, an estimate rather than a measurement.
    decode_estimated: bool
    requests_done: int
    errors: int
    power_w: float | None  # the fresh GPU power draws summed, each GPU once
    power_gpus: int  # how many GPUs that sum holds


def _stream_tps(endpoint: EndpointState, now: float) -> tuple[float | None, bool]:
    """Every stream of ``endpoint`` together, and whether that is an estimate."""
    if endpoint.streaming:
        return endpoint.live_tokens_per_s, False
    if endpoint.current_phase is None or not endpoint.in_flight:
        return None, False
    per_stream = endpoint.decode_tps_now(now)
    return (None, False) if per_stream is None else (per_stream * endpoint.in_flight, True)


def fleet_totals(endpoints: Iterable[EndpointState], now: float) -> FleetTotals:
    count = active = done = errors = 0
    decode: list[float] = []
    estimated = False
    power: dict[int, float] = {}
    for endpoint in endpoints:
        count += 1
        active += endpoint.current_phase is not None
        done += endpoint.requests_done
        errors += endpoint.requests_error
        tps, guessed = _stream_tps(endpoint, now)
        if tps is not None:
            decode.append(tps)
            estimated = estimated or guessed
        gpu = endpoint.gpu
        sample = gpu.latest if gpu is not None else None
        # Two endpoints on one GPU draw its power once.
        fresh = gpu is not None and not gpu.stale(now)
        if gpu is not None and fresh and sample is not None and sample.power_w is not None:
            power[id(gpu)] = sample.power_w
    return FleetTotals(
        endpoints=count,
        active=active,
        decode_tps=sum(decode) if decode else None,
        decode_estimated=estimated,
        requests_done=done,
        errors=errors,
        power_w=sum(power.values()) if power else None,
        power_gpus=len(power),
    )

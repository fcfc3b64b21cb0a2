"""The load generator's health at a glance, from the latest ``ClientHealth`` of each sending
process: its CPU, its event loop's lag, the CPU it waited for, requests queued for a slot. The
header shows it so a user sees when the tool, rather than the server, is the limit."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nvfp4_tui.core.events import ClientHealth
from nvfp4_tui.core.timing_doubt import CPU_WAIT_SHOWN_S, TIMING_DOUBT_LAG_S

# A process whose last report is older than this has stopped reporting (stuck, or gone).
SILENT_AFTER_S = 3.0
# A process this busy cannot take more: its timings lag and its sends queue behind its work.
BUSY_CPU_PCT = 90.0


@dataclass(frozen=True, slots=True)
class ClientReadout:
    workers: int  # sending processes that reported
    silent: int  # of them, those quiet for SILENT_AFTER_S
    cpu_pct: float | None  # the busiest one's
    loop_lag_p99_s: float | None  # the worst one's
    cpu_wait_s: float | None  # the longest wait for a CPU in a window
    queued: int  # requests waiting for a slot, all processes together
    in_flight: int

    @property
    def limiting(self) -> bool:
        """Whether the client may be what limits or distorts the run."""
        return bool(
            self.silent
            or (self.cpu_pct is not None and self.cpu_pct >= BUSY_CPU_PCT)
            or (self.loop_lag_p99_s is not None and self.loop_lag_p99_s > TIMING_DOUBT_LAG_S)
            or (self.cpu_wait_s is not None and self.cpu_wait_s >= CPU_WAIT_SHOWN_S)
        )


def _worst(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def client_readout(health: Mapping[int, ClientHealth], now: float) -> ClientReadout | None:
    """None before any process reported (a replay, a followed run: theirs are not recorded)."""
    if not health:
        return None
    reports = list(health.values())
    return ClientReadout(
        workers=len(reports),
        silent=sum(now - h.t > SILENT_AFTER_S for h in reports),
        cpu_pct=_worst([h.cpu_pct for h in reports]),
        loop_lag_p99_s=_worst([h.loop_lag_p99_s for h in reports]),
        cpu_wait_s=_worst([h.cpu_wait_s for h in reports]),
        queued=sum(h.queued for h in reports),
        in_flight=sum(h.in_flight for h in reports),
    )

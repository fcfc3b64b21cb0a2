"""How closely an open-loop phase kept its schedule (a trace's times, or drawn arrivals): per
endpoint and phase, how late each send left against its planned time (``late_s`` of its row)
and how many due sends never went out. A late send is the client's doing, or a ``max_concurrency``
cap's, never the server's: a trace replayed late is not the trace.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from nvfp4_tui.core.slo import LATE_AFTER_S
from nvfp4_tui.core.stats import finite, percentile_of_sorted


@dataclass(frozen=True, slots=True)
class ScheduleRow:
    endpoint_id: str
    suite: str
    phase_index: int
    sent: int
    late: int  # sent more than slo.LATE_AFTER_S after their time
    late_p50_s: float | None
    late_p99_s: float | None
    late_max_s: float | None
    unsent: int = 0  # due before the phase stopped sending, never sent

    def json(self) -> dict[str, Any]:
        return {
            "kind": "schedule",
            "endpoint": self.endpoint_id,
            "suite": self.suite,
            "phase": self.phase_index,
            "sent": self.sent,
            "late": self.late,
            "late_after_s": LATE_AFTER_S,
            "late_p50_s": self.late_p50_s,
            "late_p99_s": self.late_p99_s,
            "late_max_s": self.late_max_s,
            "unsent": self.unsent,
        }


def schedule_rows(
    sends: Iterable[tuple[str, str, int, float | None]],
    unsent: dict[tuple[str, int], int],
    endpoint_order: tuple[str, ...] = (),
) -> list[ScheduleRow]:
    """Rows of ``sends`` (endpoint, suite, phase, late_s), open-loop ones only (late_s set);
    ``unsent`` per (endpoint, phase). Endpoints in ``endpoint_order``, phases in order."""
    lateness: dict[tuple[str, int], list[float]] = {}
    suites: dict[tuple[str, int], str] = {}
    for endpoint_id, suite, phase_index, late_s in sends:
        value = finite(late_s)
        if value is None:
            continue
        key = (endpoint_id, phase_index)
        lateness.setdefault(key, []).append(value)
        suites[key] = suite
    order = {endpoint_id: i for i, endpoint_id in enumerate(endpoint_order)}
    rows = []
    for key in sorted(lateness, key=lambda k: (order.get(k[0], len(order)), k)):
        late = sorted(lateness[key])
        rows.append(
            ScheduleRow(
                endpoint_id=key[0],
                suite=suites[key],
                phase_index=key[1],
                sent=len(late),
                late=sum(value > LATE_AFTER_S for value in late),
                late_p50_s=percentile_of_sorted(late, 50),
                late_p99_s=percentile_of_sorted(late, 99),
                late_max_s=late[-1],
                unsent=unsent.get(key, 0),
            )
        )
    return rows

"""``compare``'s server-view section: each paired endpoint's levels, the server's figures in
run A beside run B (``figures.server_view``), kept apart from the client-side comparison."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from nvfp4_tui.core.figures.comparison import Pairing
from nvfp4_tui.core.figures.server_view import ServerViewPair, ServerViewRow, pair_server_views
from nvfp4_tui.output.report import snapshot_server_view
from nvfp4_tui.output.tables import change_cell, format_table
from nvfp4_tui.store.reader import Snapshot

TITLE = (
    "Server view, A → B (vLLM /metrics means over each level's window; gap: client − server TTFT)"
)
Figure = Callable[[ServerViewRow], float | None]
COLUMNS: tuple[tuple[str, Figure, float, str], ...] = (
    ("TTFT ms server", lambda r: r.server_ttft_mean_s, 1000, ".1f"),
    ("gap ms", lambda r: r.ttft_gap_s, 1000, ".1f"),
    ("ITL ms server", lambda r: r.server_itl_mean_s, 1000, ".1f"),
    ("queue ms", lambda r: r.server_queue_mean_s, 1000, ".1f"),
    ("KV % peak", lambda r: r.kv_cache_peak_pct, 1, ".1f"),
    ("waiting peak", lambda r: r.waiting_peak, 1, ".0f"),
    ("preemptions", lambda r: r.preemptions, 1, ".0f"),
)


def server_view_pairs(
    a: Snapshot, b: Snapshot, pairs: Sequence[Pairing]
) -> tuple[ServerViewPair, ...]:
    ids = [(p.endpoint_a, p.endpoint_b, p.label) for p in pairs]
    return pair_server_views(ids, snapshot_server_view(a), snapshot_server_view(b))


def server_view_table(pairs: Sequence[ServerViewPair], *, markdown: bool) -> str | None:
    if not pairs:
        return None
    headers = ["endpoint", "load", *(name for name, *_ in COLUMNS)]
    rows = [
        [
            p.label,
            p.load.label,
            *(change_cell(p.a, p.b, figure, scale, spec) for _, figure, scale, spec in COLUMNS),
        ]
        for p in pairs
    ]
    return format_table(headers, rows, title=TITLE, markdown=markdown)


def server_view_json(pairs: Sequence[ServerViewPair]) -> list[dict[str, Any]]:
    return [
        {
            "endpoint_a": p.endpoint_a,
            "endpoint_b": p.endpoint_b,
            "label": p.label,
            "load": p.load.label,
            "a": None if p.a is None else p.a.json(),
            "b": None if p.b is None else p.b.json(),
        }
        for p in pairs
    ]

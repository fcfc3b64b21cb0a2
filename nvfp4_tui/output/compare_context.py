"""``compare``'s context-ladder section: each paired endpoint's rungs and levels in run A beside
run B (``figures.context``), and what fits at once in each: the seed's FP8-vs-BF16 KV cache
experiment, by length (``compare`` lists the cache's dtype among the configuration changes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from nvfp4_tui.core.figures.comparison import Pairing
from nvfp4_tui.core.figures.context import (
    CONTEXT_SUITE_PREFIX,
    LadderPair,
    LadderRow,
    RungCapacity,
    RungCapacityPair,
    pair_capacities,
    pair_ladders,
    run_configs,
    rung_capacities,
)
from nvfp4_tui.output.context_table import context_rows
from nvfp4_tui.output.report import endpoints_of
from nvfp4_tui.output.tables import change_cell, format_table
from nvfp4_tui.store.reader import Snapshot

TITLE = "Context ladder, A → B (means per rung and level; recall: share of hidden facts found)"
CAPACITY_TITLE = "Context capacity, A → B (requests of a rung run at once before the server queued)"
Figure = Callable[[LadderRow], float | int | None]
COLUMNS: tuple[tuple[str, Figure, float, str], ...] = (
    ("tokens in (server)", lambda r: r.tokens_in_mean, 1, ",.0f"),
    ("TTFT ms mean", lambda r: r.ttft_mean_s, 1000, ".1f"),
    ("prefill tok/s", lambda r: r.prefill_tps_mean, 1, ",.0f"),
    ("decode tok/s", lambda r: r.decode_tps_mean, 1, ".1f"),
    ("recall", lambda r: r.recall_mean, 1, ".2f"),
)


def _snapshot_context(snapshot: Snapshot) -> tuple[list[LadderRow], list[RungCapacity]]:
    events = snapshot.report_events()
    rows = context_rows(snapshot.requests(), events, snapshot.server(), endpoints_of(events))
    return rows, rung_capacities(rows, run_configs(events))


def context_pairs(
    a: Snapshot, b: Snapshot, pairs: Sequence[Pairing]
) -> tuple[tuple[LadderPair, ...], tuple[RungCapacityPair, ...]]:
    ids = [(p.endpoint_a, p.endpoint_b, p.label) for p in pairs]
    (ladder_a, fits_a), (ladder_b, fits_b) = _snapshot_context(a), _snapshot_context(b)
    return pair_ladders(ids, ladder_a, ladder_b), pair_capacities(ids, fits_a, fits_b)


def _fits(row: RungCapacity | None) -> str:
    if row is None or row.fits is None:
        return "—"
    return f"{'≥ ' if row.at_least else ''}{row.fits} ({row.cache})"


def context_tables(
    ladder: Sequence[LadderPair], capacity: Sequence[RungCapacityPair], *, markdown: bool
) -> list[str]:
    tables = []
    if ladder:
        headers = ["endpoint", "rung", "load", *(name for name, *_ in COLUMNS)]
        rows = [
            [
                p.label,
                p.suite.removeprefix(CONTEXT_SUITE_PREFIX),
                f"c={p.concurrency}",
                *(change_cell(p.a, p.b, figure, scale, spec) for _, figure, scale, spec in COLUMNS),
            ]
            for p in ladder
        ]
        tables.append(format_table(headers, rows, title=TITLE, markdown=markdown))
    if any((p.a is not None and p.a.fits) or (p.b is not None and p.b.fits) for p in capacity):
        rows = [
            [p.label, p.suite.removeprefix(CONTEXT_SUITE_PREFIX), _fits(p.a), _fits(p.b)]
            for p in capacity
        ]
        headers = ["endpoint", "rung", "fits at once A (KV cache)", "B (KV cache)"]
        tables.append(format_table(headers, rows, title=CAPACITY_TITLE, markdown=markdown))
    return tables


def context_json(
    ladder: Sequence[LadderPair], capacity: Sequence[RungCapacityPair]
) -> dict[str, list[dict[str, Any]]]:
    return {
        "context": [
            {
                "label": p.label,
                "suite": p.suite,
                "concurrency": p.concurrency,
                "a": None if p.a is None else p.a.json(),
                "b": None if p.b is None else p.b.json(),
            }
            for p in ladder
        ],
        "context_capacity": [
            {
                "label": p.label,
                "suite": p.suite,
                "a": None if p.a is None else p.a.json(),
                "b": None if p.b is None else p.b.json(),
            }
            for p in capacity
        ],
    }

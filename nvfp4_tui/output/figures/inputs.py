"""What the figures need of a snapshot, read with polars into ``plot_data.FigureInputs``: the
board, the per-request values of the distributions, the capacity points and VRAM per GPU."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from nvfp4_tui.core.figures.plot_data import FigureInputs, RequestValues, VramReading
from nvfp4_tui.core.slo import Load, capacity_points
from nvfp4_tui.output.report import board_of, plan_rates, vram_per_gpu, with_rates
from nvfp4_tui.store.legacy import in_flight_note, recorded_in_flight
from nvfp4_tui.store.reader import Snapshot

_OPTIONAL = {"trimmed": pl.Boolean, "itl_p50_s": pl.Float64}


def _by_level(frame: pl.DataFrame, column: str) -> dict[tuple[str, Load], Sequence[float]]:
    grouped = (
        frame.filter(pl.col(column).is_not_null() & pl.col(column).is_finite())
        .group_by("endpoint_id", "concurrency", "rate_rps")
        .agg(pl.col(column))
    )
    return {
        (row["endpoint_id"], Load.of(row["concurrency"], row["rate_rps"])): row[column]
        for row in grouped.iter_rows(named=True)
    }


def request_values(requests: pl.DataFrame, events: Sequence) -> RequestValues:
    """The timed requests that did not fail, per endpoint and load level."""
    if requests.is_empty():
        return RequestValues({}, {}, {})
    for column, dtype in _OPTIONAL.items():
        if column not in requests.columns:
            requests = requests.with_columns(pl.lit(None, dtype=dtype).alias(column))
    timed = with_rates(requests, plan_rates(events)).filter(
        (pl.col("status") != "error") & ~pl.col("trimmed").fill_null(False)
    )
    return RequestValues(
        e2e_s=_by_level(timed, "e2e_s"),
        ttft_s=_by_level(timed, "ttft_s"),
        itl_p50_s=_by_level(timed, "itl_p50_s"),
    )


def figure_inputs(snapshot: Snapshot, score_name: str | None = None) -> FigureInputs:
    events = snapshot.report_events()
    requests = snapshot.requests()
    board = board_of(requests, events)
    vram = [
        VramReading(r["gpu"], r["first_mib"], r["last_mib"], r["peak_mib"])
        for r in vram_per_gpu(snapshot.gpu()).iter_rows(named=True)
    ]
    levels = recorded_in_flight(snapshot.manifest)
    return FigureInputs(
        board=board,
        score_name=board.shown_score(score_name),
        values=request_values(requests, events),
        capacity=capacity_points(events),
        vram=vram,
        legacy="legacy" in snapshot.manifest,
        levels_note=in_flight_note(levels) if levels else "",
    )

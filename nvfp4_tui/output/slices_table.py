"""The report's time-slice table and chart, from a snapshot's requests and its phases' starts:
each phase's figures per slice of S seconds (``core.figures.slices``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nvfp4_tui.core.events import EndpointInfo, PhaseStarted
from nvfp4_tui.core.figures.slices import SlicedRequest, SliceRow, slice_rows
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.output.tables import Table, ms_cell, number_cell
from nvfp4_tui.output.text_chart import line_chart

if TYPE_CHECKING:
    from nvfp4_tui.output.request_sections import SectionInput

_COLUMNS = (
    "endpoint_id",
    "suite",
    "phase_index",
    "t",
    "e2e_s",
    "status",
    "tokens_out",
    "ttft_s",
    "decode_tps",
)


def run_slice_s(manifest: Mapping[str, Any] | None) -> float | None:
    """The slice the run's profile asked for (``[run] slice_s``), if it is a usable one."""
    profile = (manifest or {}).get("profile")
    run = profile.get("run") if isinstance(profile, dict) else None
    value = run.get("slice_s") if isinstance(run, dict) else None
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


def time_slice_rows(given: SectionInput) -> list[SliceRow]:
    """None without a slice length, or with no request."""
    requests, events, endpoints, slice_s = (
        given.requests,
        given.events,
        given.endpoints,
        given.slice_s,
    )
    if slice_s is None or requests.is_empty():
        return []
    starts = {(e.endpoint_id, e.phase_index): e.t for e in events if isinstance(e, PhaseStarted)}
    scales = {e.id: e.time_scale for e in endpoints}
    sliced = []
    for (
        endpoint_id,
        suite,
        phase,
        t,
        e2e_s,
        status,
        tokens_out,
        ttft_s,
        decode_tps,
    ) in requests.select(_COLUMNS).iter_rows():
        start = starts.get((endpoint_id, phase))
        if start is None:
            continue
        sent_s = (t - start) * scales.get(endpoint_id, 1.0)
        sliced.append(
            SlicedRequest(
                endpoint_id=endpoint_id,
                suite=suite,
                phase_index=phase,
                sent_s=sent_s,
                ended_s=None if e2e_s is None else sent_s + e2e_s,
                failed=status == "error",
                tokens_out=tokens_out,
                ttft_s=ttft_s,
                e2e_s=e2e_s,
                decode_tps=decode_tps,
            )
        )
    return slice_rows(sliced, slice_s, tuple(e.id for e in endpoints))


def slices_table(rows: Sequence[SliceRow], endpoints: Sequence[EndpointInfo]) -> Table:
    labels = {e.id: e.label for e in endpoints}
    title = (
        f"Time slices of {rows[0].slice_s:g} s per phase: requests by when sent; tok/s: output "
        "tokens of the answers that ended in the slice, over its length"
    )
    headers = [
        "endpoint",
        "suite",
        "phase",
        "from s",
        "requests",
        "errors",
        "tok/s",
        "TTFT ms mean",
        "TTFT ms p50",
        "e2e ms mean",
        "decode tok/s p50",
    ]
    body = [
        [
            labels.get(r.endpoint_id, r.endpoint_id),
            r.suite,
            str(r.phase_index),
            f"{r.start_s:g}",
            str(r.requests),
            str(r.errors),
            number_cell(r.throughput_tps, ".1f"),
            ms_cell(r.ttft_mean_s),
            ms_cell(r.ttft_p50_s),
            ms_cell(r.e2e_mean_s),
            number_cell(r.decode_p50_tps, ".1f"),
        ]
        for r in rows
    ]
    return title, headers, body


def slices_chart(rows: Sequence[SliceRow], endpoints: Sequence[EndpointInfo]) -> str | None:
    """Each endpoint's throughput slice after slice, its phases one after another."""
    if not rows:
        return None
    labels = {e.id: outside_line(e.label) for e in endpoints}
    series: dict[str, list[float]] = {}
    for row in rows:
        series.setdefault(row.endpoint_id, []).append(row.throughput_tps)
    return line_chart(
        [
            (labels.get(endpoint_id) or outside_line(endpoint_id), range(1, len(ys) + 1), ys)
            for endpoint_id, ys in series.items()
        ],
        title=f"Throughput per {rows[0].slice_s:g} s slice, each endpoint's phases in order",
        xlabel="slice",
        ylabel="tok/s",
        xticks=_whole_ticks(max(len(ys) for ys in series.values())),
    )


def _whole_ticks(count: int) -> tuple[list[float], list[str]]:
    """Ticks on whole slices, at most 10 of them."""
    step = max(1, -(-count // 10))
    marks = list(range(1, count + 1, step))
    return [float(m) for m in marks], [str(m) for m in marks]

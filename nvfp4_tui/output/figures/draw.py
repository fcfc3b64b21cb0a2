"""Drawing the published figures with matplotlib (headless: the Agg canvas, no pyplot state).

Each ``plot_data`` object becomes one matplotlib ``Figure``; this module computes nothing,
it places what the object holds. Every endpoint is drawn in ``series_hex(colour_index)``, the
colour the TUI gives it; dense models are hatched (bars) or square (points), MoE models solid
or round, and every legend says which. Names are cut at a word boundary (``core.text_fit``).
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, cast

from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.projections.polar import PolarAxes
from matplotlib.ticker import StrMethodFormatter

from nvfp4_tui.core.figures.plot_data import (
    SPEED_LABELS,
    BenchmarkBars,
    Distributions,
    Estimate,
    FigureData,
    LoadFigure,
    ParetoFigure,
    Profile,
    ScalingLines,
    Series,
    SpeedBars,
    SuiteBars,
    VramFigure,
    class_label,
)
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.core.series_colours import series_hex
from nvfp4_tui.core.text_fit import fit_words

PNG_DPI = 120
STYLE: dict[Any, Any] = {
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "svg.hashsalt": "nvfp4-tui",  # the same figure gives the same SVG bytes
    "svg.fonttype": "path",  # text as outlines: the SVG needs no font from anywhere
    "text.parse_math": False,  # a label's "$" is a dollar sign, not mathtext to parse
}
EDGE = "#333333"
END_LABEL_CHARS = 26  # a line's name at its end, cut at a word boundary
END_LABEL_ROOM = 0.55  # of the levels' spacing, right of the last level, for those names
MUTED = "#777777"


def colour(series: Series) -> str:
    return series_hex(series.colour_index)


def hatch(series: Series) -> str:
    return "//" if series.model_class == "dense" else ""


def marker(series: Series) -> str:
    return "s" if series.model_class == "dense" else "o"


def short(text: str, width: int = 34) -> str:
    """Outside text (a label, a suite's name) as one plain line of at most ``width``, cut at a
    word boundary."""
    return fit_words(outside_line(text), width)


def _legend_label(series: Series) -> str:
    return series.named(44)


def _bar_legend(fig: Figure, series: Sequence[Series]) -> None:
    handles = [
        Patch(facecolor=colour(s), edgecolor=EDGE, hatch=hatch(s), label=_legend_label(s))
        for s in series
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(3, len(handles)))


def _line_legend(fig: Figure, series: Sequence[Series]) -> None:
    handles = [
        Line2D(
            [], [], color=colour(s), marker=marker(s), markeredgecolor=EDGE, label=_legend_label(s)
        )
        for s in series
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(3, len(handles)))


def _new(title: str, note: str, *, width: float, height: float, gap: float = 0.02) -> Figure:
    """A figure with its title and note on top; the constrained layout places the rest (axes,
    tick labels, a legend "outside lower center") in the room left below them, ``gap`` (a
    share of the figure) between subplots."""
    title, note = outside_line(title), outside_line(note)
    lines = textwrap.wrap(note, int(width * 13)) if note else []
    header_in = 0.45 + 0.19 * len(lines)
    fig = Figure(
        figsize=(width, height),
        layout=ConstrainedLayoutEngine(
            rect=(0, 0, 1, 1 - header_in / height), hspace=gap, wspace=gap
        ),
    )
    FigureCanvasAgg(fig)
    fig.text(0.01, 1 - 0.1 / height, title, fontsize=13, va="top")
    if lines:
        fig.text(0.01, 1 - 0.42 / height, "\n".join(lines), fontsize=9, color=MUTED, va="top")
    return fig


def _n_text(counts: Sequence[int], what: str) -> str:
    low, high = min(counts), max(counts)
    return f"n = {low} {what}" if low == high else f"n = {low}–{high} {what}"


def _joined(*parts: str) -> str:
    """The figure's own notes first (what this run's data is), then how to read it."""
    return "; ".join(p for p in parts if p)


def suite_bars(data: SuiteBars) -> Figure:
    counts = [e.n for e in data.cells.values()]
    note = _joined(data.note, f"bars: mean, {data.interval}, {_n_text(counts, 'answers per bar')}")
    fig = _new(data.title, note, width=12, height=6.5)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(data.series))
    for i, s in enumerate(data.series):
        xs, ys, lows, highs = [], [], [], []
        for j, suite in enumerate(data.suites):
            cell = data.cell(suite, s.endpoint_id)
            if cell is None:
                continue
            xs.append(j - 0.4 + width * (i + 0.5))
            ys.append(cell.mean)
            lows.append(cell.mean - cell.low if cell.low is not None else 0.0)
            highs.append(cell.high - cell.mean if cell.high is not None else 0.0)
        ax.bar(xs, ys, width, color=colour(s), edgecolor=EDGE, hatch=hatch(s), linewidth=0.6)
        ax.errorbar(xs, ys, yerr=[lows, highs], fmt="none", ecolor=EDGE, elinewidth=0.8, capsize=2)
    ax.set_xticks(range(len(data.suites)), [short(s, 20) for s in data.suites])
    ax.set_ylabel(data.value_label)
    if data.bounded:
        ax.set_ylim(0, 1.05)
    ax.grid(axis="x", visible=False)
    _bar_legend(fig, data.series)
    return fig


def speed_bars(data: SpeedBars) -> Figure:
    counts = [e.n for e in data.bars.values()]
    note = _joined(
        data.note,
        f"bars: mean per request with its t 95% interval, {_n_text(counts, 'requests per bar')}; "
        "dashed: each class's average (its endpoints' means, each counted once)",
    )
    height = 2.2 + 0.45 * len(data.series)
    fig = _new(data.title, note, width=12, height=max(3.8, height))
    axes = fig.subplots(1, len(data.metrics), squeeze=False)[0]
    for k, (ax, metric) in enumerate(zip(axes, data.metrics, strict=True)):
        ys = range(len(data.series))
        top = max((e.high or e.mean for (m, _), e in data.bars.items() if m == metric), default=1.0)
        for y, s in zip(ys, data.series, strict=True):
            bar = data.bars.get((metric, s.endpoint_id))
            if bar is None:
                ax.text(0, y, " —", va="center")
                continue
            err = (
                [[bar.mean - bar.low], [bar.high - bar.mean]]
                if bar.low is not None and bar.high is not None
                else None
            )
            ax.barh(
                y, bar.mean, color=colour(s), edgecolor=EDGE, hatch=hatch(s), xerr=err, capsize=3
            )
            end = bar.high if bar.high is not None else bar.mean
            ax.text(end + top * 0.02, y, f"{bar.mean:.1f} (n={bar.n})", va="center", fontsize=9)
        for (m, model_class), mean in data.class_means.items():
            if m != metric:
                continue
            ax.axvline(mean, color=MUTED, linestyle="--", linewidth=1)
            ax.text(
                mean,
                1.0,
                f"{class_label(model_class)} avg {mean:.1f}",
                transform=ax.get_xaxis_transform(),
                va="bottom",
                ha="center",
                fontsize=8,
                color=MUTED,
            )
        ax.set_yticks(list(ys), [s.named(40) for s in data.series] if k == 0 else [])
        ax.invert_yaxis()
        ax.set_xlim(0, top * 1.25)
        ax.set_xlabel(SPEED_LABELS[metric])
        ax.grid(axis="y", visible=False)
    return fig


def scaling_lines(data: ScalingLines) -> Figure:
    note = _joined(
        data.note,
        "hollow: a level that held its concurrency less than 80% of the time"
        if data.not_steady
        else "",
    )
    fig = _new(data.title, note, width=12, height=6.5)
    ax = fig.add_subplot()
    x_of = {label: i for i, label in enumerate(data.loads)}
    ends: list[tuple[Series, int, float]] = []
    for s in data.series:
        points = [
            (x_of[load], tps, (s.endpoint_id, load) in data.not_steady)
            for load in data.loads
            if (tps := data.points.get((s.endpoint_id, load))) is not None
        ]
        if not points:
            continue
        ax.plot([p[0] for p in points], [p[1] for p in points], color=colour(s), linewidth=2)
        for x, y, hollow in points:
            ax.plot(
                [x],
                [y],
                marker=marker(s),
                markersize=8,
                markeredgecolor=EDGE,
                color="white" if hollow else colour(s),
            )
        ends.append((s, points[-1][0], points[-1][1]))
    ax.set_xticks(range(len(data.loads)), list(data.loads))
    # Room right of the last level for the names at the lines' ends.
    ax.set_xlim(-0.3, len(data.loads) - 1 + END_LABEL_ROOM * max(1, len(data.loads) - 1))
    ax.set_xlabel(data.load_axis)
    ax.set_ylabel("aggregate throughput (tok/s)")
    ax.set_ylim(bottom=0)
    # Each line's name and last value at its end, in its colour, spaced so that lines that lie
    # on top of each other (two builds of one model) are still told apart.
    for (s, x, y), label_y in zip(
        ends, _spaced([_y_fraction(ax, y) for _, _, y in ends], gap=0.04), strict=True
    ):
        ax.annotate(
            f"{short(s.label, END_LABEL_CHARS)}  {y:.0f}",
            xy=(x, y),
            xytext=(_x_fraction(ax, x) + 0.015, label_y),
            textcoords="axes fraction",
            va="center",
            fontsize=8,
            color=colour(s),
            fontweight="bold",
            arrowprops={"arrowstyle": "-", "color": MUTED, "linewidth": 0.5},
        )
    _line_legend(fig, data.series)
    return fig


def distributions(data: Distributions) -> Figure:
    counts = [s.n for s in data.spreads.values()]
    note = _joined(
        data.note,
        "boxes: quartiles and median; whiskers: 5th and 95th percentiles; dots: min and max; "
        f"◆ mean; {_n_text(counts, 'requests per box')}",
    )
    shown = [
        s for s in data.series if any((s.endpoint_id, load) in data.spreads for load in data.loads)
    ]
    height = 2.2 + 0.45 * len(shown)
    fig = _new(data.title, note, width=12, height=max(3.8, height))
    axes = fig.subplots(1, len(data.loads), squeeze=False, sharex=True, sharey=True)[0]
    right = max(x.maximum for x in data.spreads.values()) * data.scale * 1.15
    for ax, load in zip(axes, data.loads, strict=True):
        for y, s in enumerate(shown):
            found = data.spreads.get((s.endpoint_id, load))
            if found is None:
                continue
            scale = data.scale
            stats = {
                "med": found.p50 * scale,
                "q1": found.p25 * scale,
                "q3": found.p75 * scale,
                "whislo": found.p5 * scale,
                "whishi": found.p95 * scale,
                "mean": found.mean * scale,
                "fliers": [found.minimum * scale, found.maximum * scale],
            }
            ax.bxp(
                [stats],
                positions=[y],
                manage_ticks=False,
                orientation="horizontal",
                widths=0.6,
                patch_artist=True,
                showmeans=True,
                meanprops={
                    "marker": "D",
                    "markerfacecolor": "white",
                    "markeredgecolor": EDGE,
                    "markersize": 5,
                },
                boxprops={"facecolor": colour(s), "edgecolor": EDGE, "hatch": hatch(s)},
                medianprops={"color": EDGE},
                flierprops={"marker": ".", "markeredgecolor": EDGE},
            )
            ax.annotate(
                f"n={found.n}",
                (1.0, y),
                xycoords=("axes fraction", "data"),
                xytext=(-2, 0),
                textcoords="offset points",
                ha="right",
                va="center",
                fontsize=8,
                color=MUTED,
            )
        ax.set_title(load, fontsize=10)
        ax.set_xlabel(data.quantity)
        ax.set_xlim(0, right)
        ax.grid(axis="y", visible=False)
    first = axes[0]
    first.set_yticks(range(len(shown)), [s.named(40) for s in shown])
    first.set_ylim(len(shown) - 0.5, -0.5)
    return fig


def profile(data: Profile) -> Figure:
    cols = min(4, len(data.series))
    rows = math.ceil(len(data.series) / cols)
    note = _joined(data.note, "each axis 0 (centre) to 1; missing values are drawn at 0")
    # Polar tick labels are outside what the layout measures: the gap keeps them off the row below.
    fig = _new(data.title, note, width=3.4 * cols + 0.5, height=4.0 * rows + 1.0, gap=0.08)
    angles = [2 * math.pi * i / len(data.axes) for i in range(len(data.axes))]
    for i, s in enumerate(data.series):
        ax = cast(PolarAxes, fig.add_subplot(rows, cols, i + 1, projection="polar"))
        values = [v if v is not None else 0.0 for v in data.values[s.endpoint_id]]
        ax.plot([*angles, angles[0]], [*values, values[0]], color=colour(s), linewidth=2)
        ax.fill(
            [*angles, angles[0]],
            [*values, values[0]],
            color=colour(s),
            alpha=0.3,
            hatch=hatch(s),
            edgecolor=EDGE if hatch(s) else colour(s),
        )
        ax.set_theta_offset(math.pi / 2)  # the first axis on top: no long label on a side
        ax.tick_params(axis="x", pad=6)
        ax.set_ylim(0, 1)
        ax.set_yticks([0.25, 0.5, 0.75], ["", "", ""])
        ax.set_xticks(angles, [short(a, 16) for a in data.axes], fontsize=8)
        ax.set_title(textwrap.fill(s.named(44), 28), fontsize=9, pad=24)
    return fig


def load_figure(data: LoadFigure) -> Figure:
    note = (
        f"SLO: {data.slo}, met by {data.attainment_target:.0%} of requests to sustain a load; "
        "◆ knee (throughput stops growing 5%); ★ capacity (highest load sustained)"
    )
    series = [c.series for c in data.curves]
    fig = _new(data.title, _joined(data.note, note), width=12, height=8)
    top, bottom = fig.subplots(2, 1, sharex=True)
    for curve in data.curves:
        s = curve.series
        xs = [p.load.value for p in curve.points]
        tps = [p.throughput_tps if p.throughput_tps is not None else math.nan for p in curve.points]
        met = [p.attainment * 100 if p.attainment is not None else math.nan for p in curve.points]
        top.plot(xs, tps, color=colour(s), marker=marker(s), markeredgecolor=EDGE)
        bottom.plot(xs, met, color=colour(s), marker=marker(s), markeredgecolor=EDGE)
        for p, y in zip(curve.points, tps, strict=True):
            if p.load.value == curve.knee:
                top.plot(
                    [p.load.value],
                    [y],
                    marker="D",
                    markersize=12,
                    color=colour(s),
                    markeredgecolor=EDGE,
                )
            if p.load.value == curve.capacity:
                top.plot(
                    [p.load.value],
                    [y],
                    marker="*",
                    markersize=16,
                    color=colour(s),
                    markeredgecolor=EDGE,
                )
    bottom.axhline(data.attainment_target * 100, color="#B00020", linestyle="--", linewidth=1.2)
    bottom.text(
        0.01,
        data.attainment_target * 100,
        f" SLO target {data.attainment_target:.0%}",
        transform=bottom.get_yaxis_transform(),
        va="bottom",
        color="#B00020",
        fontsize=9,
    )
    top.set_ylabel("aggregate throughput (tok/s)")
    top.set_ylim(bottom=0)
    bottom.set_ylabel("requests meeting the SLO (%)")
    bottom.set_ylim(0, 105)
    bottom.set_xlabel(data.load_axis)
    # A sweep doubles its load: a log axis spaces its steps evenly; ticks at the loads run.
    loads = {p.load.value: p.load.label for c in data.curves for p in c.points}
    if loads and min(loads) > 0:
        bottom.set_xscale("log", base=2)
    bottom.set_xticks(sorted(loads), [loads[v] for v in sorted(loads)])
    bottom.minorticks_off()
    _line_legend(fig, series)
    return fig


def pareto(data: ParetoFigure) -> Figure:
    note = _joined(
        data.note,
        "bars: 95% intervals (Wilson for the score, t for the speed); dashed line: the "
        "frontier (no other model both faster and better)",
    )
    fig = _new(data.title, note, width=12, height=6.5)
    ax = fig.add_subplot()
    frontier = sorted((m for m in data.marks if m.on_frontier), key=lambda m: m.speed_tps)
    if len(frontier) > 1:
        ax.plot(
            [m.speed_tps for m in frontier],
            [m.quality for m in frontier],
            color=MUTED,
            linestyle="--",
            zorder=1,
        )
    for m in data.marks:
        ax.errorbar(
            [m.speed_tps],
            [m.quality],
            xerr=_span(m.speed),
            yerr=_span(m.score),
            fmt="none",
            ecolor=colour(m.series),
            elinewidth=1,
            capsize=3,
            zorder=2,
        )
        ax.scatter(
            [m.speed_tps],
            [m.quality],
            s=120,
            color=colour(m.series),
            marker=marker(m.series),
            edgecolors=EDGE,
            zorder=3,
        )
    # The limits hold every interval: how far they overlap is what the figure has to say.
    speeds = [
        v for m in data.marks for v in (m.speed.low, m.speed.high, m.speed_tps) if v is not None
    ]
    quals = [v for m in data.marks for v in (m.score.low, m.score.high, m.quality) if v is not None]
    pad_x = max(1.0, (max(speeds) - min(speeds)) * 0.1)
    pad_y = max(0.02, (max(quals) - min(quals)) * 0.1)
    ax.set_xlim(min(speeds) - pad_x, max(speeds) + pad_x)
    ax.set_ylim(min(quals) - pad_y, max(quals) + pad_y)
    mid = sum(ax.get_xlim()) / 2
    for left in (False, True):
        side = [m for m in data.marks if (m.speed_tps > mid) == left]
        if not side:
            continue
        # One column of labels beside each side's points, clear of all of them.
        edge = [_x_fraction(ax, m.speed_tps) for m in side]
        x = min(edge) - 0.03 if left else max(edge) + 0.03
        for m, y in zip(side, _spaced([_y_fraction(ax, m.quality) for m in side]), strict=True):
            frontier_mark = " · frontier" if m.on_frontier else ""
            ax.annotate(
                f"{m.series.named(40)}{frontier_mark}\n"
                f"{m.quality:.3f} (n={m.score.n}) at {m.speed_tps:.1f} tok/s (n={m.speed.n})",
                xy=(m.speed_tps, m.quality),
                xytext=(x, y),
                textcoords="axes fraction",
                ha="right" if left else "left",
                va="center",
                fontsize=8.5,
                color=EDGE,
                bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none"},
                arrowprops={"arrowstyle": "-", "color": colour(m.series), "linewidth": 1},
            )
    ax.set_xlabel(f"{data.speed_label}, mean per request")
    ax.set_ylabel(f"{data.quality_label}, mean per answer")
    return fig


def _span(e: Estimate) -> list[list[float]] | None:
    """An error bar's lengths below and above the mean; None without an interval."""
    if e.low is None or e.high is None:
        return None
    return [[e.mean - e.low], [e.high - e.mean]]


def _x_fraction(ax: Any, x: float) -> float:
    low, high = ax.get_xlim()
    return float((x - low) / (high - low))


def _y_fraction(ax: Any, y: float) -> float:
    low, high = ax.get_ylim()
    return float((y - low) / (high - low))


def _spaced(ys: Sequence[float], gap: float = 0.085) -> list[float]:
    """``ys`` (axes fractions) moved apart to at least ``gap`` each, in their order, kept
    within the axes: two-line labels beside close points must not overlap."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    placed = [0.0] * len(ys)
    floor = 0.04
    for i in order:
        placed[i] = max(ys[i], floor)
        floor = placed[i] + gap
    overflow = floor - gap - 0.96
    if overflow > 0:
        placed = [y - overflow for y in placed]
    return placed


def vram(data: VramFigure) -> Figure:
    note = _joined(data.note, "bar: after the run; | before it; ▸ peak")
    height = 2.2 + 0.45 * len(data.bars)
    fig = _new(data.title, note, width=12, height=max(3.8, height))
    ax = fig.add_subplot()
    top = max(b.reading.peak_mib for b in data.bars)
    for y, bar in enumerate(data.bars):
        r, s = bar.reading, bar.series
        ax.barh(
            y,
            r.after_mib,
            color=colour(s) if s else "#DDDDDD",
            edgecolor=EDGE,
            hatch=hatch(s) if s else "",
        )
        ax.plot([r.before_mib], [y], marker="|", markersize=18, color=EDGE)
        ax.plot([r.peak_mib], [y], marker=">", markersize=6, color=EDGE)
        change = r.after_mib - r.before_mib
        ax.text(
            top * 1.02,
            y,
            f"{r.before_mib:,.0f} → {r.after_mib:,.0f} ({change:+,.0f}), peak {r.peak_mib:,.0f}",
            va="center",
            fontsize=8.5,
        )
    labels = [
        f"GPU {b.reading.gpu}: " + (b.series.named(40) if b.series else "no endpoint")
        for b in data.bars
    ]
    ax.set_yticks(range(len(data.bars)), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, top * 1.45)
    ax.set_xlabel("VRAM used (MiB)")
    ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.grid(axis="y", visible=False)
    return fig


def benchmarks(data: BenchmarkBars) -> Figure:
    counts = [e.n for p in data.panels for _, e in p.bars]
    note = _joined(
        data.note,
        f"bars: score over every load level with its Wilson 95% interval, "
        f"{_n_text(counts, 'problems scored per bar')}",
    )
    rows = [len(p.bars) for p in data.panels]
    height = 1.6 + sum(0.9 + 0.45 * n for n in rows)
    fig = _new(data.title, note, width=12, height=max(3.8, height), gap=0.04)
    axes = fig.subplots(len(data.panels), 1, squeeze=False, height_ratios=rows)[:, 0]
    for ax, panel in zip(axes, data.panels, strict=True):
        for y, (s, e) in enumerate(panel.bars):
            ax.barh(
                y, e.mean, color=colour(s), edgecolor=EDGE, hatch=hatch(s), xerr=_span(e), capsize=3
            )
            end = e.high if e.high is not None else e.mean
            ax.text(end + 0.02, y, f"{e.mean:.3f} (n={e.n})", va="center", fontsize=9)
        ax.set_yticks(range(len(panel.bars)), [s.named(40) for s, _ in panel.bars])
        ax.invert_yaxis()
        ax.set_xlim(0, 1.25)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
        ax.set_xlabel(f"{short(panel.metric, 20)} (0–1)")
        if len(data.panels) > 1:
            ax.set_title(short(panel.label, 110), fontsize=10, loc="left")
        ax.grid(axis="y", visible=False)
    return fig


DRAWERS: dict[type, Callable[[Any], Figure]] = {
    SuiteBars: suite_bars,
    SpeedBars: speed_bars,
    ScalingLines: scaling_lines,
    Distributions: distributions,
    Profile: profile,
    LoadFigure: load_figure,
    ParetoFigure: pareto,
    VramFigure: vram,
    BenchmarkBars: benchmarks,
}


def image_bytes(data: FigureData, fmt: str) -> bytes:
    """The figure as ``png`` or ``svg`` bytes; the same data gives the same bytes."""
    with rc_context(STYLE):
        fig = DRAWERS[type(data)](data)
        out = io.BytesIO()
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        fig.savefig(out, format=fmt, dpi=PNG_DPI, metadata=metadata)
    return out.getvalue()

"""The data behind each published figure (``export --format figures``, the HTML report, the
Markdown write-up): one small frozen object per figure, built here from the board and the run's
per-request values, which the drawing code only draws. Tests read these objects, not pixels.

The seed's six figures come first (quality, speed, throughput scaling, latency, output length,
a profile per model), then the ones this project adds (TTFT, ITL, throughput against load with
knees and the SLO, Pareto, VRAM, the standard benchmarks' scores). A figure the run's data
cannot support is an ``Omitted`` with the reason, so a write-up can say what is missing and why
(a legacy import has no TTFT).

Every endpoint is a ``Series`` whose ``colour_index`` is its model's hue (``series_colours``),
the one the TUI's charts give it too. Labels are made one plain line here,
and cut at a word boundary with their class named once (``Series.named``). A run on a simulator
faster than real time says so on every figure with a speed or time axis (``clock_note``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from nvfp4_tui.core.figures.benchmarks import benchmark_sections
from nvfp4_tui.core.figures.board import (
    Board,
    SpeedMetric,
    class_averages,
    pareto_points,
    pooled_stats,
    quality_table,
    speed_metric,
)
from nvfp4_tui.core.figures.intervals import wilson_95
from nvfp4_tui.core.figures.leaderboard import LeaderRow
from nvfp4_tui.core.figures.scores import score_label
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.core.series_colours import colour_indices
from nvfp4_tui.core.slo import CapacityRow, Load, LoadPoint, load_axis
from nvfp4_tui.core.stats import StatsSummary, finite, percentiles
from nvfp4_tui.core.text_fit import fit_words
from nvfp4_tui.core.timing_doubt import MODELLED_TIME

SEED_FIGURES = ("quality", "speed", "throughput_scaling", "latency", "output_length", "profile")
ADDED_FIGURES = ("ttft", "itl", "throughput_vs_load", "pareto", "vram", "benchmarks")
SPEED_LABELS: dict[SpeedMetric, str] = {
    "decode_tps": "decode tok/s",
    "e2e_tps": "e2e tok/s (includes prefill)",
}
CLASS_LABELS = {"moe": "MoE", "dense": "dense"}  # as the report's lineup writes them


def class_label(model_class: str) -> str:
    return CLASS_LABELS.get(model_class, model_class or "class unknown")


@dataclass(frozen=True)
class Series:
    """One endpoint as every figure draws it."""

    endpoint_id: str
    label: str  # one plain line
    model_class: str  # "moe", "dense", or "" when unknown
    colour_index: int  # its model's hue (series_colours.colour_indices)
    gpu: int | None

    @property
    def class_label(self) -> str:
        return class_label(self.model_class)

    def named(self, width: int) -> str:
        """The label cut at a word boundary to ``width``, then its class in brackets unless
        the label as shown already names it ("Gemma4 MoE (official)" stays as it is)."""
        head = fit_words(self.label, width)
        # Letters, not word characters, bound the class: "Qwen3MoE" names it, "condensed" not.
        named = re.search(rf"(?<![a-z]){re.escape(self.class_label)}(?![a-z])", head, re.I)
        return head if named else f"{head} ({self.class_label})"


def series_of(board: Board) -> tuple[Series, ...]:
    infos = {e.id: e for e in board.endpoints}
    hues = colour_indices(board.endpoint_ids)
    out = []
    for eid in board.endpoint_ids:
        info = infos.get(eid)
        label = outside_line(info.label if info else eid) or outside_line(eid)
        out.append(
            Series(
                eid,
                label,
                info.model_class if info else "",
                hues[eid],
                info.gpu if info else None,
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class Estimate:
    """A mean with its 95% interval (None: too few samples) over ``n`` samples."""

    mean: float
    low: float | None
    high: float | None
    n: int


def estimate(summary: StatsSummary) -> Estimate | None:
    if summary.mean is None or not summary.n:
        return None
    return Estimate(summary.mean, summary.ci95_low, summary.ci95_high, summary.n)


@dataclass(frozen=True)
class Spread:
    """What a box plot shows of a set of values: the quartiles, the 5th and 95th percentiles
    (the whiskers), the extremes and the mean."""

    n: int
    mean: float
    minimum: float
    p5: float
    p25: float
    p50: float
    p75: float
    p95: float
    maximum: float


def spread(values: Sequence[float]) -> Spread | None:
    """The spread of the finite ``values``; None when there are none."""
    kept = sorted(v for x in values if (v := finite(x)) is not None)
    if not kept:
        return None
    qs = percentiles(kept, (5, 25, 50, 75, 95))
    p5, p25, p50, p75, p95 = (q if q is not None else kept[0] for q in qs)
    return Spread(len(kept), sum(kept) / len(kept), kept[0], p5, p25, p50, p75, p95, kept[-1])


@dataclass(frozen=True)
class Omitted:
    """A figure the run's data cannot support, and why."""

    name: str
    title: str
    reason: str


@dataclass(frozen=True)
class SuiteBars:
    """Bars per suite (groups) and endpoint: quality, output length."""

    name: str
    title: str
    value_label: str  # the y axis, with its unit
    bounded: bool  # values live in [0, 1]
    interval: str  # what the error bars are
    suites: tuple[str, ...]
    series: tuple[Series, ...]
    cells: Mapping[tuple[str, str], Estimate]  # (suite, endpoint id)
    note: str = ""

    def cell(self, suite: str, endpoint_id: str) -> Estimate | None:
        return self.cells.get((suite, endpoint_id))


@dataclass(frozen=True)
class SpeedBars:
    """Per endpoint, the mean per-request speed of each metric, with its class's average."""

    name: str
    title: str
    metrics: tuple[SpeedMetric, ...]
    series: tuple[Series, ...]
    bars: Mapping[tuple[SpeedMetric, str], Estimate]  # (metric, endpoint id)
    class_means: Mapping[tuple[SpeedMetric, str], float]  # (metric, class)
    note: str = ""


@dataclass(frozen=True)
class ScalingLines:
    """Aggregate throughput per load level, one line per endpoint."""

    name: str
    title: str
    load_axis: str
    loads: tuple[str, ...]  # the levels' labels, lowest first
    series: tuple[Series, ...]
    points: Mapping[tuple[str, str], float]  # (endpoint id, load label) -> tok/s
    not_steady: frozenset[tuple[str, str]]  # levels that never held their concurrency
    note: str = ""


@dataclass(frozen=True)
class Distributions:
    """A spread per endpoint and load level of one per-request quantity."""

    name: str
    title: str
    quantity: str  # the axis label, with its unit
    scale: float  # the values are seconds; the axis shows them times this
    loads: tuple[str, ...]
    series: tuple[Series, ...]
    spreads: Mapping[tuple[str, str], Spread]  # (endpoint id, load label)
    note: str = ""


@dataclass(frozen=True)
class Profile:
    """One small radar per endpoint: quality per suite and its speed relative to the fastest."""

    name: str
    title: str
    axes: tuple[str, ...]  # the suites, then "speed"
    series: tuple[Series, ...]
    values: Mapping[str, tuple[float | None, ...]]  # endpoint id -> one value per axis, in [0, 1]
    note: str = ""


@dataclass(frozen=True)
class LoadCurve:
    series: Series
    points: tuple[LoadPoint, ...]
    knee: float | None  # the load of the knee; None: throughput still grew at the highest
    capacity: float | None  # the highest load sustained within the SLO


@dataclass(frozen=True)
class LoadFigure:
    """Throughput and SLO attainment against load, knees and capacities marked."""

    name: str
    title: str
    load_axis: str
    curves: tuple[LoadCurve, ...]
    attainment_target: float
    slo: str  # the targets, e.g. "TTFT ≤ 2 s, TPOT ≤ 0.05 s"
    note: str = ""


@dataclass(frozen=True)
class ParetoMark:
    series: Series
    speed_tps: float
    quality: float
    on_frontier: bool
    speed: Estimate  # the same mean, with its t interval over the requests timed
    score: Estimate  # the same mean, with its Wilson interval over the answers scored


@dataclass(frozen=True)
class ParetoFigure:
    name: str
    title: str
    speed_label: str
    quality_label: str
    marks: tuple[ParetoMark, ...]
    note: str = ""


@dataclass(frozen=True)
class VramReading:
    """One GPU's VRAM in MiB: its first sample (before the run), its last, its peak."""

    gpu: int
    before_mib: float
    after_mib: float
    peak_mib: float


@dataclass(frozen=True)
class VramBar:
    reading: VramReading
    series: Series | None  # the endpoint on that GPU; None: a GPU no endpoint used


@dataclass(frozen=True)
class VramFigure:
    name: str
    title: str
    bars: tuple[VramBar, ...]
    note: str = ""


@dataclass(frozen=True)
class BenchmarkPanel:
    """One standard benchmark's score per endpoint that answered it."""

    label: str  # benchmark and protocol: "HumanEval pass@1, greedy, n=164, chat prompt v1"
    metric: str  # "pass@1"
    bars: tuple[tuple[Series, Estimate], ...]  # Wilson interval over n distinct problems
    note: str = ""  # the dataset's rows left out


@dataclass(frozen=True)
class BenchmarkBars:
    """The standard benchmarks (HumanEval, a JSONL dataset), each in a panel of its own."""

    name: str
    title: str
    panels: tuple[BenchmarkPanel, ...]
    note: str = ""


FigureData = (
    SuiteBars
    | SpeedBars
    | ScalingLines
    | Distributions
    | Profile
    | LoadFigure
    | ParetoFigure
    | VramFigure
    | BenchmarkBars
)


@dataclass(frozen=True)
class RequestValues:
    """Per request values of the distribution figures, by (endpoint id, load level): requests
    that did not fail and are timed (not a warm-up or cool-down)."""

    e2e_s: Mapping[tuple[str, Load], Sequence[float]]
    ttft_s: Mapping[tuple[str, Load], Sequence[float]]
    itl_p50_s: Mapping[tuple[str, Load], Sequence[float]]


@dataclass(frozen=True)
class FigureInputs:
    board: Board
    score_name: str
    values: RequestValues
    capacity: Sequence[tuple[CapacityRow, tuple[LoadPoint, ...]]]
    vram: Sequence[VramReading]
    legacy: bool  # an import of the seed script's JSON
    levels_note: str = ""  # what a level really held, where it is not what it says

    @property
    def clock_note(self) -> str:
        return clock_note(self.board)


def clock_note(board: Board) -> str:
    """That a simulator run faster than real time (demo --time-scale) is drawn in modelled
    time; "" when every endpoint ran on real time."""
    labels = {s.endpoint_id: s.label for s in series_of(board)}
    scaled: dict[float, list[str]] = {}
    for e in board.endpoints:
        if e.time_scale != 1.0:
            scaled.setdefault(e.time_scale, []).append(fit_words(labels[e.id], 30))
    if not scaled:
        return ""
    if len(scaled) == 1 and len(next(iter(scaled.values()))) == len(board.endpoints):
        (scale,) = scaled
        return f"simulator ×{scale:g}: {MODELLED_TIME}"
    return (
        "simulator "
        + "; ".join(f"×{k:g} for {', '.join(names)}" for k, names in scaled.items())
        + f": {MODELLED_TIME}"
    )


def _joined(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def _benchmark_names(board: Board) -> str:
    return ", ".join(dict.fromkeys(outside_line(b.benchmark) for b in board.benchmarks))


def _unscored(board: Board, score: str) -> str:
    """Why no suite quality was scored: a run of standard benchmarks alone, or no answer on
    its suites with the score shown."""
    if board.benchmarks and not board.seed_suites:
        return (
            f"the run's only suites are standard benchmarks ({_benchmark_names(board)}), which "
            "are not pooled into suite quality; see the benchmarks figure"
        )
    reason = f"no answer on the run's suites has a {score_label(score)} score"
    if board.benchmarks:
        reason += (
            f"; its standard benchmarks ({_benchmark_names(board)}) are not pooled into suite "
            "quality: see the benchmarks figure"
        )
    return reason


def _at(load: Load | None) -> str:
    if load is None:
        return "no load level"
    return f"concurrency {load.value:g}" if load.kind == "concurrency" else load.label


def _suite_bars(
    inputs: FigureInputs,
    name: str,
    title: str,
    value_label: str,
    value: Callable[[LeaderRow], StatsSummary],
    *,
    bounded: bool,
    interval: str,
    among: tuple[str, ...] | None = None,
    missing: str = "no request of the run has this figure's value",
) -> SuiteBars | Omitted:
    """Bars per suite of ``among`` (default: every suite of the run)."""
    board = inputs.board
    among = board.suites if among is None else among
    cells: dict[tuple[str, str], Estimate] = {}
    for eid in board.endpoint_ids:
        for suite, row in board.at_base(eid).items():
            if suite in among and (found := estimate(value(row))) is not None:
                cells[(suite, eid)] = found
    suites = tuple(s for s in among if any((s, e) in cells for e in board.endpoint_ids))
    if not cells:
        return Omitted(name, title, missing)
    empty = [s for s in among if s not in suites]
    note = f"no value on {', '.join(empty)}: left out" if empty else ""
    return SuiteBars(
        name, title, value_label, bounded, interval, suites, series_of(board), cells, note
    )


def quality_bars(inputs: FigureInputs) -> SuiteBars | Omitted:
    board, score = inputs.board, inputs.score_name
    table = quality_table(board, score)
    return _suite_bars(
        inputs,
        "quality",
        f"Quality per suite: {score_label(score)} score, mean per answer, {_at(table.load)}",
        f"{score_label(score)} score (0–1)",
        lambda row: row.score(score),
        bounded=True,
        interval="Wilson 95% interval",
        among=board.seed_suites,  # standard benchmarks have their own table (figures.benchmarks)
        missing=_unscored(board, score),
    )


def output_length_bars(inputs: FigureInputs) -> SuiteBars | Omitted:
    return _suite_bars(
        inputs,
        "output_length",
        f"Output length per suite: mean tokens per answer, {_at(inputs.board.base_load)}",
        "output tokens",
        lambda row: row.tokens_out,
        bounded=False,
        interval="t 95% interval",
        missing="no answer of the run counted its output tokens",
    )


def speed_bars(inputs: FigureInputs) -> SpeedBars | Omitted:
    board = inputs.board
    title = f"Speed per request: mean over every suite, {_at(board.base_load)}"
    metrics: tuple[SpeedMetric, ...] = (
        ("decode_tps", "e2e_tps") if speed_metric(board) == "decode_tps" else ("e2e_tps",)
    )
    series = series_of(board)
    bars: dict[tuple[SpeedMetric, str], Estimate] = {}
    class_means: dict[tuple[SpeedMetric, str], float] = {}
    for metric in metrics:
        means: dict[str, float | None] = {}
        for s in series:
            rows = board.at_base(s.endpoint_id).values()
            found = estimate(pooled_stats(getattr(r, metric) for r in rows))
            means[s.endpoint_id] = found.mean if found else None
            if found is not None:
                bars[(metric, s.endpoint_id)] = found
        classes = {s.endpoint_id: s.model_class for s in series}
        for model_class, average in class_averages(means, classes).items():
            if average is not None:
                class_means[(metric, model_class)] = average
    if not bars:
        return Omitted("speed", title, "no request of the run was timed")
    note = (
        ""
        if "decode_tps" in metrics
        else "no decode tok/s: the run timed no first token, so only the seed's e2e tok/s "
        "(output tokens / latency, prefill included)"
    )
    return SpeedBars(
        "speed", title, metrics, series, bars, class_means, _joined(inputs.clock_note, note)
    )


def scaling_lines(inputs: FigureInputs) -> ScalingLines | Omitted:
    board = inputs.board
    loads = board.level_loads()
    axis = load_axis(loads)
    title = f"Throughput scaling: aggregate tok/s vs {axis} (output tokens / phase wall time)"
    points: dict[tuple[str, str], float] = {}
    not_steady: set[tuple[str, str]] = set()
    for row in board.levels:
        if row.throughput_tps is None:
            continue
        points[(row.endpoint, row.load.label)] = row.throughput_tps
        if row.steady is False:
            not_steady.add((row.endpoint, row.load.label))
    if not points:
        return Omitted("throughput_scaling", title, "no phase of the run finished")
    return ScalingLines(
        "throughput_scaling",
        title,
        axis,
        tuple(load.label for load in loads),
        series_of(board),
        points,
        frozenset(not_steady),
        _joined(inputs.clock_note, inputs.levels_note),
    )


def _distributions(
    inputs: FigureInputs,
    name: str,
    title: str,
    quantity: str,
    scale: float,
    values: Mapping[tuple[str, Load], Sequence[float]],
    missing: str,
) -> Distributions | Omitted:
    spreads: dict[tuple[str, str], Spread] = {}
    loads: set[Load] = set()
    for (eid, load), items in values.items():
        if (found := spread(items)) is not None:
            spreads[(eid, load.label)] = found
            loads.add(load)
    if not spreads:
        return Omitted(name, title, missing)
    ordered = tuple(load.label for load in sorted(loads, key=lambda load: load.order))
    note = _joined(inputs.clock_note, inputs.levels_note)
    return Distributions(
        name, title, quantity, scale, ordered, series_of(inputs.board), spreads, note
    )


def _no_timing(inputs: FigureInputs, what: str) -> str:
    if inputs.legacy:
        return f"no {what}: the seed script's JSON holds one latency per request, no stream timings"
    return f"no request of the run recorded a {what}"


def latency_spread(inputs: FigureInputs) -> Distributions | Omitted:
    return _distributions(
        inputs,
        "latency",
        "Latency per request: end to end, per load level",
        "E2E latency (s)",
        1.0,
        inputs.values.e2e_s,
        "no request of the run finished with a latency",
    )


def ttft_spread(inputs: FigureInputs) -> Distributions | Omitted:
    return _distributions(
        inputs,
        "ttft",
        "Time to first token per request, per load level",
        "TTFT (ms)",
        1000.0,
        inputs.values.ttft_s,
        _no_timing(inputs, "time to first token"),
    )


def itl_spread(inputs: FigureInputs) -> Distributions | Omitted:
    return _distributions(
        inputs,
        "itl",
        "Inter-token latency: each request's median gap, per load level",
        "ITL p50 per request (ms)",
        1000.0,
        inputs.values.itl_p50_s,
        _no_timing(inputs, "inter-token latency"),
    )


def profile_radar(inputs: FigureInputs) -> Profile | Omitted:
    board, score = inputs.board, inputs.score_name
    table = quality_table(board, score)
    metric = speed_metric(board)
    title = (
        f"Profile per model: {score_label(score)} quality per suite and "
        f"{SPEED_LABELS[metric].split(' (')[0]} ÷ the fastest, {_at(table.load)}"
    )
    suites = tuple(s for s in table.suites if any(k[0] == s for k in table.cells))
    if not suites:
        return Omitted("profile", title, _unscored(board, score))
    speeds = {
        eid: pooled_stats(getattr(r, metric) for r in board.at_base(eid).values()).mean
        for eid in board.endpoint_ids
    }
    fastest = max((v for v in speeds.values() if v is not None), default=None)
    values: dict[str, tuple[float | None, ...]] = {}
    for eid in board.endpoint_ids:
        quality = [getattr(table.cell(suite, eid), "mean", None) for suite in suites]
        speed = speeds[eid]
        values[eid] = (*quality, speed / fastest if speed is not None and fastest else None)
    # Speed relative to the fastest, each in its modelled time: endpoints on other clocks say so.
    mixed = len({e.time_scale for e in board.endpoints}) > 1
    note = inputs.clock_note if mixed else ""
    return Profile("profile", title, (*suites, "speed"), series_of(board), values, note)


def load_curves(inputs: FigureInputs) -> LoadFigure | Omitted:
    title = "Throughput and SLO attainment vs load, knees and capacity marked"
    rows = [(row, points) for row, points in inputs.capacity if points]
    if not rows:
        reason = (
            "the run set no SLO targets and ran no sweep: there is no knee or capacity to mark "
            "(aggregate throughput per level is in throughput_scaling)"
        )
        return Omitted("throughput_vs_load", title, reason)
    by_id = {s.endpoint_id: s for s in series_of(inputs.board)}
    curves = tuple(
        LoadCurve(
            by_id.get(row.endpoint)
            or Series(
                row.endpoint,
                outside_line(row.endpoint),
                "",
                colour_indices([row.endpoint])[row.endpoint],
                None,
            ),
            points,
            row.knee,
            row.capacity,
        )
        for row, points in rows
    )
    first = rows[0][0]
    slo = ", ".join(f"{name} ≤ {value:g} s" for name, value in first.slo_targets)
    loads = [p.load for _, points in rows for p in points]
    return LoadFigure(
        "throughput_vs_load",
        title,
        load_axis(loads),
        curves,
        first.slo_attainment,
        slo or "no targets (a sweep alone)",
        inputs.clock_note,
    )


def pareto_marks(inputs: FigureInputs) -> ParetoFigure | Omitted:
    board, score = inputs.board, inputs.score_name
    metric = speed_metric(board)
    title = (
        f"Quality vs speed: mean {score_label(score)} score against mean "
        f"{SPEED_LABELS[metric]}, {_at(board.base_load)}; frontier joined"
    )
    by_id = {s.endpoint_id: s for s in series_of(board)}
    marks = []
    for p in pareto_points(board, score, metric):
        rows = board.at_base(p.endpoint_id).values()
        speed = estimate(pooled_stats(getattr(r, metric) for r in rows))
        answers = sum(r.score(score).n for r in rows)
        low, high = wilson_95(p.quality, answers) or (None, None)
        quality = Estimate(p.quality, low, high, answers)
        if speed is not None:
            marks.append(
                ParetoMark(
                    by_id[p.endpoint_id], p.speed_tps, p.quality, p.on_frontier, speed, quality
                )
            )
    if not marks:
        scored = quality_table(board, score).cells
        reason = "no endpoint has both a scored and a timed answer"
        return Omitted("pareto", title, reason if scored else _unscored(board, score))
    return ParetoFigure(
        "pareto",
        title,
        SPEED_LABELS[metric],
        f"{score_label(score)} score",
        tuple(marks),
        inputs.clock_note,
    )


def vram_bars(inputs: FigureInputs) -> VramFigure | Omitted:
    title = "VRAM used per GPU (MiB, as nvidia-smi reports it): before, after and peak"
    if not inputs.vram:
        return Omitted("vram", title, "no GPU sample recorded VRAM")
    on_gpu = {s.gpu: s for s in series_of(inputs.board) if s.gpu is not None}
    bars = tuple(VramBar(r, on_gpu.get(r.gpu)) for r in sorted(inputs.vram, key=lambda r: r.gpu))
    idle = [str(b.reading.gpu) for b in bars if b.series is None]
    note = f"GPU {', '.join(idle)}: no endpoint of the run" if idle else ""
    return VramFigure("vram", title, bars, note)


def benchmark_bars(inputs: FigureInputs) -> BenchmarkBars | Omitted:
    """Each standard benchmark's score per endpoint (``figures.benchmarks``): the verified
    score over every load level, its Wilson interval over the distinct problems scored."""
    board = inputs.board
    sections = benchmark_sections(board)
    if len(sections) == 1:
        title = f"Standard benchmark: {sections[0].label}; every load level"
    else:
        title = "Standard benchmarks: each benchmark and its protocol in a panel; every load level"
    if not sections:
        reason = "the run ran no standard benchmark (a dataset suite such as HumanEval)"
        return Omitted("benchmarks", "Standard benchmarks", reason)
    by_id = {s.endpoint_id: s for s in series_of(board)}
    panels = []
    unscored = []
    for section in sections:
        bars = tuple(
            (by_id[eid], found)
            for eid, summary in section.scores
            if (found := estimate(summary)) is not None
        )
        if bars:
            metric = outside_line(section.benchmark.metric)
            panels.append(BenchmarkPanel(section.label, metric, bars, section.note))
        else:
            unscored.append(outside_line(section.benchmark.benchmark))
    if not panels:
        reason = (
            f"no answer to the run's standard benchmarks ({_benchmark_names(board)}) was scored"
        )
        return Omitted("benchmarks", title, reason)
    note = _joined(
        "kept apart from the suites' quality, never pooled into it",
        f"no answer scored on {', '.join(unscored)}" if unscored else "",
        panels[0].note if len(panels) == 1 else "",
    )
    return BenchmarkBars("benchmarks", title, tuple(panels), note)


BUILDERS: tuple[Callable[[FigureInputs], FigureData | Omitted], ...] = (
    quality_bars,
    speed_bars,
    scaling_lines,
    latency_spread,
    output_length_bars,
    profile_radar,
    ttft_spread,
    itl_spread,
    load_curves,
    pareto_marks,
    vram_bars,
    benchmark_bars,
)


def published_figures(inputs: FigureInputs) -> tuple[FigureData | Omitted, ...]:
    """Every figure, the seed's six first, each drawn or omitted with its reason."""
    return tuple(build(inputs) for build in BUILDERS)

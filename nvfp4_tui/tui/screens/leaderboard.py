"""LeaderboardScreen: the seed's tables, live — quality per suite, speed against each class,
throughput against load with each endpoint's knee — and what they imply: the quality/speed Pareto
frontier and a route per task."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import ClassVar, Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual_plotext.plot import Plot

from nvfp4_tui.core.figures.benchmarks import benchmark_sections
from nvfp4_tui.core.figures.board import (
    ROUTE_MIN_PROMPTS,
    Board,
    pareto_axes,
    pareto_points,
    quality_table,
    route_by_task,
    speed_rows,
)
from nvfp4_tui.core.figures.scores import score_label
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.core.plain_text import one_line
from nvfp4_tui.core.series_colours import colour_indices, series_hex
from nvfp4_tui.core.slo import load_axis
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui import units
from nvfp4_tui.tui.bindings import app_binding, key_label
from nvfp4_tui.tui.palette import CellStyles, cell_styles
from nvfp4_tui.tui.readouts import (
    base_text,
    capacity_rows,
    class_name,
    load_curves,
    load_text,
    next_score,
    short_labels,
    slo_text,
)
from nvfp4_tui.tui.screens.base import StateScreen
from nvfp4_tui.tui.widgets.charts import (
    Chart,
    ChartColors,
    PlotFrame,
    place_labels,
    plot_cells,
    separate_cells,
    series_marker,
    series_rgb,
    spread_rows,
)
from nvfp4_tui.tui.widgets.configuration import ConfigurationBlock
from nvfp4_tui.tui.widgets.fit_line import FitLine
from nvfp4_tui.tui.widgets.keys_footer import KeysFooter
from nvfp4_tui.tui.widgets.live_table import Cell, Column, LiveTable, Row
from nvfp4_tui.tui.widgets.ticks import nice_xticks, nice_yticks
from nvfp4_tui.tui.widgets.vram_table import VramTable

REDRAW_INTERVAL_S = 0.5
QUALITY_CELL_W = 10  # "0.66 ±.40 " before n, which takes 2 columns or more
QUALITY_FRAME_W = 3  # the table's borders and the body's scrollbar
STACKED_BELOW_W = 100
SERIES_NUDGE = 0.25  # of one level's spacing: how far apart the series' points spread


Named = tuple[str, float, float, tuple[int, int, int]]  # label, x, y, colour


def label_points(
    plt: Plot,
    named: list[Named],
    frame: PlotFrame,
    colors: ChartColors,
    *,
    column: int | None = None,
) -> None:
    """Write each ``(label, x, y, colour)`` two cells right of its point (or in ``column``),
    moved up or down a row where it would cover another label or a point."""
    points = [frame.cell(x, y) for _, x, y, _ in named]
    if column is not None:
        rows = spread_rows([frame.row(y) for _, _, y, _ in named], frame.height)
        cells = [(column, row) for row in rows]
    else:
        anchors = [
            (c + 2, r, len(label)) for (label, *_), (c, r) in zip(named, points, strict=True)
        ]
        cells = place_labels(anchors, frame.width, frame.height, points)
    for (label, _, _, color), cell in zip(named, cells, strict=True):
        x, y = frame.point(cell)
        plt.text(label, x, y, color=color, background=colors.canvas, alignment="left")


QualityLayout = Literal["suites down", "endpoints down", "means only"]


def quality_layout(
    suites: Sequence[str],
    labels: Sequence[str],
    classes: Sequence[str],
    room: int,
    most_n: int = 99,
) -> QualityLayout:
    """The first layout of the quality table that fits ``room`` columns: suites down and
    endpoints across; endpoints down and suites across; that without the class column and
    with the mean alone in each cell. Each column is padded one either side; a cell is
    ``QUALITY_CELL_W`` and the digits of the largest n (``most_n``)."""
    cell_w = QUALITY_CELL_W + max(2, len(str(most_n)))

    def width(*columns: int) -> int:
        return sum(c + 2 for c in columns)

    label_w = max((len(label) for label in (*labels, "endpoint")), default=0)
    class_w = max((len(c) for c in (*classes, "class")), default=0)
    suites_down = width(
        max((len(suite) for suite in (*suites, "suite")), default=0),
        *(max(len(label), len(c), cell_w) for label, c in zip(labels, classes, strict=True)),
    )
    if suites_down <= room:
        return "suites down"
    if width(label_w, class_w, *(max(len(suite), cell_w) for suite in suites)) <= room:
        return "endpoints down"
    return "means only"


def _right(text: str, style: str = "") -> Text:
    return Text(text, style=style, justify="right")


def unsteady_notes(board: Board) -> list[str]:
    """Per closed-loop level that some endpoint never held: how much of the time it did, e.g.
    ``c=4 at full load 38–52% of the time: not steady``."""
    shares: dict[str, list[float]] = {}
    for level in board.levels:
        if level.steady is False and level.full_load_share is not None:
            shares.setdefault(level.load.label, []).append(level.full_load_share)
    notes = []
    for label, values in shares.items():
        low, high = min(values), max(values)
        span = f"{low:.0%}" if round(low * 100) == round(high * 100) else f"{low:.0%}–{high:.0%}"
        notes.append(f"{label} at full load {span} of the time: not steady")
    return notes


class LeaderboardScreen(StateScreen):
    CSS_PATH = "leaderboard.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back", id="back")]

    def __init__(self) -> None:
        super().__init__(id="leaderboard")
        self._key: tuple[object, ...] | None = None
        self._drawn_t = -float("inf")

    def compose(self) -> ComposeResult:
        yield FitLine(id="lb-head")
        yield ConfigurationBlock(id="lb-config")
        # A table with focus (tab) has a row cursor: it and the scroll a user set stay put as the
        # tables refresh.
        with VerticalScroll(id="lb-body"):
            yield LiveTable(id="quality", header_height=2)
            yield LiveTable(id="benchmarks")
            with Horizontal(id="lb-middle"):
                yield LiveTable(id="speed")
                yield LiveTable(id="routes")
            yield LiveTable(id="capacity")
            yield FitLine(id="lb-legend")
            with Horizontal(id="lb-charts"):
                yield Chart("aggregate throughput (tok/s) vs load", id="chart-scaling")
                yield Chart("Pareto: quality vs decode tok/s", id="chart-pareto")
            yield VramTable(id="vram")
        yield KeysFooter()

    def action_back(self) -> None:
        self.app.switch_mode("fleet")

    def show_state(self, state: FleetState, now: float) -> None:
        finished_phases = sum(
            p.state == "finished" for e in state.endpoints.values() for p in e.phase_progress()
        )
        score_name = self.fleet_app.score_name
        key = (
            self.fleet_app.generation,
            state.run_id,
            state.requests_done,
            finished_phases,
            tuple(state.endpoints),
            score_name,
            self.app.theme,  # table cells carry the theme's colours
            self.size.width,  # the quality table's layout and the middle row's follow it
        )
        if key == self._key or time.monotonic() - self._drawn_t < REDRAW_INTERVAL_S:
            return
        self._key = key
        self._drawn_t = time.monotonic()
        # Side by side below this, the route table's reasons are cut: it goes under the speeds.
        self.set_class(self.size.width < STACKED_BELOW_W, "-stacked")
        labels = short_labels([e.info for e in state.endpoints.values()])
        styles = cell_styles(self.app)
        board = state.board()
        at = base_text(board)
        score = score_label(score_name)
        following = next_score(state, score_name)  # v cycles verified → heuristic → judge
        key_v = key_label(app_binding("scores"), self.fleet_app.user_keymap)
        switch = f" {key_v}: {score_label(following)}" if following else ""
        # The longest wording that fits: never one cut in the middle of a word.
        name = (one_line(state.run_name), "")
        self.query_one("#lb-head", FitLine).show(
            Content.assemble(
                ("Leaderboard", "bold"),
                "  ",
                name,
                "   quality = ",
                (f"{score} score", "bold"),
                (" 0–1, mean ±half its 95% Wilson interval, and n;", "$text-muted"),
                (f" speeds: mean per request at {at};", "$text-muted"),
                (switch, "$text-muted"),
            ),
            Content.assemble(
                ("Leaderboard", "bold"),
                "  ",
                name,
                "   quality = ",
                (f"{score} score", "bold"),
                (" 0–1, mean ±95% half-width, n;", "$text-muted"),
                (f" speeds at {at};", "$text-muted"),
                (switch, "$text-muted"),
            ),
            Content.assemble(
                ("Leaderboard", "bold"), "  ", name, "  ", (f"{score} score", "bold"), switch
            ),
            Content.assemble(("Leaderboard", "bold"), "  ", (f"{score} score", "bold")),
        )
        self.query_one(ConfigurationBlock).show(state, labels)
        self._show_quality(state, board, labels, styles, score_name)
        self._show_benchmarks(board, labels, styles)
        self._show_speed(board, labels, styles)
        self._show_routes(board, labels, styles, score_name)
        self._show_capacity(state, labels, styles)
        self.query_one(VramTable).show(state, labels, styles)
        self._show_legend(state, labels)
        self._show_scaling(state, board, labels)
        self._show_pareto(board, labels, score_name)

    def _show_quality(
        self,
        state: FleetState,
        board: Board,
        labels: dict[str, str],
        styles: CellStyles,
        score_name: str,
    ) -> None:
        """Laid out as ``quality_layout`` finds room for: at 80 columns seven endpoints do not
        fit across, nor seven suites with their intervals, and a table that scrolls sideways
        hides the very columns a user compares."""
        table = self.query_one("#quality", LiveTable)
        q = quality_table(board, score_name)
        table.display = bool(q.suites) or not board.benchmarks  # benchmarks alone: none to show
        score = score_label(score_name)

        def class_of(eid: str) -> str:
            return class_name(state.endpoints[eid].info.model_class)

        layout = quality_layout(
            q.suites,
            [labels[eid] for eid in q.endpoint_ids],
            [class_of(eid) for eid in q.endpoint_ids],
            self.size.width - QUALITY_FRAME_W,
            max((stats.n for stats in q.cells.values()), default=0),
        )
        best_per = "row" if layout == "suites down" else "suite"
        table.border_title = (
            f"Quality ({score} score, mean) by suite at {base_text(board)}"
            f" · best per {best_per} in bold"
        )

        def cell(suite: str, eid: str) -> Cell:
            stats = q.cell(suite, eid)
            if stats is None or stats.mean is None:
                return _right(units.DASH, styles.muted)
            text = Text(justify="right")
            best = eid in q.best.get(suite, frozenset())
            text.append(units.score(stats.mean), style=styles.best if best else "")
            if layout != "means only":
                text.append(f" {units.score_ci(stats.ci95_half_width):<4}", style=styles.muted)
                text.append(f" {stats.n:>2}", style=styles.muted)
            return text

        columns: list[Column]
        rows: list[Row]
        if layout == "suites down":
            columns = [("suite", Text("suite"))]
            for eid in q.endpoint_ids:
                header = Text(f"{labels[eid]}\n", style="bold")
                header.append(class_of(eid), style=styles.muted)
                columns.append((eid, header))
            rows = [
                (suite, [Text(suite), *(cell(suite, eid) for eid in q.endpoint_ids)])
                for suite in q.suites
            ]
        else:
            classes = layout == "endpoints down"  # in "means only" the speed table says it
            columns = [("endpoint", Text("endpoint"))]
            if classes:
                columns.append(("class", Text("class")))
            for suite in q.suites:
                header = Text(f"{suite}\n")
                header.append("mean ±CI   n" if classes else "mean", style=styles.muted)
                columns.append((suite, header))
            rows = []
            for eid in q.endpoint_ids:
                cells: list[Cell] = [Text(labels[eid])]
                if classes:
                    cells.append(Text(class_of(eid), style=styles.muted))
                rows.append((eid, [*cells, *(cell(suite, eid) for suite in q.suites)]))
        table.show_rows(columns, rows)

    def _show_benchmarks(self, board: Board, labels: dict[str, str], styles: CellStyles) -> None:
        """Standard benchmarks, each under its label: shown only for a run that has one."""
        table = self.query_one("#benchmarks", LiveTable)
        sections = benchmark_sections(board)
        table.display = bool(sections)
        if not sections:
            return
        # Each label once, in the title: on every row it would crowd the scores out of 80 columns.
        table.border_title = "Standard benchmarks: " + " · ".join(s.label for s in sections)
        table.border_subtitle = "verified, every load level; not in the quality averages"
        columns: list[Column] = [
            ("benchmark", "benchmark"),
            ("endpoint", "endpoint"),
            ("score", _right("score")),
            ("ci", _right("95% CI")),
            ("n", _right("scored")),
        ]
        rows: list[Row] = []
        for section in sections:
            name = section.benchmark.benchmark + (f" ({section.note})" if section.note else "")
            top = max((s.mean or 0.0 for _, s in section.scores), default=None)
            for eid, score in section.scores:
                low, high = score.ci95_low, score.ci95_high
                cells: list[Cell] = [
                    Text(outside_line(name)),
                    Text(labels.get(eid, eid)),
                    _right(units.score(score.mean), styles.best if score.mean == top else ""),
                    _right(
                        units.DASH
                        if low is None or high is None
                        else f"{units.score(low)}–{units.score(high)}",
                        styles.muted,
                    ),
                    _right(str(score.n), styles.muted),
                ]
                rows.append((f"{section.benchmark.suite}/{eid}", cells))
        table.show_rows(columns, rows)

    def _show_speed(self, board: Board, labels: dict[str, str], styles: CellStyles) -> None:
        table = self.query_one("#speed", LiveTable)
        speeds, averages = speed_rows(board)
        table.border_title = (
            f"Speed (tok/s: decode pooled, e2e mean per request) at {base_text(board)}"
        )
        columns: list[Column] = [
            ("endpoint", "endpoint"),
            ("class", "class"),
            ("decode", _right("decode")),
            ("e2e", _right("e2e")),
            *((f"vs-{c}", _right(f"vs {class_name(c)}")) for c in averages),
        ]
        fastest = max((r.decode_tps or 0.0 for r in speeds), default=0.0)
        decodes, e2es = [r.decode_tps for r in speeds], [r.e2e_tps for r in speeds]
        rows: list[Row] = []
        for row in speeds:
            best = row.decode_tps is not None and row.decode_tps == fastest
            cells = [
                Text(labels[row.endpoint_id]),
                Text(class_name(row.model_class), style=styles.muted),
                _right(units.tps(row.decode_tps, decodes), styles.best if best else ""),
                _right(units.tps(row.e2e_tps, e2es)),
                *(_right(units.relative(row.vs_class.get(c))) for c in averages),
            ]
            rows.append((row.endpoint_id, cells))
        table.show_rows(columns, rows)
        table.border_subtitle = "   ".join(
            f"{class_name(c)} avg {units.tps(average)}" for c, average in averages.items()
        )

    def _show_routes(
        self, board: Board, labels: dict[str, str], styles: CellStyles, score_name: str
    ) -> None:
        table = self.query_one("#routes", LiveTable)
        table.border_title = f"Route by task ({score_label(score_name)}, all levels)"
        table.border_subtitle = "the fastest within the best's 95% interval"
        columns: list[Column] = [
            ("suite", "suite"),
            ("pick", "route to"),
            ("quality", _right("quality")),
            ("tps", _right("tok/s")),
            ("best", "best"),
            ("ci", _right("95% CI")),
        ]
        rows: list[Row] = []
        for route in route_by_task(board, score_name):
            ci = route.best_ci95
            if route.endpoint_id is None or route.best_id is None:  # too few answers
                cells: list[Cell] = [
                    Text(route.suite),
                    Text(
                        f"too few answers: {route.min_prompts} prompts, need {ROUTE_MIN_PROMPTS}",
                        style=styles.muted,
                    ),
                    *(_right(units.DASH, styles.muted) for _ in range(4)),
                ]
                rows.append((route.suite, cells))
                continue
            cells = [
                Text(route.suite),
                Text(labels[route.endpoint_id], style=styles.best),
                _right(units.score(route.quality)),
                _right(units.tps(route.decode_tps)),
                Text(labels[route.best_id], style=styles.muted),
                _right(
                    units.DASH if ci is None else f"{units.score(ci[0])}–{units.score(ci[1])}",
                    styles.muted,
                ),
            ]
            rows.append((route.suite, cells))
        table.show_rows(columns, rows)

    def _show_capacity(self, state: FleetState, labels: dict[str, str], styles: CellStyles) -> None:
        """Capacity at SLO per endpoint: shown only for a run with SLO targets or a load sweep."""
        table = self.query_one("#capacity", LiveTable)
        capacities = capacity_rows(state)
        table.display = bool(capacities)
        if not capacities:
            return
        table.border_title = "Capacity at SLO: " + slo_text(capacities[0])
        table.border_subtitle = "capacity: the highest load every load below it sustained"
        columns: list[Column] = [
            ("endpoint", "endpoint"),
            ("capacity", _right("capacity")),
            ("goodput", _right("goodput req/s")),
            ("tps", _right("tok/s")),
            ("met", _right("SLO met")),
            ("knee", _right("knee")),
            ("max", _right("highest run")),
            ("stop", "sweep stopped by"),
        ]
        best = max((r.capacity for r in capacities if r.capacity is not None), default=None)
        rows: list[Row] = []
        for row in capacities:
            kind = row.load_kind
            top = row.capacity is not None and row.capacity == best
            cells = [
                Text(labels[row.endpoint]),
                _right(load_text(kind, row.capacity), styles.best if top else ""),
                _right(units.rate(row.capacity_goodput_rps)),
                _right(units.tps(row.capacity_throughput_tps)),
                _right(
                    units.pct(
                        None if row.capacity_attainment is None else row.capacity_attainment * 100
                    )
                ),
                _right(load_text(kind, row.knee)),
                _right(load_text(kind, row.max_load)),
                Text(row.sweep_stop or units.DASH, style=styles.muted),
            ]
            rows.append((row.endpoint, cells))
        table.show_rows(columns, rows)

    def _show_legend(self, state: FleetState, labels: dict[str, str]) -> None:
        wide, narrow = [], []
        hues = colour_indices(state.endpoints)
        for eid in state.endpoints:
            colour, marker = series_hex(hues[eid]), series_marker(hues[eid])
            wide.append(Content.assemble((f"━{marker} ", colour), labels[eid]))
            narrow.append(Content.assemble((marker, colour), (labels[eid], colour)))
        self.query_one("#lb-legend", FitLine).show(
            Content("   ").join(wide), Content("  ").join(narrow), Content(" ").join(narrow)
        )

    def _show_scaling(self, state: FleetState, board: Board, labels: dict[str, str]) -> None:
        """Throughput against load per endpoint, the knee of each marked with a diamond. Levels
        are evenly spaced: a sweep doubles them, which a linear axis would crowd to the left."""
        curves = load_curves(state, board)
        hues = colour_indices(state.endpoints)
        levels = sorted(
            {load for curve in curves for load, _ in curve.points}, key=lambda load: load.order
        )
        x_of = {load: x for x, load in enumerate(levels, 1)}
        chart = self.query_one("#chart-scaling", Chart)
        knees = [f"{labels[c.endpoint_id]} {c.knee.label}" for c in curves if c.knee is not None]
        knee_mark = " · ◆ knee" if knees else ""
        chart.set_title(f"aggregate throughput (tok/s) vs {load_axis(levels)}{knee_mark}")
        notes = (["knee: " + " · ".join(knees)] if knees else []) + unsteady_notes(board)
        chart.border_subtitle = " · ".join(notes)

        def paint(plt: Plot, colors: ChartColors) -> None:
            drawn = [c for c in curves if c.points]
            count = len(drawn)
            # Series side by side at each level, a cell or so apart, so seven lines at one
            # level do not draw into one column; the labels at their ends name them.
            nudge = SERIES_NUDGE / max(1, count)
            ends: list[Named] = []
            marks: list[tuple[list[float], list[float], str, tuple[int, int, int]]] = []
            top = 0.0
            for rank, curve in enumerate(drawn):
                index = hues[curve.endpoint_id]
                xs = [x_of[load] + (rank - (count - 1) / 2) * nudge for load, _ in curve.points]
                ys = [tps for _, tps in curve.points]
                color = series_rgb(index)
                plt.plot(xs, ys, marker="braille", color=color)
                marks.append((xs, ys, series_marker(index), color))
                top = max([top, *(y for y in ys if math.isfinite(y))])
                ends.append((labels[curve.endpoint_id], xs[-1], ys[-1], color))
            # Points over every line: a later line drawn through one would hide it.
            for xs, ys, marker, color in marks:
                plt.scatter(xs, ys, marker=marker, color=color)
            # Knees last, so that no other endpoint's line or dot in the same cell hides one.
            for curve in curves:
                if curve.knee is not None:
                    knee_tps = dict(curve.points)[curve.knee]
                    color = series_rgb(hues[curve.endpoint_id])
                    plt.scatter([x_of[curve.knee]], [knee_tps], marker="◆", color=color)
            if levels:
                plt.xticks(list(x_of.values()), [load.label for load in levels])
                width, height = plot_cells(chart)
                widest = max((len(end[0]) for end in ends), default=0) + 2
                low, high = 0.7, len(levels) + 0.3
                # Room on the right for the labels at the lines' ends.
                high += widest * (high - low) / max(1, width - widest)
                plt.xlim(low, high)
                if top > 0:  # all zero (nothing decoded yet): plotext picks a scale of its own
                    plt.ylim(0, top * 1.1)
                    nice_yticks(plt, 0, top * 1.1, height)
                    frame = PlotFrame((low, high), (0, top * 1.1), width, height)
                    # The labels in one column right of the last level's points: the lines
                    # end there, and no label covers a point.
                    right = max((frame.cell(x, y)[0] for _, x, y, _ in ends), default=0) + 2
                    label_points(plt, ends, frame, colors, column=right)
            plt.xlabel(load_axis(levels))

        chart.draw(tuple(curves), paint)

    def _show_pareto(self, board: Board, labels: dict[str, str], score_name: str) -> None:
        points = pareto_points(board, score_name)
        axes = pareto_axes(points)
        hues = colour_indices(board.endpoint_ids)
        frontier = sorted((p for p in points if p.on_frontier), key=lambda p: p.speed_tps)
        chart = self.query_one("#chart-pareto", Chart)
        score = score_label(score_name)
        chart.set_title(f"Pareto: {score} quality vs decode tok/s, {base_text(board)}")
        chart.border_subtitle = (
            "frontier: " + " → ".join(labels[p.endpoint_id] for p in frontier) if frontier else ""
        )

        def paint(plt: Plot, colors: ChartColors) -> None:
            if len(frontier) > 1:
                plt.plot(
                    [p.speed_tps for p in frontier],
                    [p.quality for p in frontier],
                    marker="braille",
                    color=colors.muted,
                )
            plt.xlabel("decode tok/s")
            if axes is None:
                return
            width, height = plot_cells(chart)
            widest = max(len(labels[p.endpoint_id]) for p in points) + 2
            low, high = axes.speed_tps
            high += widest * (high - low) / max(1, width - widest)  # the last point's label
            frame = PlotFrame((low, high), axes.quality, width, height)
            # Two endpoints of near speed and score would share a cell, one marker hiding the
            # other: the later one moves a cell aside.
            own = [frame.cell(p.speed_tps, p.quality) for p in points]
            named: list[Named] = []
            for p, cell, moved in zip(points, own, separate_cells(own, width), strict=True):
                index = hues[p.endpoint_id]
                color = series_rgb(index)
                x, y = (p.speed_tps, p.quality) if moved == cell else frame.point(moved)
                plt.scatter([x], [y], marker=series_marker(index), color=color)
                named.append((labels[p.endpoint_id], x, y, color))
            plt.xlim(low, high)
            plt.ylim(*axes.quality)
            nice_xticks(plt, *axes.speed_tps, width - widest)
            nice_yticks(plt, *axes.quality, height)
            label_points(plt, named, frame, colors)

        chart.draw((score_name, tuple(points)), paint)

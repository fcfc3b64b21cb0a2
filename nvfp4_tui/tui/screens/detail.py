"""DetailScreen: one endpoint in depth — charts over time, the server's own view (KV cache,
queue, its TTFT) beside the client's, latency histograms, the most recent requests, and the latest
answer with its reasoning folded apart."""

from __future__ import annotations

import math
import time
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Collapsible, Static
from textual_plotext.plot import Plot

from nvfp4_tui.core.endpoint_state import EndpointState
from nvfp4_tui.core.figures.context import CONTEXT_SUITE_PREFIX
from nvfp4_tui.core.figures.errors import shown_error_message
from nvfp4_tui.core.figures.scores import SCORE_LABELS
from nvfp4_tui.core.plain_text import plain_text, widget_id
from nvfp4_tui.core.readouts import AnswerText, ErrorInfo
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui import units
from nvfp4_tui.tui.palette import cell_styles
from nvfp4_tui.tui.readouts import (
    class_badge,
    decode_bins,
    gpu_tag,
    histogram,
    phase_text,
)
from nvfp4_tui.tui.screens.base import StateScreen
from nvfp4_tui.tui.screens.statistics import StatisticsScreen
from nvfp4_tui.tui.server_view import TtftComparison, timeline, ttft_comparison
from nvfp4_tui.tui.widgets.charts import Chart, ChartColors, Painter, plot_cells
from nvfp4_tui.tui.widgets.fit_line import FitLine
from nvfp4_tui.tui.widgets.gpu_pane import status_content
from nvfp4_tui.tui.widgets.keys_footer import KeysFooter
from nvfp4_tui.tui.widgets.live_table import Cell, Column, LiveTable, Row
from nvfp4_tui.tui.widgets.ticks import ROWS_PER_TICK, nice_ticks, nice_xticks, nice_yticks

TWO_CHART_ROWS_H = 30  # terminal rows from which the detail shows both rows of charts
CHART_INTERVAL_S = 0.5  # plotext renders at most twice a second
TABLE_ROWS = 50
HIST_BINS = 12
MIB_PER_GIB = 1024
# The KV cache axis tops out at the first of these above the highest point: a nearly empty
# cache still gets a readable axis, and one near full is drawn against the whole cache.
KV_SCALES_PCT = (5, 10, 25, 50, 100)
NO_SERVER_METRICS = (
    "This endpoint serves no Prometheus /metrics (not vLLM, or metrics turned off): "
    "its KV cache, queue and server-side TTFT are unknown; the charts show the client's view."
)

REQUEST_COLUMNS = (
    ("sent", "sent"),
    ("suite", "suite"),
    ("c", "c"),
    ("TTFT", "ttft"),
    ("tok/s", "tps"),
    ("tokens", "tokens"),
    ("score", "score"),
    ("status", "status"),
)


def _right(text: str, style: str = "") -> Text:
    return Text(text, style=style, justify="right")


def _decode_cell(decode_tps: float | None, outlier: bool, warning: str) -> Text:
    """A request's decode tok/s; ``!`` and the warning colour on a burst (over ten times its
    level's median request), which no pooled figure lets move the headline."""
    if outlier:
        return _right(f"!{units.tps(decode_tps)}", warning)
    return _right(units.tps(decode_tps))


class UnfittedChart(Chart):
    """A chart whose painter does not fit its data to the width. Rendering sizes the figure
    anyway, so a resize needs no second paint: on opening the screen, that second paint would
    cost every chart a second plotext render."""

    def on_resize(self, event: events.Resize) -> None:
        self.fit_title()
        event.prevent_default()  # Chart.on_resize, which paints again


class FittedSubtitleChart(UnfittedChart):
    """An UnfittedChart whose bottom border shows the longest of several wordings that fits."""

    def __init__(self, title: str | Content, *, id: str | None = None) -> None:
        super().__init__(title, id=id)
        self._subtitles: tuple[Content, ...] = ()

    def show_subtitle(self, *wordings: Content) -> None:
        """``wordings`` longest first; the last one is shown, cut if need be, where none fits."""
        self._subtitles = wordings
        self._fit_subtitle()

    def on_resize(self, event: events.Resize) -> None:
        super().on_resize(event)
        self._fit_subtitle()

    def _fit_subtitle(self) -> None:
        # The border row less its corners, a dash on each side and the spaces around the text.
        room = self.outer_size.width - 6
        fits = (w for w in self._subtitles if w.cell_length <= room)
        self.border_subtitle = next(fits, self._subtitles[-1] if self._subtitles else None)


# The ladder's table: what each rung costs and whether its facts came back; a column per depth.
LADDER_COLUMNS: tuple[Column, ...] = (
    ("rung", "rung"),
    ("load", "c"),
    ("tokens", "tokens"),
    ("ttft", "TTFT"),
    ("prefill", "prefill t/s"),
    ("decode", "decode t/s"),
    ("recall", "recall"),
)


class DetailScreen(StateScreen):
    CSS_PATH = "detail.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="back"),
        Binding("s", "statistics", "Statistics", id="statistics"),
    ]

    def __init__(self, endpoint_id: str) -> None:
        super().__init__(id=widget_id("detail", endpoint_id))
        self.endpoint_id = endpoint_id
        self._charts_key: tuple[object, ...] | None = None
        self._charts_t = -float("inf")
        self._rows_key: tuple[object, ...] | None = None
        self._ladder_key: tuple[object, ...] | None = None
        self._answer: AnswerText | None = None
        self._head: tuple[Content, ...] = ()
        self._error: ErrorInfo | None = None

    def compose(self) -> ComposeResult:
        yield FitLine(id="detail-head")
        error = FitLine(id="detail-error")
        error.display = False  # until a request fails
        yield error
        # Top row over the run (s): the client's speed, then the server's view beside it.
        with Grid(id="charts"):
            yield Chart("decode tok/s per stream, over time", id="chart-decode")
            yield FittedSubtitleChart(
                Content.from_markup("TTFT (ms): [$accent]client[/] vs [$primary]server mean[/]"),
                id="chart-ttft-server",
            )
            yield UnfittedChart(
                Content.from_markup(
                    "[$primary]KV cache %[/] · [$success]running[/] · [$warning]waiting[/]"
                ),
                id="chart-server-load",
            )
            no_metrics = Static(NO_SERVER_METRICS, id="no-server-metrics")
            no_metrics.border_title = "no server metrics"
            yield no_metrics
            yield UnfittedChart("TTFT (ms), recent requests", id="chart-ttft")
            yield UnfittedChart("ITL, mean per request (ms)", id="chart-itl")
            yield UnfittedChart(
                Content.from_markup("[$primary]VRAM (GiB)[/] and [$warning]power (W)[/] over time"),
                id="chart-gpu",
            )
        with Horizontal(id="lower"):
            table = LiveTable(id="requests", zebra_stripes=True)
            table.border_title = "Recent requests"
            yield table
            ladder = LiveTable(id="ladder", zebra_stripes=True)
            ladder.border_title = "Context ladder (means; recall: share of hidden facts found)"
            ladder.display = False  # in place of the latest answer once a rung has answered
            yield ladder
            with VerticalScroll(id="answer") as answer:
                answer.border_title = "Latest answer"
                yield Static(id="answer-meta")
                with Collapsible(title="Reasoning", id="reasoning", collapsed=True):
                    yield Static(id="reasoning-text", markup=False)
                yield Static(id="answer-text", markup=False)
        yield KeysFooter()

    def on_resize(self, event: events.Resize) -> None:
        # On a short terminal two rows of charts would be two or three rows high each, too few
        # for an axis: the first row (speed, TTFT, server load) gets all the height.
        self.set_class(event.size.height < TWO_CHART_ROWS_H, "-short")

    def action_back(self) -> None:
        self.dismiss()

    def action_statistics(self) -> None:
        self.app.push_screen(StatisticsScreen(self.endpoint_id))

    # ---- drawing

    def show_state(self, state: FleetState, now: float) -> None:
        endpoint = state.endpoints.get(self.endpoint_id)
        if endpoint is None:
            return
        self._show_head(endpoint)
        self._show_error(endpoint, state)
        self._show_requests(endpoint, state)
        self._show_ladder(endpoint)
        self._show_answer(endpoint)
        gpu_samples = endpoint.gpu.samples if endpoint.gpu else 0
        key = (self.fleet_app.generation, endpoint.version, gpu_samples)
        # Throttled by wall time whatever the injected clock: the point is to bound the CPU.
        if key != self._charts_key and time.monotonic() - self._charts_t >= CHART_INTERVAL_S:
            self._charts_key = key
            self._charts_t = time.monotonic()
            self._show_charts(endpoint, state)

    def _show_head(self, endpoint: EndpointState) -> None:
        """Who and what, then the counts; where that does not fit, the model id goes first (the
        label names it), then the counts' words, then the class badge."""
        info = endpoint.info
        gpu = gpu_tag(info)
        in_flight = units.DASH if endpoint.in_flight is None else str(endpoint.in_flight)
        target = endpoint.target_concurrency
        flight = f"{in_flight}/{units.DASH if target is None else target}"
        errors = (str(endpoint.requests_error), "bold $error" if endpoint.requests_error else "")
        name = Content.assemble((gpu, "bold"), "  ", (info.label, "bold"))
        status = status_content(endpoint.status)
        phase = phase_text(endpoint) or ""
        who = Content.assemble(
            name, "  ", (class_badge(info), "$text-secondary"), "  ", status, "  ", phase
        )
        head = (
            Content.assemble(
                who,
                ("   in flight ", "$text-muted"),
                flight,
                ("   requests ", "$text-muted"),
                str(endpoint.requests_done),
                ("   errors ", "$text-muted"),
                errors,
                ("   model ", "$text-muted"),
                info.model,
            ),
            Content.assemble(
                who,
                ("  in flight ", "$text-muted"),
                flight,
                ("  req ", "$text-muted"),
                str(endpoint.requests_done),
                ("  err ", "$text-muted"),
                errors,
            ),
            Content.assemble(who, "  ", flight, ("  err ", "$text-muted"), errors),
            Content.assemble(
                name, "  ", status, "  ", phase, "  ", flight, ("  err ", "$text-muted"), errors
            ),
        )
        if head != self._head:
            self._head = head
            self.query_one("#detail-head", FitLine).show(*head)

    def _show_error(self, endpoint: EndpointState, state: FleetState) -> None:
        """The latest failed request's kind and the message its server sent."""
        error = endpoint.last_error
        if error is self._error:
            return
        self._error = error
        line = self.query_one("#detail-error", FitLine)
        line.display = error is not None
        if error is None:
            return
        line.show(
            Content.assemble(
                ("latest error ", "$text-muted"),
                units.clock(error.t - (state.started_t or 0.0)),
                "  ",
                (error.kind or "error", "bold $error"),
                "  ",
                (f"{plain_text(error.suite)}/{plain_text(error.prompt_id)}", "$text-muted"),
                "  ",
                shown_error_message(error.message),
            )
        )

    def _show_requests(self, endpoint: EndpointState, state: FleetState) -> None:
        rows = list(endpoint.recent_requests)[-TABLE_ROWS:]
        score_name = self.fleet_app.score_name
        key = (
            self.fleet_app.generation,
            len(endpoint.recent_requests),
            rows[-1] if rows else None,
            score_name,
            self.app.theme,
        )
        if key == self._rows_key:
            return
        self._rows_key = key
        # The score column is headed by the score it shows.
        columns: list[Column] = [
            (column, SCORE_LABELS.get(score_name, label) if column == "score" else label)
            for label, column in REQUEST_COLUMNS
        ]
        start = state.started_t or 0.0
        styles = cell_styles(self.app)
        status_style = {"error": styles.error, "incomplete": styles.warning}
        shown: list[Row] = []
        # Keyed by line, newest first: the cursor stays on its line as new requests come in.
        for line, row in enumerate(reversed(rows)):
            error = row.status == "error"
            status = Text(
                (row.error_kind or row.status) if error else row.status,
                style=status_style.get(row.status, ""),
            )
            cells: list[Cell] = [
                _right(units.clock(row.t - start)),
                Text(row.suite),
                _right(str(row.concurrency)),
                _right(units.seconds_as_ms(row.ttft_s)),
                _decode_cell(row.decode_tps, endpoint.decode_outlier(row), styles.warning),
                _right(units.DASH if row.tokens_out is None else str(row.tokens_out)),
                _right(units.score(row.score(score_name))),
                status,
            ]
            shown.append((str(line), cells))
        self.query_one("#requests", LiveTable).show_rows(columns, shown)

    def _show_ladder(self, endpoint: EndpointState) -> None:
        """The ladder's rungs by level, once one has answered: a ladder's answers are lines of
        codes, its figures are what a reader wants here."""
        key = (self.fleet_app.generation, endpoint.version, self.app.theme)
        if key == self._ladder_key:
            return
        self._ladder_key = key
        latest = endpoint.recent_requests[-1] if endpoint.recent_requests else None
        climbing = latest is not None and latest.suite.startswith(CONTEXT_SUITE_PREFIX)
        # While the ladder runs; the latest answer again when another suite's come after it.
        rows = endpoint.ladder.rows() if climbing else []
        self.query_one("#ladder", LiveTable).display = bool(rows)
        self.query_one("#answer").display = not rows
        self.set_class(bool(rows), "-ladder")
        if not rows:
            return
        depths = sorted({depth for row in rows for depth, _ in row.recall_by_depth})
        columns: list[Column] = [
            *LADDER_COLUMNS,
            *((f"depth-{d:g}", f"@{d:.0%}") for d in depths),
        ]
        shown: list[Row] = []
        for row in rows:
            by_depth = dict(row.recall_by_depth)
            cells: list[Cell] = [
                Text(row.suite.removeprefix(CONTEXT_SUITE_PREFIX)),
                _right(str(row.concurrency)),
                _right(units.figure(row.tokens_in_mean)),
                _right(units.seconds_as_ms(row.ttft_mean_s)),
                _right(units.figure(row.prefill_tps_mean)),
                _right(units.tps(row.decode_tps_mean)),
                _right(units.score(row.recall_mean)),
                *(_right(units.score(by_depth.get(depth))) for depth in depths),
            ]
            shown.append((f"{row.suite}|{row.concurrency}", cells))
        self.query_one("#ladder", LiveTable).show_rows(columns, shown)

    def _show_answer(self, endpoint: EndpointState) -> None:
        answer = endpoint.last_answer
        if answer is self._answer:
            return
        self._answer = answer
        meta = self.query_one("#answer-meta", Static)
        reasoning = self.query_one("#reasoning", Collapsible)
        if answer is None:
            meta.update(Content.styled("no answer yet", "$text-muted"))
            reasoning.display = False
            self.query_one("#answer-text", Static).update("")
            return
        meta.update(
            Content.assemble(
                (answer.suite, "bold"),
                " · ",
                (plain_text(answer.prompt_id), "$text-muted"),
                " · ",
                answer.status,
            )
        )
        thinking = plain_text(answer.reasoning_text)
        reasoning.display = bool(thinking)
        reasoning.title = f"Reasoning, {len(thinking):,} chars"  # short: it must fit 80 columns
        self.query_one("#reasoning-text", Static).update(Text(thinking))
        text = plain_text(answer.answer_text) or "(no text: the answer was a tool call)"
        self.query_one("#answer-text", Static).update(Text(text))

    def _show_charts(self, endpoint: EndpointState, state: FleetState) -> None:
        start = state.started_t or 0.0
        end = state.last_t or start
        decode_chart = self.query_one("#chart-decode", Chart)
        decode_history = list(endpoint.decode_history)
        recent = [r for r in endpoint.recent_requests if r.status != "error"]
        ttft_ms = [r.ttft_s * 1000 for r in recent if r.ttft_s is not None]
        # 1 / decode tok/s: the mean gap between the tokens after the request's first chunk.
        itl_ms = [1000 / r.decode_tps for r in recent if r.decode_tps]
        history = list(endpoint.gpu.history) if endpoint.gpu else []
        latest = endpoint.gpu.latest if endpoint.gpu else None

        def paint_decode(plt: Plot, colors: ChartColors) -> None:
            # Downsampled to the chart's width, each column its highest point: a stream waiting
            # for its first token reports 0 tok/s, which says nothing about decode speed.
            columns = max(10, decode_chart.size.width - 10)
            span_s = max(1.0, end - start)
            decode = decode_bins(decode_history, end, window_s=span_s, bins=columns)
            decode_xs = [span_s * (i + 0.5) / columns for i in range(columns)]
            width, height = plot_cells(decode_chart)
            if any(decode):
                plt.plot(decode_xs, decode, marker="braille", color=colors.primary)
                plt.ylim(0, max(decode) * 1.15)
                nice_yticks(plt, 0, max(decode) * 1.15, height)
            plt.xlim(0, span_s)
            nice_xticks(plt, 0, span_s, width, unit="s")

        def paint_hist(values: list[float], color_name: str, chart: Chart) -> Painter:
            def paint(plt: Plot, colors: ChartColors) -> None:
                # About two bins per sqrt(n): enough shape, few empty bins.
                bins = max(4, min(HIST_BINS, round(math.sqrt(len(values)) * 2)))
                centres, counts = histogram(values, bins)
                if centres:
                    plt.bar(centres, counts, color=getattr(colors, color_name), width=0.8)
                    # Zero and the tallest bar only: in a chart a few rows high, plotext would
                    # drop some of the ticks between, and which ones depends on its layout.
                    plt.yticks([0, max(counts)])
                    nice_xticks(plt, centres[0], centres[-1], plot_cells(chart)[0])

            return paint

        gpu_chart = self.query_one("#chart-gpu", Chart)

        def paint_gpu(plt: Plot, colors: ChartColors) -> None:
            width, height = plot_cells(gpu_chart)
            vram = [(p.t - start, p.vram_used_mib) for p in history if p.vram_used_mib is not None]
            power = [(p.t - start, p.power_w) for p in history if p.power_w is not None]
            span_s = max(1.0, end - start)
            # Each on its own axis, from zero to the card's capacity: VRAM left, power right.
            # Power first, so that where the two lines meet the VRAM line stays on top.
            if power:
                xs, ys = zip(*power, strict=True)
                limit_w = latest.power_limit_w if latest and latest.power_limit_w else max(ys)
                plt.plot(xs, ys, marker="braille", color=colors.warning, yside="right")
                plt.ylim(0, limit_w, yside="right")  # type: ignore[arg-type]  # stub: side is a str
                nice_yticks(plt, 0, limit_w, height, right=True)
            if vram:
                xs, ys = zip(*vram, strict=True)
                total_mib = latest.vram_total_mib if latest and latest.vram_total_mib else max(ys)
                plt.plot(xs, [y / MIB_PER_GIB for y in ys], marker="braille", color=colors.primary)
                plt.ylim(0, total_mib / MIB_PER_GIB)
                nice_yticks(plt, 0, total_mib / MIB_PER_GIB, height)
            plt.xlim(0, span_s)
            nice_xticks(plt, 0, span_s, width, unit="s")

        decode_chart.draw((len(decode_history), end), paint_decode)
        ttft_chart, itl_chart = (
            self.query_one("#chart-ttft", Chart),
            self.query_one("#chart-itl", Chart),
        )
        ttft_chart.draw(tuple(ttft_ms), paint_hist(ttft_ms, "accent", ttft_chart))
        itl_chart.draw(tuple(itl_ms), paint_hist(itl_ms, "success", itl_chart))
        gpu_chart.draw((len(history), history[-1] if history else None), paint_gpu)
        self._show_server(endpoint, start, end)

    def _show_server(self, endpoint: EndpointState, start: float, end: float) -> None:
        """The server's KV cache and queue, and its TTFT beside the client's, over the run."""
        has_metrics = endpoint.server_samples > 0
        load_chart = self.query_one("#chart-server-load", Chart)
        if load_chart.display != has_metrics:
            load_chart.display = has_metrics
            self.query_one("#no-server-metrics", Static).display = not has_metrics
        server = endpoint.server_history
        clients = endpoint.ttft_history
        span_s = max(1.0, end - start)
        ttft_chart = self.query_one("#chart-ttft-server", FittedSubtitleChart)
        last_server = server[-1] if server else None
        ttft_key = (
            endpoint.server_samples,
            last_server,
            len(clients),
            clients[-1] if clients else None,
        )
        if ttft_chart.draw(ttft_key, self._paint_ttft(endpoint, start, span_s, ttft_chart)):
            ttft_chart.show_subtitle(
                *ttft_gap_wordings(ttft_comparison(endpoint) if has_metrics else None)
            )
        if has_metrics:
            load_chart.draw(
                (endpoint.server_samples, last_server),
                self._paint_server_load(endpoint, start, span_s, load_chart),
            )

    @staticmethod
    def _paint_ttft(endpoint: EndpointState, start: float, span_s: float, chart: Chart) -> Painter:
        def paint(plt: Plot, colors: ChartColors) -> None:
            width, height = plot_cells(chart)
            client = timeline(endpoint.ttft_history, start, lambda p: p.ttft_s, 1000)
            server = timeline(endpoint.server_history, start, lambda p: p.ttft_mean_s, 1000)
            # Each request a dot where its first token came; the server's mean per scrape a
            # line through them: dots far above it are time spent outside the server.
            if client[0]:
                plt.scatter(*client, marker="braille", color=colors.accent)
            if server[0]:
                plt.plot(*server, marker="braille", color=colors.primary)
            top = max(client[1] + server[1], default=0.0)
            if top:
                plt.ylim(0, top * 1.15)
                nice_yticks(plt, 0, top * 1.15, height)
            plt.xlim(0, span_s)
            nice_xticks(plt, 0, span_s, width, unit="s")

        return paint

    @staticmethod
    def _paint_server_load(
        endpoint: EndpointState, start: float, span_s: float, chart: Chart
    ) -> Painter:
        def paint(plt: Plot, colors: ChartColors) -> None:
            points = endpoint.server_history
            kv = timeline(points, start, lambda p: p.kv_cache_pct)
            running = timeline(points, start, lambda p: p.requests_running)
            waiting = timeline(points, start, lambda p: p.requests_waiting)
            # The queue on the right axis in whole requests; the cache on the left, in % of it.
            queue_top = max(1, math.ceil(max(running[1] + waiting[1], default=0.0)))
            for series, color in ((waiting, colors.warning), (running, colors.success)):
                if series[0]:
                    plt.plot(*series, marker="braille", color=color, yside="right")
            # textual_plotext's stub types a side as float; plotext takes "left" or "right".
            plt.ylim(0, queue_top * 1.1, yside="right")  # type: ignore[arg-type]
            columns, rows = plot_cells(chart)
            # Whole requests only: a queue of one reads 0 and 1, not 0, 0.5 and 1.
            ticks = [t for t in nice_ticks(0, queue_top, rows // ROWS_PER_TICK + 1) if t % 1 == 0]
            plt.yticks(ticks, [f"{t:.0f}" for t in ticks], yside="right")  # type: ignore[arg-type]
            if kv[0]:
                plt.plot(*kv, marker="braille", color=colors.primary)
            kv_top = max(kv[1], default=0.0)
            kv_scale = next((s for s in KV_SCALES_PCT if s >= kv_top * 1.1), KV_SCALES_PCT[-1])
            plt.ylim(0, kv_scale * 1.1)
            nice_yticks(plt, 0, kv_scale, rows)
            plt.xlim(0, span_s)
            nice_xticks(plt, 0, span_s, columns, unit="s")

        return paint


def ttft_gap_wordings(comparison: TtftComparison | None) -> tuple[Content, ...]:
    """The chart's footnote, longest wording first: both means (the server's is exact, from its
    histogram's sum and count), marked when the client waits far longer, and the bucket range the
    server's p50 lies in (its histogram places a median no closer than that)."""
    if comparison is None:
        return (Content.styled("no server metrics: client only", "$text-muted"),)
    client, server = comparison.client_mean_s, comparison.server_mean_s
    if client is None or server is None:
        return (Content.styled("mean: not enough requests yet", "$text-muted"),)
    style = "bold $warning" if comparison.client_bound else "$text-muted"
    sep = "≫" if comparison.client_bound else "·"
    c, s = f"{client * 1000:.0f}", f"{server * 1000:.0f}"
    wordings = [f"mean TTFT client {c} {sep} server {s} ms"]
    low_s, high_s = comparison.server_p50_low_s, comparison.server_p50_high_s
    if low_s is not None:
        p50 = f"> {_ms(low_s)}" if high_s is None else f"{_ms(low_s)}–{_ms(high_s)}"
        wordings = [
            f"{wordings[0]} · server p50 {p50 if high_s is None else 'in ' + p50} ms",
            f"mean client {c} {sep} server {s} (p50 {p50}) ms",
            f"mean {c} {sep} {s} (p50 {p50}) ms",
        ]
    wordings.append(f"mean {c} {sep} {s} ms")
    return tuple(Content.styled(w, style) for w in wordings)


def _ms(edge_s: float) -> str:
    """A bucket edge in ms, as vLLM's bounds read: 100, 2.5, 2560000 (never 1e+06)."""
    return f"{edge_s * 1000:.10g}"

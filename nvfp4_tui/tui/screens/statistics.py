"""StatisticsScreen: every statistic of every metric of one endpoint, per load level — n, mean,
std, min, the percentiles and max of TTFT, time to second token, TPOT, ITL, E2E, the rates and
the lengths (``figures.metric_stats``, the report's ``metric_stats`` rows)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content

from nvfp4_tui.core.figures.metric_stats import MetricSummary
from nvfp4_tui.core.plain_text import widget_id
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui import units
from nvfp4_tui.tui.palette import cell_styles
from nvfp4_tui.tui.readouts import gpu_tag
from nvfp4_tui.tui.screens.base import StateScreen
from nvfp4_tui.tui.widgets.fit_line import FitLine
from nvfp4_tui.tui.widgets.keys_footer import KeysFooter
from nvfp4_tui.tui.widgets.live_table import Cell, Column, LiveTable, Row

# Below this width p90 goes (AIPerf's dashboard shows p50, p90 and p99; p95 is ours too).
ALL_COLUMNS_W = 90
COLUMNS = ("n", "mean", "std", "min", "p50", "p90", "p95", "p99", "max")
NARROW_DROPS = frozenset({"p90"})
UNIT_SUFFIX = {"s": " ms", "tok/s": "", "tokens": ""}


def _value(summary: MetricSummary, name: str) -> str:
    value = getattr(summary, name)
    if name == "n":
        return str(value)
    if summary.metric.unit == "s" and value is not None:
        value *= 1000.0
    if summary.metric.unit == "tokens" and value is not None and float(value).is_integer():
        return f"{value:,.0f}"  # a count, not a measure: 40, not 40.0
    return units.figure(value)


class StatisticsScreen(StateScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,s", "back", "Return to the detail", id="statistics-back")
    ]
    DEFAULT_CSS = """
    StatisticsScreen #stats-head { height: 1; background: $panel; padding: 0 1; }
    StatisticsScreen #stats-body { height: 1fr; }
    StatisticsScreen #stats { height: auto; }
    """

    def __init__(self, endpoint_id: str) -> None:
        super().__init__(id=widget_id("statistics", endpoint_id))
        self.endpoint_id = endpoint_id
        self._key: tuple[object, ...] | None = None

    def compose(self) -> ComposeResult:
        yield FitLine(id="stats-head")
        with VerticalScroll(id="stats-body"):
            yield LiveTable(id="stats")
        yield KeysFooter()

    def action_back(self) -> None:
        self.dismiss()

    def show_state(self, state: FleetState, now: float) -> None:
        endpoint = state.endpoints.get(self.endpoint_id)
        if endpoint is None:
            return
        width = self.size.width
        key = (endpoint.version, width, self.app.theme)
        if key == self._key:
            return
        self._key = key
        info = endpoint.info
        gpu = gpu_tag(info)
        self.query_one("#stats-head", FitLine).show(
            Content.assemble(
                ("Statistics", "bold"),
                "  ",
                (f"{gpu}  {info.label}", "bold"),
                ("   every timed request of each level: no errors, no warm-up", "$text-muted"),
            ),
            Content.assemble(("Statistics", "bold"), "  ", (f"{gpu}  {info.label}", "bold")),
        )
        shown = [c for c in COLUMNS if width >= ALL_COLUMNS_W or c not in NARROW_DROPS]
        styles = cell_styles(self.app)
        columns: list[Column] = [("metric", "metric")]
        columns += [(name, Text(name, justify="right")) for name in shown]
        rows: list[Row] = []
        fold = endpoint.metric_stats
        for endpoint_id, load in fold.levels(self.endpoint_id):
            summaries = [s for s in fold.summaries(endpoint_id, load) if s.n]
            if not summaries:
                continue
            heading: list[Cell] = [Text(load.label, style="bold"), *("" for _ in shown)]
            rows.append((load.label, heading))
            for summary in summaries:
                metric = summary.metric
                label = Text(f"  {metric.label}{UNIT_SUFFIX[metric.unit]}")
                cells: list[Cell] = [label]
                for name in shown:
                    style = styles.muted if name == "n" else ""
                    cells.append(Text(_value(summary, name), justify="right", style=style))
                rows.append((f"{load.label}:{metric.column}", cells))
        table = self.query_one("#stats", LiveTable)
        table.border_title = "every statistic per load level (ms for times)"
        table.show_rows(columns, rows)

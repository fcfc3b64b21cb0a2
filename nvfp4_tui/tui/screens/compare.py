"""CompareScreen: what changed from run A to run B, per endpoint, suite and load level, with
the significant changes marked as better or worse.

The numbers and the tests come from ``nvfp4_tui.compare`` (Mann-Whitney U per metric and cell,
Holm-adjusted over the whole comparison); this screen only lays them out. A change is coloured
only when it is significant: better in the success colour, worse in the error colour. Every
cell shows how many requests it rests on, since "no significant change" at n = 3 means little.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from nvfp4_tui.compare import MIN_N_FOR_TEST, CellComparison, Comparison, MetricChange
from nvfp4_tui.figures.scores import SCORE_LABELS
from nvfp4_tui.tui import units
from nvfp4_tui.tui.palette import CellStyles, cell_styles
from nvfp4_tui.tui.plain_text import one_line


@dataclass(frozen=True)
class MetricView:
    """How one metric of ``nvfp4_tui.compare.METRICS`` reads in the table."""

    higher_is_better: bool
    relative: bool  # the change as a percentage (speeds, latencies) or in the metric's units
    scale: float  # shown value = value x scale
    spec: str
    unit: str


METRIC_VIEWS = {
    "quality": MetricView(higher_is_better=True, relative=False, scale=1, spec=".3f", unit=""),
    "decode_tps": MetricView(higher_is_better=True, relative=True, scale=1, spec=".1f", unit=""),
    "ttft_p50_s": MetricView(
        higher_is_better=False, relative=True, scale=1000, spec=".0f", unit=" ms"
    ),
}
FALLBACK_VIEW = MetricView(higher_is_better=True, relative=False, scale=1, spec=".3g", unit="")


def metric_heading(change: MetricChange) -> str:
    """``quality (heuristic)``, ``decode tok/s``, ``TTFT p50 (ms)``."""
    metric = change.metric
    if metric.name == "quality":
        return f"quality ({SCORE_LABELS.get(metric.column, metric.column)})"
    if metric.name == "ttft_p50_s":
        return "TTFT p50 (ms)"
    return metric.label


def verdict(change: MetricChange) -> str | None:
    """``better`` or ``worse`` for a significant change, else None."""
    delta = change.delta
    if not change.significant or delta is None or delta == 0:
        return None
    view = METRIC_VIEWS.get(change.metric.name, FALLBACK_VIEW)
    return "better" if (delta > 0) == view.higher_is_better else "worse"


def change_text(change: MetricChange) -> str:
    """``0.812 → 0.901 +0.089`` or ``144.2 → 139.9 -3.0%``; a star marks a significant change."""
    view = METRIC_VIEWS.get(change.metric.name, FALLBACK_VIEW)

    def value(x: float | None) -> str:
        return units.DASH if x is None else format(x * view.scale, view.spec)

    text = f"{value(change.a)} → {value(change.b)}{view.unit}"
    a, b = change.a, change.b
    if a is not None and b is not None:
        if view.relative:
            text += f" {(b - a) / a * 100:+.1f}%" if a else ""
        else:
            text += f" {(b - a) * view.scale:+{view.spec}}"
    return text + (" *" if change.significant else "")


def cell_n(cell: CellComparison) -> str:
    """The requests each side rests on: ``24/24``, or the fewest of its metrics when they differ."""
    return f"{cell.n_a}/{cell.n_b}"


class CompareScreen(Screen):
    """The comparison table; ``s`` keeps only the cells with a significant change."""

    CSS_PATH = "compare.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "toggle_significant", "Significant only / all", id="significant-only"),
        Binding("q,escape", "app.quit", "Quit", id="quit-compare"),
    ]

    def __init__(self, comparison: Comparison) -> None:
        super().__init__(id="compare")
        self.comparison = comparison
        self.significant_only = False

    def compose(self) -> ComposeResult:
        yield Static(id="compare-head")
        # No cursor: a highlighted row would hide the colours that mark its changes.
        table: DataTable = DataTable(id="changes", cursor_type="none", zebra_stripes=True)
        yield table
        yield Static(id="compare-notes")
        yield Footer()

    def on_mount(self) -> None:
        c = self.comparison
        found = len(c.significant)
        self.query_one("#compare-head", Static).update(
            Content.assemble(
                ("Compare", "bold"),
                "  A ",
                (one_line(c.run_a), "bold"),
                "  →  B ",
                (one_line(c.run_b), "bold"),
                "   ",
                (
                    f"{found} significant change{'s' if found != 1 else ''}",
                    "bold $warning" if found else "$text-muted",
                ),
                (f" of {c.tests} tests", "$text-muted"),
            )
        )
        notes = [
            Content.assemble(
                ("* ", "bold"),
                (
                    f"significant: two-sided Mann-Whitney U, Holm-adjusted over {c.tests} tests, "
                    f"p < {c.alpha:g}; fewer than {MIN_N_FOR_TEST} requests a side: not tested.",
                    "$text-muted",
                ),
            ),
            Content.assemble(
                ("better", "bold $success"),
                " / ",
                ("worse", "bold $error"),
                (
                    ": higher quality and decode tok/s, lower TTFT, are better."
                    " n: requests in A / in B.",
                    "$text-muted",
                ),
            ),
        ]
        if c.only_a:
            notes.append(Content.styled("only in A: " + one_line(", ".join(c.only_a)), "$warning"))
        if c.only_b:
            notes.append(Content.styled("only in B: " + one_line(", ".join(c.only_b)), "$warning"))
        self.query_one("#compare-notes", Static).update(Content("\n").join(notes))
        self._fill()

    def action_toggle_significant(self) -> None:
        self.significant_only = not self.significant_only
        self._fill()

    def _fill(self) -> None:
        c = self.comparison
        table = self.query_one("#changes", DataTable)
        styles = cell_styles(self.app)
        table.clear(columns=True)
        for label, key in (("endpoint", "endpoint"), ("suite", "suite")):
            table.add_column(label, key=key)
        table.add_column(Text("load", justify="right"), key="load")
        table.add_column(Text("n A/B", justify="right"), key="n")
        if c.cells:
            for index, change in enumerate(c.cells[0].changes):
                table.add_column(metric_heading(change), key=f"metric-{index}")
        cells = [
            cell
            for cell in c.cells
            if not self.significant_only or any(m.significant for m in cell.changes)
        ]
        for cell in cells:
            table.add_row(*_row(cell, styles))
        shown = "significant changes only" if self.significant_only else "every cell in both runs"
        table.border_title = f"A → B per endpoint, suite and load · {shown}"
        table.border_subtitle = f"{len(cells)} of {len(c.cells)} cells · s: " + (
            "show all" if self.significant_only else "significant only"
        )


def _row(cell: CellComparison, styles: CellStyles) -> list[Text]:
    moved = any(m.significant for m in cell.changes)
    label = one_line(cell.label)
    cells = [
        Text(label, style="bold" if moved else ""),
        Text(cell.suite),
        Text(cell.load.label, justify="right"),
        Text(cell_n(cell), justify="right", style=styles.muted),
    ]
    for change in cell.changes:
        style = {"better": styles.best, "worse": styles.error}.get(verdict(change) or "", "")
        if not style and change.p_value is None:
            style = styles.muted  # too few requests to test
        cells.append(Text(change_text(change), style=style, justify="right"))
    return cells

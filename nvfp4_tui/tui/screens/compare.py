"""CompareScreen: what changed from run A to run B: first what differs in their recorded
configurations, then per endpoint, suite and load level, with the significant changes marked as
better or worse; under it, aggregate throughput per load level and VRAM per GPU.

The numbers and the tests come from ``nvfp4_tui.output.compare`` (Mann-Whitney U per metric and cell,
Holm-adjusted over the whole comparison); this screen only lays them out. A change is coloured
only when it is significant: better in the success colour, worse in the error colour. Every
cell shows how many requests it rests on, since "no significant change" at n = 3 means little,
and each tested change its effect size (Cliff's delta), significant or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Static

from nvfp4_tui.core.figures.comparison import (
    EFFECT_SIZE,
    MIN_N_FOR_TEST,
    NOT_STEADY_MARK,
    CellComparison,
    Comparison,
    LevelChange,
    Metric,
    MetricChange,
    VramChange,
)
from nvfp4_tui.core.figures.scores import SCORE_LABELS
from nvfp4_tui.core.plain_text import one_line
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.text_fit import fit_words
from nvfp4_tui.tui import units
from nvfp4_tui.tui.palette import CellStyles, cell_styles
from nvfp4_tui.tui.widgets.keys_footer import KeysFooter

# A pair renamed from A to B is shown by B's label and this mark; the notes give A's.
RENAMED_MARK = "†"
# The endpoint columns take at most this share of the screen's width, so that the changes
# beside them stay in view at 120 columns however long the names are.
NAME_SHARE = 6
MIN_NAME_W = 14
# Narrower than this, the VRAM table shows the last sample of each run only (what the loaded
# model holds), not the first beside it.
VRAM_BOTH_W = 160
# A legacy level that held other counts in flight than its name says: its load cell reads
# ``c=4⁺`` and a note under the tables says what was in flight.
IN_FLIGHT_MARK = "⁺"


def load_cell(load: Load, load_label: str) -> str:
    return load.label if load_label in ("", load.label) else load.label + IN_FLIGHT_MARK


def shown_names(c: Comparison, width: int) -> dict[str, str]:
    """Each pair's label (``Pairing.label``) as a row shows it in ``width`` cells: B's label,
    marked when A's was another, cut at a word."""
    names: dict[str, str] = {}
    for p in c.pairings:
        renamed = p.label_a != p.label_b
        name = fit_words(one_line(p.label_b), width - renamed)
        names[p.label] = name + RENAMED_MARK if renamed else name
    return names


def _name(names: dict[str, str], label: str, width: int) -> str:
    return names.get(label) or fit_words(one_line(label), width)


@dataclass(frozen=True)
class MetricView:
    """How one metric of ``nvfp4_tui.core.figures.comparison.METRICS`` reads in the table."""

    higher_is_better: bool
    # Speeds and latencies add their change as a percentage; a score's change reads from its
    # two values (0 to 1), and every cell carries Cliff's delta: the table stays 120 wide.
    relative: bool
    scale: float  # shown value = value x scale, in the unit the column heading names
    spec: str


METRIC_VIEWS = {
    "quality": MetricView(higher_is_better=True, relative=False, scale=1, spec=".3f"),
    "decode_tps": MetricView(higher_is_better=True, relative=True, scale=1, spec=".1f"),
    "e2e_tps": MetricView(higher_is_better=True, relative=True, scale=1, spec=".1f"),
    "ttft_p50_s": MetricView(higher_is_better=False, relative=True, scale=1000, spec=".0f"),
}
FALLBACK_VIEW = MetricView(higher_is_better=True, relative=False, scale=1, spec=".3g")


def metric_heading(metric: Metric) -> str:
    """``quality (heuristic)``, ``decode tok/s``, ``TTFT p50 (ms)``."""
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
    """``0.812 → 0.901 δ+0.41`` or ``144.2 → 139.9 -3% δ-0.20``: the change, then Cliff's
    delta; a star marks a significant change."""
    view = METRIC_VIEWS.get(change.metric.name, FALLBACK_VIEW)

    def value(x: float | None) -> str:
        return units.DASH if x is None else format(x * view.scale, view.spec)

    text = f"{value(change.a)} → {value(change.b)}"
    a, b = change.a, change.b
    if view.relative and a and b is not None:
        text += f" {(b - a) / a * 100:+.0f}%"
    if change.cliffs_delta is not None:
        text += f" δ{change.cliffs_delta:+.2f}"
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
        self._filled_w = 0  # the screen width the tables were last filled for
        self._name_w = MIN_NAME_W
        self._names: dict[str, str] = {}  # each pair's label as the rows show it at _name_w

    def compose(self) -> ComposeResult:
        yield Static(id="compare-head")
        yield Static(id="compare-config")
        # No cursor: a highlighted row would hide the colours that mark its changes.
        table: DataTable = DataTable(id="changes", cursor_type="none", zebra_stripes=True)
        yield table
        with Horizontal(id="compare-figures"):
            yield DataTable(id="levels", cursor_type="none", zebra_stripes=True)
            yield DataTable(id="vram", cursor_type="none", zebra_stripes=True)
        with VerticalScroll(id="compare-notes-box"):
            yield Static(id="compare-notes")
        yield KeysFooter()

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
        config = self.query_one("#compare-config", Static)
        config.update(_configuration(c.configuration_changes))
        config.display = bool(c.configuration_changes)
        self.query_one("#compare-notes", Static).update(Content("\n").join(_notes(c)))
        # A run without GPU samples (or levels) has no such figure: no empty box for it.
        self.query_one("#levels", DataTable).display = bool(c.levels)
        self.query_one("#vram", DataTable).display = bool(c.vram)
        self._fill_all(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        self._fill_all(event.size.width)

    def _fill_all(self, width: int) -> None:
        """Every table, its names cut to fit ``width`` columns."""
        if width == self._filled_w:
            return
        self._filled_w = width
        self._name_w = w = max(MIN_NAME_W, width // NAME_SHARE)
        c = self.comparison
        self._names = names = shown_names(c, w)
        self._fill()
        _fill_levels(
            self.query_one("#levels", DataTable), c.levels, cell_styles(self.app), names, w
        )
        _fill_vram(self.query_one("#vram", DataTable), c.vram, names, w, first=width >= VRAM_BOTH_W)

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
        for index, metric in enumerate(c.metrics):
            table.add_column(metric_heading(metric), key=f"metric-{index}")
        if _any_failures(c):
            table.add_column(Text("errors", justify="right"), key="errors")
        cells = [
            cell
            for cell in c.cells
            if not self.significant_only or any(m.significant for m in cell.changes)
        ]
        for cell in cells:
            name = _name(self._names, cell.label, self._name_w)
            table.add_row(*_row(cell, name, styles, errors=_any_failures(c)))
        shown = "significant changes only" if self.significant_only else "every cell in both runs"
        table.border_title = f"A → B per endpoint, suite and load · {shown}"
        renamed = any(p.label_a != p.label_b for p in c.pairings)
        table.border_subtitle = (
            (f"{RENAMED_MARK}: renamed in B (notes) · " if renamed else "")
            + f"{len(cells)} of {len(c.cells)} cells · s: "
            + ("show all" if self.significant_only else "significant only")
        )


CONFIG_LINES = 4  # at most, so that the table keeps the screen


def _configuration(changes: tuple[str, ...]) -> Content:
    """What differs between the runs' configurations, said before any figure: it may explain
    them all."""
    shown = list(changes)
    if len(shown) > CONFIG_LINES:
        more = len(shown) - CONFIG_LINES + 1
        shown = [*shown[: CONFIG_LINES - 1], f"… and {more} more: `compare A B` lists them"]
    lines = [Content.assemble(("changed  ", "bold $warning"), one_line(shown[0]))] if shown else []
    lines += [Content.assemble("         ", one_line(line)) for line in shown[1:]]
    return Content("\n").join(lines)


def _notes(c: Comparison) -> list[Content]:
    speed = c.speed
    speed_name = "speed" if speed is None else speed.label
    notes = [
        Content.assemble(
            ("* ", "bold"),
            (
                f"significant: two-sided Mann-Whitney U, Holm-adjusted over {c.tests} tests, "
                f"p < {c.alpha:g}; fewer than {MIN_N_FOR_TEST} requests a side: not tested, "
                f"no δ. δ: {EFFECT_SIZE}, P(B > A) - P(B < A), -1 to +1.",
                "$text-muted",
            ),
        ),
        Content.assemble(
            ("better", "bold $success"),
            " / ",
            ("worse", "bold $error"),
            (
                f": higher quality and {speed_name}, lower TTFT, are better."
                " n: requests in A / in B."
                + (
                    " errors: A → B (+ suspects A → B)."
                    if _any_failures(c)
                    else " No request failed in either run."
                ),
                "$text-muted",
            ),
        ),
    ]
    if speed is not None and speed.name == "e2e_tps":
        notes.append(
            Content.styled(
                "e2e tok/s (prefill included): a run without TTFT (a legacy import) has no "
                "decode tok/s.",
                "$text-muted",
            )
        )
    loads = [(x.load, x.load_label) for x in c.cells] + [(x.load, x.load_label) for x in c.levels]
    held = {
        load_cell(load, label): label
        for load, label in loads
        if load_cell(load, label) != load.label
    }
    for shown, held_label in held.items():
        notes.append(Content.styled(f"{shown}: {one_line(held_label)}", "$text-muted"))
    for note in c.pairing_notes:
        notes.append(Content.styled(one_line(note), "$warning"))
    for reason in c.missing:
        notes.append(Content.styled("left out, " + one_line(reason), "$text-muted"))
    if c.only_a:
        notes.append(Content.styled("only in A: " + one_line(", ".join(c.only_a)), "$warning"))
    if c.only_b:
        notes.append(Content.styled("only in B: " + one_line(", ".join(c.only_b)), "$warning"))
    return notes


def _errors_text(cell: CellComparison) -> str:
    a, b = cell.failures_a, cell.failures_b
    text = f"{a.errors} → {b.errors}"
    if a.suspect or b.suspect:
        text += f" (+{a.suspect} → +{b.suspect})"
    return text


def _any_failures(c: Comparison) -> bool:
    return any(
        f.errors or f.suspect for cell in c.cells for f in (cell.failures_a, cell.failures_b)
    )


def _row(cell: CellComparison, name: str, styles: CellStyles, *, errors: bool) -> list[Text]:
    moved = any(m.significant for m in cell.changes)
    cells = [
        Text(name, style="bold" if moved else ""),
        Text(cell.suite),
        Text(load_cell(cell.load, cell.load_label), justify="right"),
        Text(cell_n(cell), justify="right", style=styles.muted),
    ]
    for change in cell.changes:
        style = {"better": styles.best, "worse": styles.error}.get(verdict(change) or "", "")
        if not style and change.p_value is None:
            style = styles.muted  # too few requests to test
        cells.append(Text(change_text(change), style=style, justify="right"))
    if errors:
        more = cell.failures_b.errors > cell.failures_a.errors
        cells.append(Text(_errors_text(cell), style=styles.error if more else "", justify="right"))
    return cells


def _throughput(tps: float | None, steady: bool | None) -> str:
    mark = NOT_STEADY_MARK if steady is False else ""
    return (units.DASH if tps is None else f"{tps:.1f}") + mark


def _fill_levels(
    table: DataTable,
    levels: tuple[LevelChange, ...],
    styles: CellStyles,
    names: dict[str, str],
    name_w: int,
) -> None:
    table.clear(columns=True)
    table.add_column("endpoint", key="endpoint")
    table.add_column(Text("load", justify="right"), key="load")
    for label, key in (("A", "a"), ("B", "b"), ("change", "change")):
        table.add_column(Text(label, justify="right"), key=key)
    for level in levels:
        change = level.relative
        table.add_row(
            Text(_name(names, level.label, name_w)),
            Text(load_cell(level.load, level.load_label), justify="right"),
            Text(_throughput(level.throughput_a_tps, level.steady_a), justify="right"),
            Text(_throughput(level.throughput_b_tps, level.steady_b), justify="right"),
            Text(
                units.DASH if change is None else f"{change * 100:+.1f}%",
                justify="right",
                style=styles.muted,
            ),
        )
    table.border_title = "Aggregate throughput, tok/s"
    table.border_subtitle = f"{NOT_STEADY_MARK}: did not hold its concurrency"


def _fill_vram(
    table: DataTable,
    vram: tuple[VramChange, ...],
    names: dict[str, str],
    name_w: int,
    *,
    first: bool,
) -> None:
    """Each GPU's VRAM in A and B at the last sample of each run, and with ``first`` at the first
    one beside it."""
    table.clear(columns=True)
    table.add_column(Text("GPU A → B", justify="right"), key="gpu")
    table.add_column("endpoint", key="endpoint")
    if first:
        table.add_column(Text("first A → B", justify="right"), key="before")
    table.add_column(Text("last A → B", justify="right"), key="after")
    for v in vram:
        before = Text(f"{v.before_a_mib:,.0f} → {v.before_b_mib:,.0f}", justify="right")
        table.add_row(
            Text(v.gpus, justify="right"),
            Text(_name(names, v.label, name_w) if v.label else units.DASH),
            *([before] if first else []),
            Text(f"{v.after_a_mib:,.0f} → {v.after_b_mib:,.0f}", justify="right"),
        )
    table.border_title = "VRAM used, MiB"
    table.border_subtitle = (
        "first and last sample of each run" if first else "last sample of each run"
    )

"""Chart: a plotext plot drawn in the app's theme colours, redrawn only when its data changed.

A plotext render costs milliseconds to tens of milliseconds, so screens call ``Chart.draw`` at
most twice a second and only while visible, and ``draw`` itself skips data it has already drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from textual import events
from textual.app import RenderResult
from textual.color import Color
from textual.content import Content
from textual_plotext import PlotextPlot
from textual_plotext.plot import Plot

from nvfp4_tui.core.series_colours import series_hex
from nvfp4_tui.tui.text_fit import fit_content

RGB = tuple[int, int, int]
TITLE_FRAME_W = 7  # the border's corners and dashes, and the spaces around a title
Painter = Callable[[Plot, "ChartColors"], None]


class ChartColors:
    """The theme's colours as plotext RGB tuples."""

    def __init__(self, variables: dict[str, str]) -> None:
        def rgb(name: str, fallback: str) -> RGB:
            return Color.parse(variables.get(name, fallback)).rgb

        self.primary = rgb("primary", "#0178D4")
        self.accent = rgb("accent", "#ffa62b")
        self.success = rgb("success", "#4EBF71")
        self.warning = rgb("warning", "#ffa62b")
        self.muted = rgb("foreground-muted", "#808080")
        # The plot's canvas (textual-plotext's theme paints it in the surface colour): text
        # written on a plot needs it as its background, or plotext draws it on white.
        self.canvas = rgb("surface", "#1E1E1E")


def series_rgb(index: int) -> RGB:
    return Color.parse(series_hex(index)).rgb


class Chart(PlotextPlot):
    """A plot with a title in its border; ``draw`` replots when ``key`` differs from the last."""

    DEFAULT_CSS = """
    Chart {
        border: round $panel-lighten-1;
        border-title-color: $text-accent;
        border-subtitle-color: $text-muted;
        padding: 0 1 0 0;
    }
    """

    def __init__(
        self, title: str | Content, *, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.title = Content(title) if isinstance(title, str) else title
        self.border_title = self.title
        self._key: Hashable | None = None
        self._painter: Painter | None = None
        # The last render and what it was of (size, paint, theme): Textual renders a widget
        # again for reasons of its own (a screen resumed, a layout pass), and building a plot and
        # parsing its ANSI costs milliseconds each time.
        self._painted = 0
        self._rendered: tuple[Hashable, RenderResult] | None = None

    def on_mount(self) -> None:
        # Series colours come from the theme: a new theme makes the next draw replot.
        self.app.theme_changed_signal.subscribe(self, self._forget)

    def _forget(self, _theme: object) -> None:
        self._key = None

    def draw(self, key: Hashable, painter: Painter) -> bool:
        """Replot with ``painter`` unless ``key`` equals the last key drawn; True when replotted."""
        if key == self._key:
            return False
        self._key = key
        self._painter = painter
        self._paint()
        return True

    def _paint(self) -> None:
        if self._painter is None:
            return
        plt = self.plt
        plt.clear_figure()
        self._painter(plt, ChartColors(self.app.theme_variables))
        self._painted += 1
        self.refresh()

    def render(self) -> RenderResult:
        key = (self.size, self._painted, self.app.theme)
        if self._rendered is None or self._rendered[0] != key:
            self._rendered = (key, super().render())
        return self._rendered[1]

    def on_resize(self, event: events.Resize) -> None:
        self.fit_title()
        # Painters may fit their data to the width (one point per column): paint again.
        self._paint()

    def fit_title(self) -> None:
        # Textual would cut a long title mid-word: cut it at a word boundary.
        self.border_title = fit_content(self.title, self.outer_size.width - TITLE_FRAME_W)

    def set_title(self, title: str | Content) -> None:
        """A new title, fitted to the chart's width."""
        self.title = Content(title) if isinstance(title, str) else title
        self.fit_title()


# One marker per endpoint beside its colour, so two series of near hues, or a terminal with
# few colours, still tell apart; "◆" is left for the knees.
SERIES_MARKERS = ("●", "■", "▲", "▼", "★", "✚", "◉", "✖", "◇")


def series_marker(index: int) -> str:
    return SERIES_MARKERS[index % len(SERIES_MARKERS)]


Cell = tuple[int, int]  # (column, row) of a chart's plot, row 0 at the bottom


def place_labels(
    anchors: list[tuple[int, int, int]],
    width: int,
    height: int,
    markers: Sequence[Cell] = (),
) -> list[Cell]:
    """Where to write labels of ``(column, row, length)`` so that none covers another or one of
    the ``markers``: each at its anchor's row if free, else the nearest free row above or below,
    inside ``height`` rows (its column is kept; one that fits nowhere stays at its anchor)."""
    taken = [(row, column, column) for column, row in markers]  # row, first, last column
    out: list[Cell] = [(0, 0)] * len(anchors)
    for index in sorted(range(len(anchors)), key=lambda i: anchors[i][1]):
        column, row, length = anchors[index]
        end = min(width - 1, column + length - 1)
        offsets = [0] + [step * sign for step in range(1, height) for sign in (1, -1)]
        for offset in offsets:
            candidate = row + offset
            if not 0 <= candidate < height:
                continue
            if all(r != candidate or e < column or s > end for r, s, e in taken):
                taken.append((candidate, column, end))
                out[index] = (column, candidate)
                break
        else:
            out[index] = (column, row)
    return out


def separate_cells(cells: Sequence[Cell], width: int) -> list[Cell]:
    """``cells`` where two markers would share one moved sideways, the later one to the
    nearest free cell of its row (right first), so that no marker is drawn over another."""
    taken: set[Cell] = set()
    out: list[Cell] = []
    for column, row in cells:
        for offset in [0] + [step * sign for step in range(1, width) for sign in (1, -1)]:
            candidate = (column + offset, row)
            if 0 <= candidate[0] < width and candidate not in taken:
                break
        else:
            candidate = (column, row)  # a row with no free cell left: drawn where it lies
        taken.add(candidate)
        out.append(candidate)
    return out


def spread_rows(rows: Sequence[float], height: int) -> list[int]:
    """Rows for labels stacked in one column: each as near its own row as lets every label
    have a row of its own, in the same order as ``rows`` (bottom to top; fractions of a row
    keep the order of two in one row), inside ``height``."""
    order = sorted(range(len(rows)), key=lambda i: rows[i])
    placed = [0] * len(rows)
    floor = 0
    for i in order:  # upwards: no label below the one before it
        placed[i] = max(round(rows[i]), floor)
        floor = placed[i] + 1
    ceiling = height - 1
    for i in reversed(order):  # then downwards from the top, where that pushed them out
        placed[i] = max(0, min(placed[i], ceiling))
        ceiling = placed[i] - 1
    return placed


class PlotFrame:
    """The data range a plot shows and its size in cells, to go from data to cells and back.

    The cells are an estimate from the widget's size (plotext's axes and tick labels take
    some); it is kept on the small side, so that labels a cell apart here are at least a cell
    apart on screen."""

    def __init__(
        self, x: tuple[float, float], y: tuple[float, float], width: int, height: int
    ) -> None:
        self.x, self.y = x, y
        self.width, self.height = max(2, width), max(2, height)

    def row(self, y: float) -> float:
        """The row of ``y``, unrounded."""
        y0, y1 = self.y
        return (y - y0) / ((y1 - y0) or 1) * (self.height - 1)

    def cell(self, x: float, y: float) -> Cell:
        (x0, x1), (y0, y1) = self.x, self.y
        column = round((x - x0) / ((x1 - x0) or 1) * (self.width - 1))
        row = round((y - y0) / ((y1 - y0) or 1) * (self.height - 1))
        return column, row

    def point(self, cell: Cell) -> tuple[float, float]:
        (x0, x1), (y0, y1) = self.x, self.y
        return (
            x0 + cell[0] / (self.width - 1) * (x1 - x0),
            y0 + cell[1] / (self.height - 1) * (y1 - y0),
        )


def plot_cells(chart: Chart) -> tuple[int, int]:
    """The plot's size in cells inside ``chart``, less its y tick labels and its x axis."""
    return chart.size.width - 10, chart.size.height - 4

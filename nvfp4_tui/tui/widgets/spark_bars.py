"""SparkBars: a bar sparkline over the data's range with its axis marked, cheap enough to
redraw seven of every second.

Scaled from zero, a decode rate that moves between 100 and 115 tok/s fills three of its rows
solid and draws its changes in the fourth. This one spans the data's range (the lowest non-zero
value to the highest; a zero is a second with nothing streaming and stays blank), widened to at
least ``MIN_SPAN`` of the highest so that ±2% noise does not swing full height, and writes the
axis's top and bottom values at its right edge, so the height of a bar can be read.

Textual's Sparkline blends a colour and builds a Rich style for every cell it draws (about 1 ms
for a 30 x 3 chart here); this one shades bars in ``SHADES`` steps between its two component
colours, so a render is a few string joins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.content import Content, Span
from textual.style import Style
from textual.widget import Widget

BARS = "▁▂▃▄▅▆▇█"
SHADES = 6
MIN_SPAN = 0.2  # of the highest value: the least range the axis spans
LOWEST_BAR = 1 / 8  # the height of the lowest value: a bar, unlike a zero
# Narrower than this beside its axis labels, the sparkline draws without them. At 120 columns a
# pane with a 3-digit rate leaves its bars 11: at 12 only the 2-digit panes showed their range.
MIN_BARS_W = 8


def columns(values: Sequence[float], width: int) -> list[float]:
    """``values`` in ``width`` columns, each the highest value of its share of them."""
    count = len(values)
    if count == 0 or width <= 0:
        return []
    out = []
    for column in range(width):
        start = column * count // width
        end = max(start + 1, (column + 1) * count // width)
        out.append(max(values[start:end]))
    return out


def bar_rows(heights: Sequence[float], rows: int) -> list[str]:
    """Rows of block characters, top row first, for ``heights`` in 0..1 (one per column)."""
    steps = len(BARS) * rows - 1
    levels = [int(min(1.0, max(0.0, h)) * steps) for h in heights]
    lines = []
    for row in reversed(range(rows)):
        low, high = row * len(BARS), (row + 1) * len(BARS)
        lines.append(
            "".join(
                " " if level < low else "█" if level >= high else BARS[level % len(BARS)]
                for level in levels
            )
        )
    return lines


def axis(values: Sequence[float]) -> tuple[float, float] | None:
    """(bottom, top) of the axis for ``values``: the lowest non-zero one (lowered to leave at
    least ``MIN_SPAN`` of the top) to the highest; None when every value is zero."""
    shown = [v for v in values if v > 0]
    if not shown:
        return None
    top = max(shown)
    return min(min(shown), top * (1 - MIN_SPAN)), top


def scaled(values: Sequence[float], bottom: float, top: float) -> list[float]:
    """Heights in 0..1: zero for a zero, ``LOWEST_BAR`` at ``bottom`` up to 1 at ``top``."""
    span = top - bottom
    return [
        0.0 if v <= 0 else LOWEST_BAR + (1 - LOWEST_BAR) * max(0.0, v - bottom) / span
        for v in values
    ]


def axis_label(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


class SparkBars(Widget):
    """Bars of ``show(values)`` over the widget's width and height, the axis's top value at the
    right of its first row and its bottom value at the right of its last."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"sparkbars--low", "sparkbars--high"}
    DEFAULT_CSS = """
    SparkBars { height: 1fr; }
    SparkBars > .sparkbars--low { color: $primary 30%; }
    SparkBars > .sparkbars--high { color: $primary 80%; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._values: tuple[float, ...] = ()

    def show(self, values: Sequence[float]) -> None:
        values = tuple(values)
        if values != self._values:
            self._values = values
            self.refresh()

    def _shades(self) -> list[Style]:
        _, base = self.background_colors
        low = base + self.get_component_styles("sparkbars--low").color
        high = base + self.get_component_styles("sparkbars--high").color
        return [Style(foreground=low.blend(high, i / (SHADES - 1))) for i in range(SHADES)]

    def render(self) -> Content:
        width, rows = self.size.width, max(1, self.size.height)
        span = axis(self._values)
        labels = ("", "") if span is None else (axis_label(span[1]), axis_label(span[0]))
        if rows == 1 and span is not None:
            labels = (f"{labels[1]}–{labels[0]}", "")
        label_w = max(len(labels[0]), len(labels[1]))
        if width - label_w - 1 < MIN_BARS_W:  # a narrow pane: the bars matter more
            label_w = 0
        heights = columns(self._values, width - label_w - 1 if label_w else width)
        if not heights:
            return Content("")
        heights = [0.0] * len(heights) if span is None else scaled(heights, *span)
        shades = self._shades()
        shade_of = [round(h * (SHADES - 1)) for h in heights]
        # One span per run of columns of the same shade, the same on every row.
        runs: list[tuple[int, int, Style]] = []
        start = 0
        for column in range(1, len(shade_of) + 1):
            if column == len(shade_of) or shade_of[column] != shade_of[start]:
                runs.append((start, column, shades[shade_of[start]]))
                start = column
        spans: list[Span] = []
        lines = bar_rows(heights, rows)
        if label_w:
            ends = [labels[0], *([""] * (rows - 2)), labels[1]] if rows > 1 else [labels[0]]
            lines = [f"{line} {end.rjust(label_w)}" for line, end in zip(lines, ends, strict=True)]
        line_w = len(lines[0]) + 1
        for index in range(len(lines)):
            offset = index * line_w
            spans.extend(Span(offset + a, offset + b, style) for a, b, style in runs)
            if label_w:
                spans.append(Span(offset + len(heights), offset + line_w - 1, "$text-muted"))
        return Content("\n".join(lines), spans=spans)

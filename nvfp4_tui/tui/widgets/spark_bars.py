"""SparkBars: a bar sparkline scaled from zero, cheap enough to redraw seven of every second.

Textual's Sparkline blends a colour and builds a Rich style for every cell it draws (about 1 ms
for a 30 x 3 chart here) and scales from the data's minimum, which turns ±2% noise into
full-height swings. This one scales from zero, so steady decoding draws a steady bar, and shades
bars in ``SHADES`` steps between its two component colours, so a render is a few string joins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.content import Content, Span
from textual.style import Style
from textual.widget import Widget

BARS = "▁▂▃▄▅▆▇█"
SHADES = 6


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


class SparkBars(Widget):
    """Bars of ``show(values)`` over the widget's width and height, zero at the bottom."""

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
        heights = columns(self._values, width)
        if not heights:
            return Content("")
        top = max(heights)
        heights = [h / top if top > 0 else 0.0 for h in heights]
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
        for index in range(len(lines)):
            offset = index * (len(heights) + 1)
            spans.extend(Span(offset + a, offset + b, style) for a, b, style in runs)
        return Content("\n".join(lines), spans=spans)

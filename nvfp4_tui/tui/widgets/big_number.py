"""BigNumber: a short number three rows high, in Textual's 3x3 digit font, drawn as plain text.

Textual's Digits widget draws through a Rich renderable, about 0.6 ms a draw here; seven panes
whose decode rate changes several times a second made it the costliest widget of the fleet
screen. The glyphs are the same (``textual.renderables.digits``); joining them into three lines
of Content costs a fraction of that.
"""

from __future__ import annotations

from textual.content import Content
from textual.geometry import Size
from textual.renderables.digits import DIGITS, DIGITS3X3_BOLD
from textual.widget import Widget

GLYPH_W = 3


def glyph_rows(text: str) -> tuple[str, str, str]:
    """The three rows of ``text``: each known character 3 columns wide, others 1 (bottom row)."""
    rows: tuple[list[str], list[str], list[str]] = ([], [], [])
    for character in text.replace(".", "•"):
        index = DIGITS.find(character)
        if index < 0:
            rows[0].append(" ")
            rows[1].append(" ")
            rows[2].append(character)
            continue
        for row in range(3):
            rows[row].append(DIGITS3X3_BOLD[index * 3 + row].ljust(GLYPH_W))
    top, middle, bottom = ("".join(r) for r in rows)
    return top, middle, bottom


def text_width(text: str) -> int:
    return sum(GLYPH_W if c in DIGITS else 1 for c in text.replace(".", "•"))


class BigNumber(Widget):
    """Shows ``show(text)``; lays the screen out again only when the width it needs changes."""

    DEFAULT_CSS = "BigNumber { height: 3; width: auto; }"

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._text = ""

    def show(self, text: str) -> None:
        if text == self._text:
            return
        resized = text_width(text) != text_width(self._text)
        self._text = text
        self.refresh(layout=resized)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return text_width(self._text)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return 3

    def render(self) -> Content:
        return Content("\n".join(glyph_rows(self._text)))

"""A one-line meter: a label over a bar whose filled part is shaded, like btop's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.content import Content, Span
from textual.widget import Widget


class Meter(Widget):
    """A label at each end of a bar as wide as the widget, its first ``fraction`` filled.

    The text sits on the bar rather than beside it, so the bar keeps the widget's whole width
    however narrow the pane is. Of several wordings, the first that fits is shown.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"meter--fill", "meter--empty"}
    DEFAULT_CSS = """
    Meter { height: 1; width: 1fr; }
    Meter > .meter--fill { background: $primary 45%; color: $text; }
    Meter > .meter--empty { background: $panel; color: $text; }
    Meter.-high > .meter--fill { background: $warning 50%; }
    Meter.-na > .meter--empty { color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._wordings: tuple[tuple[str, str], ...] = ()
        self._fraction: float | None = None

    def show(
        self, wordings: Sequence[tuple[str, str]], fraction: float | None, *, high: bool = False
    ) -> None:
        """(left, right) texts, longest first; ``fraction`` (0..1) filled, None: no bar."""
        fraction = None if fraction is None else min(1.0, max(0.0, fraction))
        wordings = tuple(wordings)
        self.set_class(high, "-high")
        self.set_class(fraction is None, "-na")
        # Compared as drawn: a fraction that moves within one cell of the bar repaints nothing.
        unchanged = (wordings, self._cells(fraction)) == (
            self._wordings,
            self._cells(self._fraction),
        )
        self._wordings, self._fraction = wordings, fraction
        if not unchanged:
            self.refresh()

    def _cells(self, fraction: float | None) -> int | None:
        """Filled cells of the bar at the current width (None: no bar)."""
        return None if fraction is None else round(fraction * self.size.width)

    def _line(self, width: int) -> str:
        for left, right in self._wordings:
            if len(left) + len(right) + 3 <= width:
                gap = width - len(left) - len(right) - 2
                return f" {left}{' ' * gap}{right} "
        left, right = self._wordings[-1] if self._wordings else ("", "")
        return f"{left} {right}"[:width].ljust(width)

    def render(self) -> Content:
        width = self.size.width
        line = self._line(width)
        filled = round((self._fraction or 0.0) * width)
        fill = self.get_visual_style("meter--fill")
        empty = self.get_visual_style("meter--empty")
        return Content(line, spans=[Span(0, filled, fill), Span(filled, width, empty)])

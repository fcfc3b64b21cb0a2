"""FitLine: one line of text that picks, from a few wordings, the longest that fits its width."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from nvfp4_tui.tui.text_fit import fit_content


class FitLine(Widget):
    """Shows the first of ``wordings`` (longest first) that fits; the last one is cut at a word
    boundary if need be.

    Panes are 26 columns wide on a 120-column terminal and 50 on a wide one: the same line
    reads "TTFT p50 141 ms   in flight 4/4" where there is room and "TTFT 141ms  4/4" where not.
    """

    DEFAULT_CSS = """
    FitLine { height: 1; width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._wordings: tuple[Content, ...] = ()

    def show(self, *wordings: Content | str) -> None:
        contents = tuple(w if isinstance(w, Content) else Content(w) for w in wordings)
        if contents != self._wordings:
            self._wordings = contents
            self.refresh()

    def render(self) -> Content:
        width = self.size.width
        for wording in self._wordings:
            if wording.cell_length <= width:
                return wording
        return fit_content(self._wordings[-1], width) if self._wordings else Content("")

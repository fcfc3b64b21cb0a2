"""Chart: a plotext plot drawn in the app's theme colours, redrawn only when its data changed.

A plotext render costs milliseconds to tens of milliseconds, so screens call ``Chart.draw`` at
most twice a second and only while visible, and ``draw`` itself skips data it has already drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from textual import events
from textual.color import Color
from textual.content import Content
from textual_plotext import PlotextPlot
from textual_plotext.plot import Plot

from nvfp4_tui.core.series_colours import series_hex

RGB = tuple[int, int, int]
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
        self.border_title = title
        self._key: Hashable | None = None
        self._painter: Painter | None = None

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
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        # Painters may fit their data to the width (one point per column): paint again.
        self._paint()

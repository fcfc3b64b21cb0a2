"""CompareApp: the comparison of two recorded runs, on its own screen (``compare A B --ui``)."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import SystemCommand
from textual.screen import Screen

from nvfp4_tui.core.figures.comparison import Comparison
from nvfp4_tui.tui.screens.compare import CompareScreen
from nvfp4_tui.tui.screenshots import ScreenshotsHere


class CompareApp(ScreenshotsHere[int]):
    CSS_PATH = "app.tcss"
    TITLE = "nvfp4-tui compare"

    def __init__(self, comparison: Comparison) -> None:
        super().__init__()
        self.comparison = comparison

    def on_mount(self) -> None:
        # Pushed rather than made the default screen: only pushed screens load their CSS_PATH.
        self.push_screen(CompareScreen(self.comparison))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, CompareScreen):
            yield SystemCommand(
                "Significant changes only / every cell",
                "Keep only the cells with a significant change, or show all (s)",
                screen.action_toggle_significant,
            )

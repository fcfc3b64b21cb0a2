"""Where a screenshot goes: the current directory, however it is asked for."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from textual.app import App

ReturnT = TypeVar("ReturnT")


class ScreenshotsHere(App[ReturnT]):
    """An app whose screenshots (its key, and the palette's "Screenshot", which calls
    ``deliver_screenshot`` itself) are saved in the current directory: Textual's default is a
    Downloads folder, which most servers do not have. Textual says where it went once written."""

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        return super().deliver_screenshot(filename, path or str(Path.cwd()), time_format)

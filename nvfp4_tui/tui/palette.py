"""Rich styles for table cells, taken from the active theme.

Widgets style their own text with theme variables (``$error``); DataTable cells are Rich Text,
which knows no variables, so tables ask here for the current theme's colours as Rich styles.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import App


@dataclass(frozen=True)
class CellStyles:
    error: str
    warning: str
    muted: str
    best: str  # the best value of a row or column
    ok: str  # a status going well ("running")
    bar: str  # a small bar chart in a cell


def cell_styles(app: App) -> CellStyles:
    variables = app.theme_variables

    def color(name: str, fallback: str) -> str:
        return variables.get(name) or fallback

    success = color("success", "green")
    return CellStyles(
        error=f"bold {color('error', 'red')}",
        warning=color("warning", "yellow"),
        muted="dim",  # theme muted colours carry alpha, which Rich styles cannot
        best=f"bold {success}",
        ok=success,
        bar=color("accent", "yellow"),
    )

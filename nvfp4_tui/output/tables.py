"""Plain-text and Markdown tables for reports and headless output (aligned, width-aware for CJK).

A cell can hold a label, a model id or a message from a snapshot made elsewhere: every title,
header and cell passes ``core.outside_text`` on its way to a terminal or a file, on one line,
and a Markdown cell's pipes are escaped so it stays one cell.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from nvfp4_tui.core.outside_text import outside_line


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _pad(text: str, width: int, right: bool) -> str:
    gap = " " * (width - display_width(text))
    return gap + text if right else text + gap


def table_cells(rows: Sequence[Sequence[str]]) -> list[list[str]]:
    """``rows`` with every cell safe to print: one line, no escapes, no keys."""
    return [[outside_line(cell) for cell in row] for row in rows]


def _numeric(text: str) -> bool:
    digits = text.replace(",", "").replace(".", "", 1).replace("-", "", 1).replace("+", "", 1)
    return digits.rstrip("%").isdigit()


def format_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    markdown: bool = False,
) -> str:
    """Columns padded to their widest cell; numbers right-aligned. Markdown pipes when asked."""
    headers, *rows = table_cells([headers, *rows])
    title = outside_line(title) if title else None
    if markdown:
        headers, *rows = [[cell.replace("|", "\\|") for cell in row] for row in [headers, *rows]]
    widths = [display_width(h) for h in headers]
    for row in rows:
        widths = [max(w, display_width(c)) for w, c in zip(widths, row, strict=True)]
    right = [all(_numeric(r[i]) or r[i] == "—" for r in rows) and rows for i in range(len(headers))]
    lines = []
    if title:
        lines.append(f"### {title}" if markdown else title)
        if markdown:
            lines.append("")
    if markdown:
        lines.append("| " + " | ".join(headers) + " |")
        lines.append("|" + "|".join("---:" if r else "---" for r in right) + "|")
        lines.extend("| " + " | ".join(row) + " |" for row in rows)
    else:
        lines.append(
            "  ".join(_pad(h, w, bool(r)) for h, w, r in zip(headers, widths, right, strict=True))
        )
        lines.append("  ".join("-" * w for w in widths))
        lines.extend(
            "  ".join(_pad(c, w, bool(r)) for c, w, r in zip(row, widths, right, strict=True))
            for row in rows
        )
    return "\n".join(lines)

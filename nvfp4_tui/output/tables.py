"""Plain-text and Markdown tables for reports and headless output (aligned, width-aware for CJK).

A cell can hold a label, a model id or a message from a snapshot made elsewhere: every title,
header and cell passes ``core.outside_text`` on its way to a terminal or a file, on one line.
Markdown output puts every such text through ``markdown_line``, the one rule for text from
outside in Markdown (tables here, the write-up, ``compare`` and ``export``): it shows as the
characters it is, never as a link, an image, emphasis, HTML or a cell's end.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import TypeVar

from nvfp4_tui.core.outside_text import outside_line

Table = tuple[str, list[str], list[list[str]]]  # title, headers, rows
Row = TypeVar("Row")

# Backslash-escaped wherever they are: what starts inline Markdown or HTML in CommonMark and
# GFM (code, emphasis, links and images, raw HTML and autolinks, entities, strikethrough, math
# on GitHub, a table cell's end). "(" needs no escape: a link's "](" cannot form without "]".
_MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]<>|~!&$])")
# GFM links a bare "https://..." or "www...." by itself: an escaped ":" or "." keeps it text.
_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9])(:)(?=//)|(?<=\bwww)(\.)")
# Escaped at the line's start only, where they open a block (a heading, a list, a rule): "# x",
# "- x", "+ x", "1. x", "1) x", "---", "===". A number such as "-3.5" is left as it is.
_MARKDOWN_BLOCK = re.compile(r"^(?:[#+=-](?=\s|$|[#+=-])|\d{1,9}(?=[.)](?:\s|$)))")


def number_cell(value: float | None, spec: str) -> str:
    """``value`` in the format ``spec``, or a dash for a figure that has no value."""
    return "—" if value is None else format(value, spec)


def change_cell(
    a: Row | None, b: Row | None, figure: Callable[[Row], float | None], scale: float, spec: str
) -> str:
    """``A → B``: one figure of two runs' rows (``compare``), times ``scale``, a dash where a
    run lacks the row or the figure."""

    def side(row: Row | None) -> str:
        value = None if row is None else figure(row)
        return number_cell(None if value is None else value * scale, spec)

    return f"{side(a)} → {side(b)}"


def ms_cell(seconds: float | None) -> str:
    """Seconds shown in milliseconds to a tenth, or a dash."""
    return number_cell(None if seconds is None else seconds * 1000, ".1f")


def markdown_line(raw: str | None) -> str:
    """``outside_line`` of ``raw``, with every character that could start Markdown markup
    backslash-escaped: it renders as the same characters, and as nothing else."""
    line = _MARKDOWN_INLINE.sub(r"\\\1", outside_line(raw))
    line = _AUTOLINK.sub(lambda m: "\\" + m.group(0), line)
    return _MARKDOWN_BLOCK.sub(_escape_block_start, line, count=1)


def _escape_block_start(match: re.Match[str]) -> str:
    marker = match.group(0)
    # A list number opens the list by the "." or ")" after it: the escape goes before that.
    return marker + "\\" if marker[0].isdigit() else "\\" + marker


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
    right = [all(_numeric(r[i]) or r[i] == "—" for r in rows) and rows for i in range(len(headers))]
    title = (markdown_line if markdown else outside_line)(title) if title else None
    if markdown:
        headers, *rows = [[markdown_line(cell) for cell in row] for row in [headers, *rows]]
    widths = [display_width(h) for h in headers]
    for row in rows:
        widths = [max(w, display_width(c)) for w, c in zip(widths, row, strict=True)]
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

"""Every format the `report`, `export` and `compare` commands write, one table per command.

The command line's choices and help come from these tables, and each command hands its subject
to the format's writer: ``writer(subject, name, ...)``, a report's and a comparison's returning
the text, an export's the files it wrote under ``out``. Adding a format is its writer, in the
module that owns that kind of output, and one line here. Writers are named, not imported: the
command line is parsed without loading polars or matplotlib.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OutputFormat:
    name: str
    writes: str  # what it writes, as the command's --help says it
    writer_path: str  # "module:function"
    needs_figures: bool = False  # drawn with matplotlib, the figures extra

    def writer(self) -> Callable[..., Any]:
        module, _, function = self.writer_path.partition(":")
        return getattr(importlib.import_module(module), function)


@dataclass(frozen=True)
class FormatTable:
    command: str
    formats: tuple[OutputFormat, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.formats)

    @property
    def help(self) -> str:
        return "; ".join(
            f"{f.name}: {f.writes}" + (" (the figures extra)" if f.needs_figures else "")
            for f in self.formats
        )

    def __getitem__(self, name: str) -> OutputFormat:
        for found in self.formats:
            if found.name == name:
                return found
        raise KeyError(f"{self.command} format must be one of {list(self.names)}, got {name!r}")

    def __iter__(self) -> Iterator[OutputFormat]:
        return iter(self.formats)


_REPORT = "nvfp4_tui.output.report:render_snapshot"
REPORT = FormatTable(
    "report",
    (
        OutputFormat("text", "the tables and a chart, for a terminal", _REPORT),
        OutputFormat("json", "every table's rows as JSON, with stable keys", _REPORT),
        OutputFormat("markdown", "the tables in Markdown", _REPORT),
        OutputFormat(
            "html",
            "one self-contained file with the figures",
            "nvfp4_tui.output.writeup:render_writeup",
            needs_figures=True,
        ),
    ),
)
_EXPORT = "nvfp4_tui.output.export:write_export"
EXPORT = FormatTable(
    "export",
    (
        OutputFormat("parquet", "one Parquet file per table, in the directory --out", _EXPORT),
        OutputFormat("csv", "one CSV file per table, in the directory --out", _EXPORT),
        OutputFormat("json", "the report as one JSON file --out", _EXPORT),
        OutputFormat("markdown", "the report as one Markdown file --out", _EXPORT),
        OutputFormat(
            "figures",
            "the published figures as PNG and SVG, in the directory --out",
            "nvfp4_tui.output.figures.files:export_figures",
            needs_figures=True,
        ),
    ),
)
_COMPARE = "nvfp4_tui.output.compare:render_comparison"
COMPARE = FormatTable(
    "compare",
    (
        OutputFormat("text", "the changes as tables, for a terminal", _COMPARE),
        OutputFormat("markdown", "the changes in Markdown", _COMPARE),
        OutputFormat("json", "every figure with stable keys, for scripts", _COMPARE),
    ),
)

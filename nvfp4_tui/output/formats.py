"""Every format the `report`, `export` and `compare` commands write, one table per command.

The command line's choices and help come from these tables, and each command hands its subject
to the format's writer: ``writer(subject, name, ...)``, a report's and a comparison's returning
the text, an export's the files it wrote under ``out`` (and the figures it left out, with why,
for the command to say). Adding a format is its writer, in the module that owns that kind of
output, and one line here. Writers are named, not imported: the command line is parsed without
loading polars or matplotlib.
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

    def written_by(self, writer_path: str) -> tuple[str, ...]:
        """The names of the formats ``writer_path`` writes: what that writer accepts."""
        return tuple(f.name for f in self.formats if f.writer_path == writer_path)

    def __getitem__(self, name: str) -> OutputFormat:
        for found in self.formats:
            if found.name == name:
                return found
        raise KeyError(f"{self.command} format must be one of {list(self.names)}, got {name!r}")

    def __iter__(self) -> Iterator[OutputFormat]:
        return iter(self.formats)


def _by(writer_path: str, **writes: str) -> tuple[OutputFormat, ...]:
    """The formats one writer writes, each named by its keyword, with what it writes."""
    return tuple(OutputFormat(name, what, writer_path) for name, what in writes.items())


REPORT = FormatTable(
    "report",
    (
        *_by(
            "nvfp4_tui.output.report:render_snapshot",
            text="the tables and a chart, for a terminal",
            json="every table's rows as JSON, with stable keys",
            markdown="the tables in Markdown",
        ),
        OutputFormat(
            "html",
            "one self-contained file with the figures",
            "nvfp4_tui.output.writeup:render_writeup",
            needs_figures=True,
        ),
    ),
)
EXPORT = FormatTable(
    "export",
    (
        *_by(
            "nvfp4_tui.output.export:write_export",
            parquet="one Parquet file per table, in the directory --out",
            csv="one CSV file per table, in the directory --out",
            json="the report as one JSON file --out",
            markdown="the report as one Markdown file --out",
        ),
        OutputFormat(
            "figures",
            "the published figures as PNG and SVG, in the directory --out",
            "nvfp4_tui.output.figures.files:export_figures",
            needs_figures=True,
        ),
    ),
)
COMPARE = FormatTable(
    "compare",
    _by(
        "nvfp4_tui.output.compare:render_comparison",
        text="the changes as tables, for a terminal",
        markdown="the changes in Markdown",
        json="every figure with stable keys, for scripts",
    ),
)

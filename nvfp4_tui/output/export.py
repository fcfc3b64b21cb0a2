"""Exporting a snapshot for other tools: Parquet or CSV tables, or the report as JSON / Markdown.

Parquet and CSV write one file per table (``requests``, ``gpu``, ``server``, ``events``) into the
output directory, in the snapshot's own schema (``ts`` as a UTC timestamp, SI units in column
names); CSV's text columns pass ``core.outside_text`` (no escapes, no invisible formatting), as
a CSV is read in terminals and spreadsheets, and a text cell a spreadsheet would run as a
formula (it starts with = + - @, a tab or a CR) gets a leading ``'``. JSON writes the leaderboard rows and the report's tables; Markdown writes the report's
tables in the shape of the seed's README. Every file is written whole or not at all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl

from nvfp4_tui.core.outside_text import outside_line, outside_text
from nvfp4_tui.output.formats import EXPORT
from nvfp4_tui.output.report import leaderboard_json, render_snapshot, report_tables, snapshot_board
from nvfp4_tui.output.tables import markdown_line
from nvfp4_tui.store.manifest import SnapshotError, error_text, write_atomic
from nvfp4_tui.store.reader import Snapshot, open_snapshot
from nvfp4_tui.store.schema import TABLES
from nvfp4_tui.store.writer import parquet_bytes

EXPORT_FORMATS = EXPORT.written_by(f"{__name__}:write_export")
# OWASP's CSV-injection rule: a cell starting with one of these opens as a formula in Excel,
# LibreOffice and Sheets (=HYPERLINK(...), @SUM(...)); a leading ' makes it text there.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A text cell that is a plain number ("-3.5") is no formula, and stays as it came.
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _write(path: Path, data: bytes) -> None:
    try:
        write_atomic(path, data)
    except OSError as exc:
        raise SnapshotError(f"cannot write {path}: {error_text(exc)}") from exc


def _table_files(snapshot: Snapshot, out_dir: Path, fmt: str) -> list[Path]:
    if out_dir.exists() and not out_dir.is_dir():
        raise SnapshotError(
            f"cannot export to {out_dir}: not a directory ({fmt} writes one per table)"
        )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SnapshotError(f"cannot create {out_dir}: {error_text(exc)}") from exc
    written = []
    for table in TABLES:
        frame = snapshot.table(table)
        path = out_dir / f"{table}.{fmt}"
        if fmt == "parquet":
            _write(path, parquet_bytes(frame))
        else:
            _write(path, csv_frame(frame).write_csv().encode())
        written.append(path)
    return written


def csv_cell(raw: str | None) -> str:
    """A text cell from outside as CSV shows it: ``outside_text``, then ``'`` ahead of a
    formula's start."""
    text = outside_text(raw)
    if text.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def csv_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """Every text column through ``csv_cell``; line breaks stay (CSV quotes them), numbers and
    times are left as they are."""
    texts = [name for name, dtype in frame.schema.items() if dtype == pl.String]
    return frame.with_columns(_csv_column(frame.get_column(name)) for name in texts)


def _csv_column(column: pl.Series) -> pl.Series:
    # Each distinct text once: a run repeats its ids, suites and statuses on every row, and
    # often its answers (89,200 demo rows: 0.06 s, where a call per cell took 9.6 s).
    distinct = column.drop_nulls().unique()
    cells = [csv_cell(text) for text in distinct]
    return column.replace_strict(distinct, cells, return_dtype=pl.String)


def report_document(snapshot: Snapshot) -> dict[str, Any]:
    """The report as one JSON-ready object: run identity, leaderboard rows, the tables."""
    return {
        "run_id": snapshot.run_id,
        "status": snapshot.status,
        # What could not be read: the figures leave its rows out (empty when all was read).
        "skipped": [outside_line(warning) for warning in snapshot.warnings],
        "leaderboard": leaderboard_json(snapshot_board(snapshot)),
        "tables": [
            {"title": title, "headers": headers, "rows": rows}
            for title, headers, rows in report_tables(snapshot)
        ],
    }


def export_snapshot(snapshot_path: Path, fmt: str, out: Path) -> list[Path]:
    """Export the snapshot at ``snapshot_path`` as ``fmt`` to ``out``; returns the files written.

    ``out`` is a directory for ``parquet`` and ``csv``, a file for ``json`` and ``markdown``.
    Raises SnapshotError (one line) when the snapshot cannot be read or ``out`` written.
    """
    return write_export(open_snapshot(snapshot_path), fmt, out)


def write_export(snapshot: Snapshot, fmt: str, out: Path) -> list[Path]:
    """Export an open snapshot (what of it could be read: see its ``warnings``), as
    ``export_snapshot`` does."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"export format must be one of {list(EXPORT_FORMATS)}, got {fmt!r}")
    out = Path(out)
    if fmt in ("parquet", "csv"):
        return _table_files(snapshot, out, fmt)
    if out.is_dir():
        raise SnapshotError(f"cannot export to {out}: a directory; {fmt} writes one file")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SnapshotError(f"cannot create {out.parent}: {error_text(exc)}") from exc
    if fmt == "json":
        text = json.dumps(report_document(snapshot), indent=1, ensure_ascii=False) + "\n"
    else:
        title = f"# {markdown_line(snapshot.run_id)}\n\n"
        text = title + render_snapshot(snapshot, "markdown") + "\n"
    _write(out, text.encode())
    return [out]

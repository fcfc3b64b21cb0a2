"""The format tables are what the commands offer and run: the command line's choices are their
names, every entry's writer exists, and each command writes every format it lists."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from nvfp4_tui.cli import build_parser, main
from nvfp4_tui.output.formats import COMPARE, EXPORT, REPORT, FormatTable

SAMPLE = Path(__file__).resolve().parents[2] / "snapshots" / "sample-demo"


def _choices(command: str) -> tuple[str, ...]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    parser = sub.choices[command]  # type: ignore[index]
    option = next(a for a in parser._actions if a.dest == "format")
    return tuple(option.choices)


@pytest.mark.parametrize("table", [REPORT, EXPORT, COMPARE], ids=lambda t: t.command)
def test_the_command_line_offers_each_table_and_every_writer_exists(table: FormatTable) -> None:
    assert _choices(table.command) == table.names
    assert len(set(table.names)) == len(table.names)
    for entry in table:
        writer = entry.writer()
        assert callable(writer)
        assert list(inspect.signature(writer).parameters)[1] == "fmt", entry.writer_path
    with pytest.raises(KeyError, match=f"{table.command} format must be one of"):
        table["no-such-format"]


def test_every_listed_format_writes(tmp_path: Path, capsys) -> None:
    for entry in REPORT:
        if not entry.needs_figures:
            assert main(["report", str(SAMPLE), "--format", entry.name]) == 0
            assert capsys.readouterr().out.strip()
    for entry in EXPORT:
        if not entry.needs_figures:
            out = tmp_path / entry.name
            assert main(["export", str(SAMPLE), "--format", entry.name, "--out", str(out)]) == 0
            assert out.exists()
    for entry in COMPARE:
        assert main(["compare", str(SAMPLE), str(SAMPLE), "--format", entry.name]) == 0
        assert capsys.readouterr().out.strip()

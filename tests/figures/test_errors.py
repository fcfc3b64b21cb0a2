"""The servers' error messages, shown: the headless phase line names the most frequent, the
report has an errors table in every format, the detail screen the latest error's message."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.core.events import PhaseFinished, PhasePlan, PhaseStarted, RunStarted
from nvfp4_tui.core.figures.errors import ERROR_MESSAGE_CHARS, ErrorTally, shown_error_message
from nvfp4_tui.launch.run import PhasePrinter
from nvfp4_tui.output.report import render_snapshot
from nvfp4_tui.store.reader import open_snapshot
from tests.support.factories import T0, endpoint_info, request

from .edge_run import ERROR_MESSAGE, edge_snapshot

HOSTILE = "\x1b[31mmodel   failed:\nout of memory " + "while allocating blocks " * 10


def test_a_message_is_one_safe_line_cut_at_a_word() -> None:
    shown = shown_error_message(HOSTILE)
    assert "\x1b" not in shown and "\n" not in shown and len(shown) <= ERROR_MESSAGE_CHARS
    assert shown.startswith("model failed: out of memory while") and shown.endswith("blocks…")
    assert shown_error_message(None) == "(no message)"


def test_the_tally_keeps_each_kinds_count_and_first_message() -> None:
    tally = ErrorTally()
    tally.add("b", "timeout", "read timed out")
    tally.add("a", "http_5xx", "first")
    tally.add("a", "http_4xx", "bad request")
    tally.add("a", "http_4xx", "later")
    rows = tally.rows(("a", "b"))
    assert [(r.endpoint_id, r.error_kind, r.count, r.first_message) for r in rows] == [
        ("a", "http_4xx", 2, "bad request"),
        ("a", "http_5xx", 1, "first"),
        ("b", "timeout", 1, "read timed out"),
    ]


def test_a_phase_line_with_errors_names_the_most_frequent_message() -> None:
    stream = io.StringIO()
    printer = PhasePrinter(stream)
    plans = (PhasePlan("a", "tools", 1, 4), PhasePlan("a", "essay", 1, 1))
    printer(RunStarted(T0, "r", "r", (endpoint_info("a"),), plans))
    printer(PhaseStarted(T0, "a", "tools", 1, 0))
    for i, message in enumerate((ERROR_MESSAGE, HOSTILE, ERROR_MESSAGE)):
        printer(request(status="error", error_kind="http_4xx", error_message=message,
                        request_index=i, suite="tools"))  # fmt: skip
    printer(request(request_index=3, suite="tools"))
    printer(PhaseFinished(T0 + 1, "a", "tools", 1, 0, 4, 3, 10, 1.0))
    printer(PhaseStarted(T0 + 1, "a", "essay", 1, 1))
    printer(request(phase_index=1))
    printer(PhaseFinished(T0 + 2, "a", "essay", 1, 1, 1, 0, 10, 1.0))
    tools, essay = stream.getvalue().splitlines()
    assert tools.endswith(f"most frequent error (×2): {ERROR_MESSAGE}")
    assert "error" not in essay.split("err", 1)[1]


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_the_report_has_an_errors_table(tmp_path: Path, fmt: str) -> None:
    text = render_snapshot(open_snapshot(edge_snapshot(tmp_path)), fmt)
    section = text.split("Errors: per endpoint and kind")[1].split("Server view")[0]
    [row] = [line for line in section.splitlines() if "Broken Dense" in line]
    assert "4xx" in row and " 6 " in row and ERROR_MESSAGE in row


def test_the_json_report_has_an_error_row_per_endpoint_and_kind(tmp_path: Path) -> None:
    rows = json.loads(render_snapshot(open_snapshot(edge_snapshot(tmp_path)), "json"))
    assert [r for r in rows if r.get("kind") == "error"] == [
        {
            "kind": "error",
            "endpoint": "broken",
            "error_kind": "http_4xx",
            "count": 6,
            "first_message": ERROR_MESSAGE,
        }
    ]


def test_export_json_carries_the_errors_and_server_view_tables(tmp_path: Path, capsys) -> None:
    out = tmp_path / "report.json"
    assert (
        main(["export", str(edge_snapshot(tmp_path)), "--format", "json", "--out", str(out)]) == 0
    )
    tables = json.loads(out.read_text())["tables"]
    [errors] = [t for t in tables if t["title"].startswith("Errors")]
    assert errors["rows"] == [["Broken Dense", "http_4xx", "6", ERROR_MESSAGE]]
    [server] = [t for t in tables if t["title"].startswith("Server view")]
    assert server["rows"][0][:4] == ["Zero MoE", "c=1", "200.0", "150.0"]  # TTFT ms client, server

"""Importing the seed script's JSON: the report reproduces the file's own summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.core.events import GpuSample, RequestFinished
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.output.report import board_of
from nvfp4_tui.store.legacy import LegacyError, import_legacy, read_legacy, recorded_in_flight
from nvfp4_tui.store.reader import open_snapshot

from .builders import legacy_file


@pytest.fixture
def legacy(tmp_path: Path) -> tuple[Path, dict]:
    path = tmp_path / "benchmark.json"
    return path, legacy_file(path)


def test_the_report_reproduces_the_legacy_summary(legacy, tmp_path: Path) -> None:
    path, body = legacy
    snapshot = open_snapshot(import_legacy(path, tmp_path / "snapshots" / "seed"))
    rows = {
        (r.endpoint, r.suite, r.concurrency): r
        for r in board_of(snapshot.requests(), snapshot.events()).rows
    }
    assert len(rows) == len(body["summary"])
    checked = 0
    for cell in body["summary"]:
        row = rows[(cell["model"], cell["test"], cell["concurrency"])]
        results = [
            r
            for r in body["results"]
            if (r["model"], r["test"], r["concurrency"])
            == (cell["model"], cell["test"], cell["concurrency"])
        ]
        silent = sum(1 for r in results if r["tokens_out"] == 0 and not r["error"])
        assert row.suspect == silent
        assert row.errors == cell["errors"]
        assert row.n == len(results) - silent - cell["errors"]
        if silent or cell["errors"]:
            continue  # the seed averaged its failures in as zeros; the report keeps them apart
        assert round(row.score("score_heuristic").mean, 3) == cell["avg_quality"]
        assert round(row.e2e_tps.mean, 1) == cell["avg_tok_per_sec"]
        checked += 1
    assert checked == 7  # 2 models x 2 tests x 2 levels, less the cell with an HTTP error
    tool_cells = [r for key, r in rows.items() if key[1] == "tool_call"]
    assert tool_cells and all(
        r.n == 0 and r.score("score_heuristic").mean is None for r in tool_cells
    )


def test_the_import_is_a_replayable_snapshot(legacy, tmp_path: Path) -> None:
    path, body = legacy
    snapshot = open_snapshot(import_legacy(path, tmp_path / "seed"))
    assert snapshot.status == "complete"
    assert snapshot.manifest["started_at"] == "2026-04-16T21:07:00.000+00:00"
    assert snapshot.manifest["ended_at"] > snapshot.manifest["started_at"]
    assert snapshot.manifest["legacy"]["source_file"] == "benchmark.json"
    # Two prompts a test, all launched at once: the script's "concurrency 1" held 2 in flight.
    assert snapshot.manifest["legacy"]["in_flight"] == {"1": [2], "4": [8]}
    assert recorded_in_flight(snapshot.manifest) == {1: (2,), 4: (8,)}
    assert recorded_in_flight({"legacy": {"in_flight": {"1": [2, "x"], "c": [3]}}}) == {1: (2,)}
    state = FleetState()
    state.apply_all(snapshot.events())
    assert state.dropped == 0 and state.status == "complete"
    assert state.requests_done == len(body["results"])
    assert [e.info.gpu for e in state.endpoints.values()] == [0, 1]
    vram = [(e.gpu, e.vram_used_mib) for e in snapshot.events() if isinstance(e, GpuSample)]
    assert vram[:3] == [(0, 92862.0), (1, 92470.0), (2, 1360.0)]
    assert vram[3:] == [(0, 92866.0), (1, 92478.0), (2, 1156.0)]
    failed = [
        e for e in snapshot.events() if isinstance(e, RequestFinished) and e.status == "error"
    ]
    kinds = {e.error_kind for e in failed}
    assert kinds == {"suspect", "http_5xx"}
    first = next(e for e in snapshot.events() if isinstance(e, RequestFinished))
    source = body["results"][0]
    assert first.e2e_s == pytest.approx(source["latency_ms"] / 1000)
    assert first.e2e_tps == source["tok_per_sec"]
    assert first.score_heuristic_detail == source["quality_notes"]
    assert first.answer_text == source["content"]
    # The seed's script kept no chunks: how many tokens its first one carried is unknown.
    assert snapshot.requests().get_column("first_chunk_tokens").null_count() == len(body["results"])


def corrupt(path: Path, change) -> None:
    body = json.loads(path.read_text())
    change(body)
    path.write_text(json.dumps(body))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda b: b["results"][12].update(tokens_out="x"),
            'results[12].tokens_out: expected an integer, got "x"',
        ),
        (
            lambda b: b["results"][3].pop("latency_ms"),
            "results[3].latency_ms: missing (expected a number >= 0)",
        ),
        (
            lambda b: b["results"][0].update(model="ghost"),
            "results[0].model: expected one of metadata.models ['dense_b', 'moe_a'], got \"ghost\"",
        ),
        (lambda b: b["metadata"].pop("models"), "metadata.models: missing"),
        (lambda b: b["metadata"].update(date="yesterday"), "metadata.date: expected a date"),
        (lambda b: b["results"][1].update(concurrency=0), "results[1].concurrency: expected"),
        (lambda b: b["results"][2].update(tok_per_sec=True), "results[2].tok_per_sec: expected"),
    ],
)
def test_bad_input_is_one_line_naming_file_and_key(legacy, tmp_path, capsys, change, message):
    path, _ = legacy
    corrupt(path, change)
    with pytest.raises(LegacyError) as caught:
        read_legacy(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)
    assert main(["import", str(path), "--out", str(tmp_path / "snap")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "snap").exists()


def test_not_json_and_existing_output(legacy, tmp_path: Path, capsys) -> None:
    path, _ = legacy
    assert main(["import", str(path), "--out", str(tmp_path / "snap")]) == 0
    out = capsys.readouterr().out
    assert "levels:   the script's concurrency 1 held 2, 4 held 8 requests in flight" in out
    assert main(["import", str(path), "--out", str(tmp_path / "snap")]) == 2
    assert "directory is not empty" in capsys.readouterr().err
    path.write_text("{not json")
    with pytest.raises(LegacyError, match=r"benchmark.json: not JSON \("):
        read_legacy(path)

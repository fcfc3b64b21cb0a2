"""The compare screen: every cell of two runs, significant changes marked better or worse."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable, Static

from nvfp4_tui import cli
from nvfp4_tui.core.figures.comparison import METRICS, Comparison, MetricChange, metrics_for
from nvfp4_tui.launch import ui as launch
from nvfp4_tui.output.compare import compare_snapshots
from nvfp4_tui.store.legacy import import_legacy
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.tui.compare_app import CompareApp
from nvfp4_tui.tui.palette import cell_styles
from nvfp4_tui.tui.screens.compare import change_text, shown_names, verdict
from tests.support.factories import write_snapshot

from ..replay.builders import legacy_file
from .runs import compare_run

# Run B: Alpha decodes slower on math, Beta answers coding sooner, Gamma scores higher on math.
SHIFT = {
    ("moe_a", "math"): {"decode_tps": -30.0},
    ("dense_b", "coding"): {"ttft_s": -0.06},
    ("moe_c", "math"): {"quality": 0.15},
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("snapshots")
    a = write_snapshot(root, "run-a", compare_run("run-a", seed=1, shift={}))
    b = write_snapshot(root, "run-b", compare_run("run-b", seed=2, shift=SHIFT))
    return a, b


@pytest.fixture(scope="module")
def comparison(runs: tuple[Path, Path]) -> Comparison:
    a, b = runs
    return compare_snapshots(open_snapshot(a), open_snapshot(b))


def _change(name: str, a: float | None, b: float | None, significant: bool) -> MetricChange:
    metric = next(m for m in (*METRICS, *metrics_for(speed="e2e_tps")) if m.name == name)
    return MetricChange(metric, 20, 20, a, b, 0.001, 0.01, significant)


def test_verdict_knows_which_direction_is_better() -> None:
    assert verdict(_change("quality", 0.7, 0.8, True)) == "better"
    assert verdict(_change("decode_tps", 120, 90, True)) == "worse"
    assert verdict(_change("ttft_p50_s", 0.2, 0.14, True)) == "better"
    assert verdict(_change("ttft_p50_s", 0.2, 0.3, True)) == "worse"
    assert verdict(_change("quality", 0.7, 0.8, False)) is None


def test_change_text() -> None:
    assert change_text(_change("quality", 0.7, 0.812, True)) == "0.700 → 0.812 *"
    assert change_text(_change("decode_tps", 120.0, 90.0, False)) == "120.0 → 90.0 -25%"
    assert change_text(_change("ttft_p50_s", 0.2, 0.15, True)) == "200 → 150 -25% *"
    assert change_text(_change("quality", None, 0.5, False)) == "— → 0.500"
    sized = replace(_change("e2e_tps", 100.0, 150.0, True), cliffs_delta=0.875)
    assert change_text(sized) == "100.0 → 150.0 +50% δ+0.88 *"


def _rows(table: DataTable) -> list[list[Text]]:
    return [table.get_row_at(i) for i in range(table.row_count)]


async def test_table_highlights_the_significant_changes(comparison: Comparison) -> None:
    app = CompareApp(comparison)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#changes", DataTable)
        assert table.row_count == 6  # 3 endpoints x 2 suites
        styles = cell_styles(app)
        marked = {}
        for row in _rows(table):
            label, suite, _, n = (cell.plain for cell in row[:4])
            assert n == "20/20"
            for change in row[4:]:
                if change.plain.endswith("*"):
                    marked[(label, suite)] = change.style
        assert marked == {
            ("Alpha-35B-A3B", "math"): styles.error,
            ("Beta-27B", "coding"): styles.best,
            ("Gamma-26B-A4B", "math"): styles.best,
        }
        head = str(app.screen.query_one("#compare-head", Static).render())
        assert "run-a" in head and "run-b" in head and "3 significant changes of 18 tests" in head
        await pilot.press("s")
        assert table.row_count == 3
        await pilot.press("s")
        assert table.row_count == 6
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running


def test_cli_compare_ui_opens_the_screen(runs: tuple[Path, Path], monkeypatch) -> None:
    shown: list[Comparison] = []

    def fake_ui(comparison: Comparison) -> int:
        shown.append(comparison)
        return 0

    monkeypatch.setattr(launch, "run_compare_ui", fake_ui)
    a, b = runs
    assert cli.main(["compare", str(a), str(b), "--ui"]) == 0
    assert len(shown) == 1 and len(shown[0].significant) == 3


async def test_legacy_imports_compare_on_e2e_speed_errors_and_vram(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    legacy_file(first, seed=5)
    legacy_file(second, seed=6)
    a = import_legacy(first, tmp_path / "a")
    b = import_legacy(second, tmp_path / "b")
    app = CompareApp(compare_snapshots(open_snapshot(a), open_snapshot(b)))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        changes = app.screen.query_one("#changes", DataTable)
        headings = [str(column.label) for column in changes.columns.values()]
        assert headings[4:] == ["quality (heuristic)", "e2e tok/s", "errors"]
        first_row = [cell.plain for cell in changes.get_row_at(0)]
        assert first_row[2] == "c=1⁺"  # what was in flight is said under the tables
        levels = app.screen.query_one("#levels", DataTable)
        vram = app.screen.query_one("#vram", DataTable)
        assert levels.row_count == 4 and levels.display
        assert vram.row_count == 3 and vram.display
        # Below 160 columns the last sample only: what the loaded model holds.
        assert [cell.plain for cell in vram.get_row_at(0)[2:]] == ["92,866 → 92,866"]
        notes = str(app.screen.query_one("#compare-notes", Static).render())
        assert "c=1⁺: seed c=1: 2 in flight" in notes
        assert "has no decode tok/s" in notes and "left out, TTFT p50 s" in notes
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        assert [cell.plain for cell in vram.get_row_at(0)[2:]] == [
            "92,862 → 92,862",
            "92,866 → 92,866",
        ]


async def test_a_renamed_pair_shows_bs_name_cut_to_the_screen(tmp_path: Path) -> None:
    legacy_file(tmp_path / "a.json", seed=5)
    body = legacy_file(tmp_path / "b.json", seed=6)
    long = " 35B Instruct (NVFP4, official weights)"
    for model in body["metadata"]["models"].values():
        model["name"] += long
    (tmp_path / "b.json").write_text(json.dumps(body), encoding="utf-8")
    a = import_legacy(tmp_path / "a.json", tmp_path / "a")
    b = import_legacy(tmp_path / "b.json", tmp_path / "b")
    comparison = compare_snapshots(open_snapshot(a), open_snapshot(b))
    assert shown_names(comparison, 20) == {
        f"Alpha MoE → Alpha MoE{long}": "Alpha MoE 35B…†",
        f"Beta Dense → Beta Dense{long}": "Beta Dense 35B…†",
    }
    app = CompareApp(comparison)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        changes = app.screen.query_one("#changes", DataTable)
        assert changes.get_row_at(0)[0].plain == "Alpha MoE 35B…†"
        assert "†: renamed in B" in str(changes.border_subtitle)
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert changes.get_row_at(0)[0].plain == "Alpha MoE 35B Instruct (NVFP4,…†"


async def test_what_the_configuration_changed_is_said_before_the_table(
    comparison: Comparison,
) -> None:
    assert comparison.configuration_changes == ()  # these runs recorded none
    app = CompareApp(comparison)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert not app.screen.query_one("#compare-config", Static).display

    changes = (
        "kv_cache_dtype: fp8 → auto on GPU 0,1,2",
        "num_gpu_blocks: 32768 → 16384 on GPU 0,1,2",
        "server_version: 0.10.2 → 0.11.0\x1b[31m on GPU 1 (Beta-27B)",
    )
    app = CompareApp(replace(comparison, configuration_changes=changes))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        block = app.screen.query_one("#compare-config", Static)
        assert block.display
        lines = str(block.render()).splitlines()
        assert lines == [
            "changed  kv_cache_dtype: fp8 → auto on GPU 0,1,2",
            "         num_gpu_blocks: 32768 → 16384 on GPU 0,1,2",
            "         server_version: 0.10.2 → 0.11.0 on GPU 1 (Beta-27B)",  # no escape
        ]
        assert app.screen.query_one("#changes", DataTable).row_count == 6

    many = tuple(f"max_model_len: 4096 → 8192 on GPU {i} (E{i})" for i in range(6))
    app = CompareApp(replace(comparison, configuration_changes=many))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        lines = str(app.screen.query_one("#compare-config", Static).render()).splitlines()
        assert len(lines) == 4 and lines[-1].endswith("… and 3 more: `compare A B` lists them")

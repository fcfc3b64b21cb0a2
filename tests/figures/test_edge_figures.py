"""No figure fails on an edge value: every published figure of a run of edge values draws, in
the figure files, the HTML report and the Markdown write-up."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.core.figures.plot_data import Omitted, published_figures
from nvfp4_tui.output.figures.inputs import figure_inputs
from nvfp4_tui.store.reader import open_snapshot

from .edge_run import edge_snapshot

pytest.importorskip("matplotlib")


@pytest.mark.slow  # draws every figure: 20-40 s on a busy box
def test_every_figure_of_an_edge_run_draws_as_files(tmp_path: Path, capsys) -> None:
    snapshot = edge_snapshot(tmp_path / "snapshots")
    drawable = [
        f.name
        for f in published_figures(figure_inputs(open_snapshot(snapshot)))
        if not isinstance(f, Omitted)
    ]
    assert {"quality", "benchmarks", "pareto"} <= set(drawable)
    out = tmp_path / "figures"
    assert main(["export", str(snapshot), "--format", "figures", "--out", str(out)]) == 0
    written = {Path(p).name for p in capsys.readouterr().out.split()}
    assert written == {f"{n}.{fmt}" for n in drawable for fmt in ("png", "svg")}


@pytest.mark.slow  # draws every figure twice
def test_an_edge_run_publishes_as_html_and_markdown(tmp_path: Path, capsys) -> None:
    snapshot = edge_snapshot(tmp_path / "snapshots")
    assert main(["report", str(snapshot), "--format", "html"]) == 0
    html = capsys.readouterr().out
    assert "<img" in html and "<h2>Server view</h2>" in html
    assert "Errors: per endpoint and kind" in html and "enable-auto-tool-choice" in html
    figures = tmp_path / "docs"
    args = ["report", str(snapshot), "--format", "markdown", "--figures", str(figures)]
    assert main(args) == 0
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", capsys.readouterr().out)
    assert links and all(Path(link).is_file() for link in links)

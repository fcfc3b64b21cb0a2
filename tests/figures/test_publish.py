"""The commands that publish a run: `export --format figures` (PNG and SVG files), `report
--format html` (one self-contained file) and `report --format markdown --figures DIR`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.figures.plot_data import ADDED_FIGURES, SEED_FIGURES, published_figures
from nvfp4_tui.output.figures import INSTALL_HINT
from nvfp4_tui.output.figures.inputs import figure_inputs
from nvfp4_tui.store.reader import open_snapshot

from .published_run import HOSTILE_LABEL, published_snapshot
from .test_seed_figures import SEED_FILE

pytest.importorskip("matplotlib")

EXTERNAL = re.compile(r"^\s*(https?:|//|ftp:|file:)", re.IGNORECASE)
CSS_URL = re.compile(r"url\(|@import", re.IGNORECASE)


class _References(HTMLParser):
    """Every tag and every attribute that could make a browser fetch something."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in_style = tag == "style"
        for name, value in attrs:
            if name in ("src", "href", "srcset", "poster", "data", "action") and value:
                self.urls.append(value)
            if name == "style" and value:
                self.styles.append(value)

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        (self.styles if self._in_style else self.text).append(data)


def _parsed(text: str) -> _References:
    refs = _References()
    refs.feed(text)
    return refs


def assert_self_contained(text: str) -> _References:
    refs = _parsed(text)
    assert not {"script", "link", "iframe", "object", "embed", "base"} & set(refs.tags)
    assert refs.urls and all(u.startswith("data:image/png;base64,") for u in refs.urls)
    assert not [u for u in refs.urls if EXTERNAL.match(u)]
    assert not [s for s in refs.styles if CSS_URL.search(s)]
    return refs


@pytest.mark.slow  # draws 11 figures twice: about 7 s
def test_export_figures_writes_png_and_svg_of_each_figure(tmp_path: Path, capsys) -> None:
    snapshot = published_snapshot(tmp_path / "snapshots")
    out = tmp_path / "figures"
    assert main(["export", str(snapshot), "--format", "figures", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.split()
    names = tuple(n for n in SEED_FIGURES + ADDED_FIGURES if n != "benchmarks")  # none run
    assert sorted(Path(p).name for p in printed) == sorted(
        f"{n}.{fmt}" for n in names for fmt in ("png", "svg")
    )
    for name in names:
        assert (out / f"{name}.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
        svg = ElementTree.parse(out / f"{name}.svg").getroot()
        refs = [
            v
            for element in svg.iter()
            for k, v in element.attrib.items()
            if k.endswith("href") and not v.startswith("#")
        ]
        assert refs == [], name  # text as outlines, nothing fetched


@pytest.mark.slow  # draws the seed's figures for the files and again for the HTML
def test_the_seeds_results_publish_as_figures_and_an_html_report(tmp_path: Path, capsys) -> None:
    if not SEED_FILE.exists():
        pytest.skip("the seed's results are not here")
    snapshot = tmp_path / "seed"
    assert main(["import", str(SEED_FILE), "--out", str(snapshot)]) == 0
    capsys.readouterr()
    out = tmp_path / "figures"
    assert main(["export", str(snapshot), "--format", "figures", "--out", str(out)]) == 0
    written = capsys.readouterr()
    drawn = {Path(p).stem for p in written.out.split()}
    assert set(SEED_FIGURES) <= drawn and not {"ttft", "itl", "throughput_vs_load"} & drawn
    assert "left out: ttft: no time to first token" in written.err

    assert main(["report", str(snapshot), "--format", "html"]) == 0
    text = capsys.readouterr().out
    shown = " ".join(assert_self_contained(text).text)
    models = json.loads(SEED_FILE.read_text(encoding="utf-8"))["metadata"]["models"]
    assert len(models) == 6 and all(m["name"] in shown for m in models.values())
    assert "Too thin to recommend" in shown and "What this run cannot show" in shown


@pytest.mark.slow  # draws 11 figures
def test_html_report_is_self_contained_and_names_every_model(tmp_path: Path, capsys) -> None:
    snapshot = published_snapshot(tmp_path / "snapshots", fast_label=HOSTILE_LABEL)
    assert main(["report", str(snapshot), "--format", "html"]) == 0
    text = capsys.readouterr().out
    refs = assert_self_contained(text)
    assert text.count("<img") == len(SEED_FIGURES + ADDED_FIGURES) - 1  # no benchmark
    shown = " ".join(refs.text)
    # The hostile label is shown, escaped, without its escape sequence; nothing it holds runs.
    assert 'Fast $x^{$ <script>alert("x")</script> MoE' in shown and "Slow Dense" in shown
    assert "<script" not in text and "\x1b" not in text
    for heading in ("Run", "Lineup", "Quality", "Fleet recommendation", "Method"):
        assert f"<h2>{heading}</h2>" in text
    assert "GPU 0: Fast" in shown and "— coding" in shown  # the computed recommendation


@pytest.mark.slow  # draws 11 figures twice
def test_markdown_writeup_links_the_figures_it_writes(tmp_path: Path, capsys) -> None:
    snapshot = published_snapshot(tmp_path / "snapshots")
    figures = tmp_path / "docs" / "figures"
    args = ["report", str(snapshot), "--format", "markdown", "--figures", str(figures)]
    assert main(args) == 0
    text = capsys.readouterr().out
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(links) == len(SEED_FIGURES + ADDED_FIGURES) - 1  # no benchmark
    assert all(Path(link).is_file() for link in links)
    assert "## Fleet recommendation" in text and "Fast MoE" in text and "Slow Dense" in text


def test_a_figure_draws_the_same_bytes_every_time_with_nothing_to_fetch(tmp_path: Path) -> None:
    from nvfp4_tui.output.figures.draw import image_bytes

    snapshot = published_snapshot(tmp_path / "snapshots", fast_label=HOSTILE_LABEL)
    inputs = figure_inputs(open_snapshot(snapshot))
    [pareto] = [f for f in published_figures(inputs) if f.name == "pareto"]
    svg = image_bytes(pareto, "svg")
    assert svg == image_bytes(pareto, "svg")
    root = ElementTree.fromstring(svg)
    hrefs = [v for e in root.iter() for k, v in e.attrib.items() if k.endswith("href")]
    assert all(v.startswith("#") for v in hrefs)
    assert image_bytes(pareto, "png").startswith(b"\x89PNG\r\n\x1a\n")


def test_figures_flag_goes_with_markdown_only(tmp_path: Path, capsys) -> None:
    snapshot = published_snapshot(tmp_path / "snapshots")
    args = ["report", str(snapshot), "--format", "text", "--figures", str(tmp_path)]
    assert main(args) == exit_codes.USAGE
    assert "--figures goes with --format markdown" in capsys.readouterr().err


def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("command", ["export", "html"])
def test_without_matplotlib_the_command_says_how_to_install_it(
    tmp_path: Path, command: str
) -> None:
    snapshot = str(published_snapshot(tmp_path / "snapshots"))
    args = (
        ["export", snapshot, "--format", "figures", "--out", str(tmp_path / "out")]
        if command == "export"
        else ["report", snapshot, "--format", "html"]
    )
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"  # an import of it now fails
        "from nvfp4_tui.cli import main\n"
        f"sys.exit(main({args!r}))"
    )
    done = _run_python(code)
    assert done.returncode == exit_codes.USAGE
    assert done.stderr.strip().splitlines() == [INSTALL_HINT] and done.stdout == ""
    assert "pip install 'nvfp4-tui[figures]'" in INSTALL_HINT


def test_the_text_report_and_the_monitor_never_load_matplotlib(tmp_path: Path) -> None:
    snapshot = published_snapshot(tmp_path / "snapshots")
    code = (
        "import sys, contextlib, io\n"
        "from nvfp4_tui.cli import main\n"
        "import nvfp4_tui.output.writeup, nvfp4_tui.output.export, nvfp4_tui.launch.run\n"
        "import nvfp4_tui.tui.app\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['report', {str(snapshot)!r}]) == 0\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib was loaded'\n"
    )
    done = _run_python(code)
    assert done.returncode == 0, done.stderr


def test_throughput_lines_are_named_at_their_ends(tmp_path: Path) -> None:
    """Lines that lie on top of each other are told apart by the name at each one's end, in
    its colour, not by their values alone."""
    # Here, not at the top: the drawing module needs matplotlib, which this module may skip.
    from nvfp4_tui.core.figures.plot_data import ScalingLines
    from nvfp4_tui.core.series_colours import series_hex
    from nvfp4_tui.output.figures.draw import scaling_lines

    inputs = figure_inputs(open_snapshot(published_snapshot(tmp_path)))
    (data,) = [f for f in published_figures(inputs) if isinstance(f, ScalingLines)]
    (ax,) = scaling_lines(data).axes
    ends = {t.get_text(): t.get_color() for t in ax.texts}
    assert len(ends) == len(data.series)
    for series in data.series:
        (text,) = [t for t in ends if t.startswith(series.label)]
        assert text.rsplit("  ", 1)[1].isdigit()  # its last value after the name
        assert ends[text].lower() == series_hex(series.colour_index).lower()

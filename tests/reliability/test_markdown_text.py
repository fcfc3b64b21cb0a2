"""Text from outside in Markdown output is shown as its characters: a `/v1/models` root or an
endpoint label that holds Markdown becomes no link, image, emphasis or HTML in any writer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.output.tables import markdown_line
from tests.figures.published_run import published_events
from tests.support.factories import start_snapshot

HOSTILE = (
    "![pixel](https://evil.example/track.png?run=1) [click me](https://evil.example/phish) "
    "**bold** <img src=x> `x` ~~s~~ &#x202E; | www.evil.example"
)
UNESCAPED = re.compile(r"(?<!\\)(\]\(|\*\*|<img|~~|`|&#)")


def _snapshot(root: Path, model_root: str) -> Path:
    """The published run with the fast endpoint labelled, and its server's root, ``HOSTILE``."""
    events = published_events(fast_label=HOSTILE)
    config = {"fast": {"label": HOSTILE, "gpu": 0, "model_root": model_root}}
    writer = start_snapshot(root, "published", events)
    writer.update_manifest({"configuration": config})  # what the run's probe of /v1/models keeps
    writer.close("complete")
    return writer.path


def _assert_inert(text: str) -> None:
    assert "evil.example" in text  # shown, as text
    assert not UNESCAPED.findall(text)
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)
    assert not re.findall(r"<(?:a|img|strong|code|s|del)\b", html)
    assert "&amp;#x202E;" in html  # the entity shown as written, not as U+202E


def test_markdown_line_escapes_inline_and_block_markup() -> None:
    assert markdown_line("[a](http://x) **b**") == r"\[a\](http\://x) \*\*b\*\*"
    assert [markdown_line(t) for t in ("- x", "1. x", "# x", "---", "-3.5", "+2.0%")] == [
        r"\- x",
        r"1\. x",
        r"\# x",
        r"\---",
        "-3.5",
        "+2.0%",
    ]


def test_report_export_and_compare_markdown_show_a_hostile_root_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _snapshot(tmp_path / "a", HOSTILE)
    b = _snapshot(tmp_path / "b", HOSTILE + " v2")  # a configuration change that quotes it
    assert main(["report", str(a), "--format", "markdown"]) == 0
    report = capsys.readouterr().out
    assert main(["export", str(a), "--format", "markdown", "--out", str(tmp_path / "r.md")]) == 0
    assert main(["compare", str(a), str(b), "--format", "markdown"]) == 0
    compared = capsys.readouterr().out
    assert "Configuration changed:" in compared
    for text in (report, (tmp_path / "r.md").read_text(), compared):
        _assert_inert(text)


@pytest.mark.slow  # draws 11 figures
def test_the_markdown_writeup_shows_a_hostile_root_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    snapshot = _snapshot(tmp_path / "s", HOSTILE)
    figures = tmp_path / "figures"
    assert main(["report", str(snapshot), "--format", "markdown", "--figures", str(figures)]) == 0
    text = capsys.readouterr().out
    # The write-up's own figure links stay; none of the outside text's does.
    links = re.findall(r"(?<!\\)!\[[^\]]*\]\(([^)]+)\)", text)
    assert links and all(Path(link).is_file() for link in links)
    _assert_inert(re.sub(r"(?<!\\)!\[[^\]]*\]\([^)]+\)", "", text))

"""Model text made safe: escapes and controls removed, markup-looking text kept as it is."""

from __future__ import annotations

import pytest

from nvfp4_tui.core.plain_text import one_line, plain_text
from nvfp4_tui.tui import units


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\x1b[31mred\x1b[0m b", "ared b"),
        ("x\x1b]8;;http://evil\x07link\x1b]8;;\x07y", "xlinky"),  # OSC 8 hyperlink
        ("\x1b]0;new title\x1b\\ok", "ok"),  # terminal title, ended by ST
        ("a\x1b(Bb\x1bcc", "abc"),  # charset designation, full reset
        ("bell\x07 nul\x00 del\x7f", "bell nul del"),
        ("c1 \x9b31mcsi", "c1 csi"),
        ("\x1bP1$r\x1b\\dcs", "dcs"),
        ("trailing escape \x1b", "trailing escape "),
        ("[bold]not markup[/bold] $var {x}", "[bold]not markup[/bold] $var {x}"),
        ("tab\tand\r\nnewlines\rkept", "tab\tand\nnewlines\nkept"),
        ("日本語のテキスト", "日本語のテキスト"),
        (None, ""),
    ],
)
def test_plain_text(raw: str | None, shown: str) -> None:
    assert plain_text(raw) == shown


def test_one_line() -> None:
    assert one_line("HTTP 400:\n  bad\ttool\x1b[0m") == "HTTP 400: bad tool"


def test_units() -> None:
    assert units.tps(None) == "—"
    assert units.tps(143.94) == "143.9"
    assert units.tps(1234.5) == "1234"
    # In a column with a value past 1000, every value drops its decimal: they align.
    assert units.tps(935.64, [2711.0, 935.64, None]) == "936"
    assert units.seconds_as_ms(0.1414) == "141 ms"
    assert units.seconds_as_ms(12.0) == "12.0 s"
    assert units.clock(110) == "1:50"
    assert units.clock(3725) == "1:02:05"
    assert units.mib(92316) == "92,316"
    assert units.score_ci(0.0412) == "±.04"
    assert units.score_ci(None) == ""
    assert units.relative(144 / 130) == "+11%"
    assert units.relative(54 / 130) == "-58%"
    assert units.relative(144 / 54) == "2.7×"
    assert units.relative(1.0) == "±0%"

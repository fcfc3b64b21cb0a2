"""HelpScreen: every key of every screen, once each, and what the screens' abbreviations mean."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, VerticalScroll
from textual.content import Content
from textual.events import Resize
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widget import Widget

from nvfp4_tui.tui.bindings import key_label

KEY_W = 14  # the widest key label ("esc / q / ?") and a gap
SIDE_BY_SIDE_W = 140  # the terminal's width from which keys and abbreviations sit side by side

MOUSE_AND_PALETTE = (
    ("click", "open a pane's or a row's detail"),
    ("tab / ↑↓←→", "move between panes (in a replay ←→ seek; tab and ↑↓ still move)"),
    ("ctrl+p", "command palette: every action, and each endpoint's detail"),
    ("ctrl+q", "quit (asks first while a run is going)"),
)

# Every abbreviation or sign the screens use, in the order a reader meets them.
ABBREVIATIONS = (
    ("tok/s", "tokens per second; decode: one stream's rate after its first token"),
    ("pooled", "decode: every request's tokens after the first over their seconds decoding"),
    ("c=4, c4", "concurrency: requests kept in flight at once; 2 req/s: an arrival rate"),
    ("TTFT", "time to first token, from sending to the first streamed token"),
    ("ITL", "inter-token latency: the gap between two tokens of one answer"),
    ("TPOT", "time per output token after the first: (e2e − TTFT) / (tokens − 1)"),
    ("TT 2nd token", "time to second token: from sending to the chunk that brought it"),
    ("e2e", "end to end: from sending a request to its last token"),
    ("p50, p95", "median and 95th percentile of the requests at the level named"),
    ("!4576", "a request decoding over 10× its level's median: a burst, not a speed"),
    ("VRAM", "GPU memory used / total, and its share"),
    ("util, W", "GPU utilisation and power draw"),
    ("KV", "the server's key-value cache: the share of its blocks in use"),
    ("run, wait", "requests the server runs, and holds waiting for a slot"),
    ("peak", "a finished endpoint's highest KV, running and waiting of the run"),
    ("0.78 ±.23 6", "mean quality score 0-1, ± half its 95% Wilson interval, n answers"),
    ("SLO", "service-level objective: latency targets; met: the share within them"),
    ("goodput", "requests per second that met the SLO"),
    ("MoE 3B/256E", "mixture of experts: 3B parameters active of 256 experts; Dense: all"),
    ("knee, ◆", "the load beyond which throughput stops growing with it"),
    ("Pareto", "endpoints no other beats on both quality and speed"),
    ("STALE", "telemetry older than a few seconds: the last value, greyed"),
    ("● ✓ ✗ ‖ ○", "running, done, down or failed, paused, waiting (an endpoint or the run)"),
    ("▶ ‖ ■", "a replay playing, paused, at its end; x5: its speed"),
    ("×20", "a simulator run faster than real time: every speed reads 20 times the GPU's"),
    ("▆█▇·", "compact quality: a bar per suite, in the suites' order, as high as its score"),
    ("⚠ … late", "the client's own event loop lagged: timings may read that much late"),
    ("—", "not known yet, or not measured"),
)


def _shown(binding: BindingType) -> bool:
    # Arrow-key navigation is listed once, in MOUSE_AND_PALETTE, not per arrow.
    return isinstance(binding, Binding) and not (binding.id or "").startswith("pane-")


Line = tuple[str, str]  # (key, what) for a row; ("", title) for a section's title; ("", "")


def key_lines(
    sections: Iterable[tuple[str, Iterable[BindingType]]], keymap: Mapping[str, str] | None = None
) -> list[Line]:
    """The sections' keys, each action once: one met again in a later section (esc goes back
    from the detail and from the leaderboard) is left out there."""
    lines: list[Line] = []
    listed: set[tuple[str, str]] = set()
    for title, bindings in sections:
        rows = []
        for binding in bindings:
            if not _shown(binding):
                continue
            assert isinstance(binding, Binding)
            if (binding.key, binding.action) in listed:
                continue
            listed.add((binding.key, binding.action))
            rows.append((key_label(binding, keymap), binding.description))
        if rows:
            lines += [("", ""), ("", title), *rows]
    lines += [("", ""), ("", "Mouse and palette"), *MOUSE_AND_PALETTE]
    return lines[1:]


ABBREVIATION_LINES: list[Line] = [("", "What the screens' abbreviations mean"), *ABBREVIATIONS]


def hanging(lines: list[Line], width: int) -> list[Content]:
    """``lines`` laid out in ``width`` columns: keys in bold, titles in the accent colour, and a
    long explanation wrapped at word boundaries under its own column, never under the keys."""
    room = max(10, width - KEY_W - 2)
    out: list[Content] = []
    for key, what in lines:
        if not key:
            out.append(Content.styled(what, "bold $accent"))
            continue
        for index, part in enumerate(textwrap.wrap(what, room) or [""]):
            label = f"  {key}" if index == 0 else ""
            out.append(Content.assemble((label.ljust(KEY_W + 2), "bold"), part))
    return out


class KeyList(Widget):
    """The help's lines, wrapped to the width the dialog has."""

    DEFAULT_CSS = "KeyList { height: auto; }"

    def __init__(self, lines: list[Line], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines = lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(hanging(self.lines, width))

    def render(self) -> Content:
        return Content("\n").join(hanging(self.lines, self.size.width))


class HelpScreen(ModalScreen[None]):
    """Lists the keys; any of escape, q or ? closes it."""

    CSS_PATH = "modals.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close", id="close-help")
    ]

    def __init__(
        self,
        sections: Iterable[tuple[str, Iterable[BindingType]]],
        keymap: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.sections = tuple(sections)
        self.keymap = keymap

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body") as body:
            body.border_title = "Keys"
            body.border_subtitle = "↑↓ scroll · esc closes"
            with Container(id="help-columns"):
                yield KeyList(key_lines(self.sections, self.keymap), id="keys")
                yield KeyList(ABBREVIATION_LINES, id="abbreviations")

    def on_resize(self, event: Resize) -> None:
        # Side by side where the terminal is wide enough for both: all of it at a glance.
        wide = event.size.width >= SIDE_BY_SIDE_W
        self.set_class(wide, "-wide")

    def action_close(self) -> None:
        self.dismiss(None)

"""HelpScreen: every key of every screen, each with its binding id."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from nvfp4_tui.tui.bindings import key_label

MOUSE_AND_PALETTE = (
    ("click", "open a pane's detail"),
    ("tab / ←→↑↓", "move between panes (in a replay ←→ seek; tab, ↑↓ move)"),
    ("ctrl+p", "command palette: every action, and each endpoint's detail"),
    ("ctrl+q", "quit (asks first while a run is going)"),
)


def _shown(binding: BindingType) -> bool:
    # Arrow-key navigation is listed once, in MOUSE_AND_PALETTE, not per arrow.
    return isinstance(binding, Binding) and not (binding.id or "").startswith("pane-")


def key_table(sections: Iterable[tuple[str, Iterable[BindingType]]]) -> Content:
    lines: list[Content] = []
    for title, bindings in sections:
        rows = [b for b in bindings if _shown(b)]
        if not rows:
            continue
        if lines:
            lines.append(Content(""))
        lines.append(Content.styled(title, "bold $accent"))
        for binding in rows:
            assert isinstance(binding, Binding)
            lines.append(
                Content.assemble(
                    (f"  {key_label(binding):<12}", "bold"),
                    f"{binding.description:<22}",
                    (f"id {binding.id}" if binding.id else "", "$text-muted"),
                )
            )
    lines.append(Content(""))
    lines.append(Content.styled("Mouse and palette", "bold $accent"))
    for key, what in MOUSE_AND_PALETTE:
        lines.append(Content.assemble((f"  {key:<12}", "bold"), what))
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    """Lists the keys; any of escape, q or ? closes it."""

    CSS_PATH = "modals.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close", id="close-help")
    ]

    def __init__(self, sections: Iterable[tuple[str, Iterable[BindingType]]]) -> None:
        super().__init__()
        self.sections = tuple(sections)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body") as body:
            body.border_title = "Keys"
            body.border_subtitle = "esc closes"
            yield Static(key_table(self.sections), id="keys")

    def action_close(self) -> None:
        self.dismiss(None)

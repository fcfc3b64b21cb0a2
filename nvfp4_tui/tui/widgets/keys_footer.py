"""KeysFooter: the screen's keys on one line, drawn by one widget.

Textual's Footer is a container of a widget per key, composed anew whenever the bindings change:
on every screen switch. Mounting and styling those widgets was about half of what a switch cost
(Pilot, 160x48), so this footer draws the same line itself and only re-renders when the
bindings change. It lists the screen's keys from its first frame, leaves out whole entries (never
half a word) when the line is too narrow, keeps the command palette's key on the right, and
turns a click on an entry into its key press, as Textual's does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget


@dataclass(frozen=True)
class _Entry:
    key: str
    display: str
    description: str
    enabled: bool

    @property
    def width(self) -> int:
        # " key " then "description " (the description's own trailing space)
        return len(self.display) + 2 + (len(self.description) + 1 if self.description else 0)


class KeysFooter(Widget):
    DEFAULT_CSS = """
    KeysFooter {
        dock: bottom;
        height: 1;
        background: $footer-background;
        color: $footer-foreground;
    }
    KeysFooter > .keys-footer--key {
        color: $footer-key-foreground;
        background: $footer-key-background;
        text-style: bold;
    }
    KeysFooter > .keys-footer--description {
        color: $footer-description-foreground;
        background: $footer-description-background;
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"keys-footer--key", "keys-footer--description"}

    def __init__(self) -> None:
        super().__init__()
        # Where each entry was drawn, as (first column, past the last, key), for clicks.
        self._spans: list[tuple[int, int, str]] = []

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        if screen is self.screen:
            self.refresh()

    def _entries(self) -> tuple[list[_Entry], _Entry | None]:
        """The screen's shown keys, one per action, and the command palette's apart."""
        app = self.app
        shown: dict[str, _Entry] = {}
        palette: _Entry | None = None
        for key, (_, binding, enabled, _tip) in self.screen.active_bindings.items():
            entry = _Entry(key, app.get_key_display(binding), binding.description, enabled)
            if key == app.COMMAND_PALETTE_BINDING and app.ENABLE_COMMAND_PALETTE:
                palette = entry
            elif binding.show and binding.action not in shown:
                shown[binding.action] = entry
        return list(shown.values()), palette

    def render(self) -> Text:
        entries, palette = self._entries()
        width = self.size.width
        room = width - (palette.width + 1 if palette else 0)
        key_style = self.get_component_rich_style("keys-footer--key")
        description_style = self.get_component_rich_style("keys-footer--description")
        line = Text(no_wrap=True, overflow="crop", end="")
        self._spans = []

        def add(entry: _Entry) -> None:
            start = line.cell_len
            dim = Style(dim=not entry.enabled)
            line.append(f" {entry.display} ", key_style + dim)
            if entry.description:
                line.append(f"{entry.description} ", description_style + dim)
            self._spans.append((start, line.cell_len, entry.key))

        for entry in entries:
            if line.cell_len + entry.width > room:
                break  # whole entries only: a cut description reads as another word
            add(entry)
        if palette is not None and palette.width <= width:
            line.append(" " * (width - line.cell_len - palette.width))
            add(palette)
        return line

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self._spans:
            if start <= event.x < end:
                event.stop()
                self.app.simulate_key(key)
                return

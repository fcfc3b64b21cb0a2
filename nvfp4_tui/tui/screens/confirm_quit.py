"""ConfirmQuitScreen: asks before quitting cancels a live run."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmQuitScreen(ModalScreen[bool]):
    """Dismisses with True to stop the run and quit, False to keep watching."""

    CSS_PATH = "modals.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "choose(True)", "Stop and quit", id="confirm-quit"),
        Binding("n,escape", "choose(False)", "Keep running", id="cancel-quit"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Stop the run and quit?", id="question")
            yield Static(
                "Requests in flight are cancelled; everything finished is already in the "
                "snapshot, which is closed as aborted.",
                id="explanation",
            )
            with Horizontal(id="buttons"):
                yield Button("Stop and quit  y", variant="error", id="stop")
                yield Button("Keep running  n", variant="primary", id="keep")

    def on_mount(self) -> None:
        self.query_one("#keep", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "stop")

    def action_choose(self, stop: bool) -> None:
        self.dismiss(stop)

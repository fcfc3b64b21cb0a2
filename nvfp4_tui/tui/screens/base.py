"""StateScreen: a screen that draws from the app's FleetState when the app asks it to."""

from __future__ import annotations

from typing import cast

from textual.screen import Screen

from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui.fleet_view import FleetView


class StateScreen(Screen):
    """The app's refresh timer calls ``show_state`` on the current screen only, when the state
    changed or the clock moved; screens underneath, and under a modal, are not drawn.

    Readiness is Textual's own, here and in every widget the screens draw: nothing is drawn
    before ``is_mounted`` (drawing earlier finds no widgets), and whatever mounts asks for a draw
    once it is.
    """

    @property
    def fleet_app(self) -> FleetView:
        return cast(FleetView, self.app)

    def show_state(self, state: FleetState, now: float) -> None:
        raise NotImplementedError

    def on_mount(self) -> None:
        # Its widgets are mounted before this handler runs (``is_mounted`` turns true after it):
        # draw at once, so that the first frame already shows the state.
        app = self.fleet_app
        self.show_state(app.state, app.clock())

    def on_screen_resume(self) -> None:
        # Back on top: draw at once rather than waiting for the next change.
        self.fleet_app.redraw()

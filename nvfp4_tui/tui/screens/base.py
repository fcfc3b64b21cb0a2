"""StateScreen: a screen that draws from the app's FleetState when the app asks it to."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.screen import Screen

from nvfp4_tui.core.state import FleetState

if TYPE_CHECKING:
    from nvfp4_tui.tui.app import FleetApp


class StateScreen(Screen):
    """The app's refresh timer calls ``show_state`` on the current screen only, when the state
    changed or the clock moved; screens underneath, and under a modal, are not drawn."""

    ready = False  # True once composed and mounted: drawing before that finds no widgets

    @property
    def fleet_app(self) -> FleetApp:
        return cast("FleetApp", self.app)

    def show_state(self, state: FleetState, now: float) -> None:
        raise NotImplementedError

    def on_mount(self) -> None:
        self.ready = True
        self.fleet_app.redraw()

    def on_screen_resume(self) -> None:
        # Back on top: draw at once rather than waiting for the next change.
        self.fleet_app.redraw()

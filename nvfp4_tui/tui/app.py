"""FleetApp: the Textual app that folds a source's events into a FleetState and draws it.

A worker reads the source's batches and applies them to the state, which is cheap and does not
draw. A timer at ``REFRESH_HZ`` asks the current screen to draw when the state changed or the
clock moved; screens compare what they would show with what they show and repaint only the
difference, so the redraw rate is bounded whatever the token rate.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from nvfp4_tui.sources.base import EventSource
from nvfp4_tui.state import FleetState
from nvfp4_tui.tui.commands import FleetCommands
from nvfp4_tui.tui.screens.base import StateScreen
from nvfp4_tui.tui.screens.confirm_quit import ConfirmQuitScreen
from nvfp4_tui.tui.screens.detail import DetailScreen
from nvfp4_tui.tui.screens.fleet import FleetScreen
from nvfp4_tui.tui.screens.help import HelpScreen
from nvfp4_tui.tui.screens.leaderboard import LeaderboardScreen

REFRESH_HZ = 8
CLOCK_TICKS_PER_S = 4  # time-only changes (elapsed, staleness, sparkline window) redraw this often


class FleetApp(App[int]):
    """The live monitor. ``clock`` gives "now" (Unix seconds); inject a fixed one for tests."""

    CSS_PATH = "app.tcss"
    TITLE = "nvfp4-tui"
    COMMANDS = App.COMMANDS | {FleetCommands}
    MODES: ClassVar[dict[str, Callable[[], Screen]]] = {
        "fleet": FleetScreen,
        "leaderboard": LeaderboardScreen,
    }
    DEFAULT_MODE = "fleet"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "request_quit", "Quit", id="quit"),
        Binding("p", "toggle_pause", "Pause/resume", id="pause"),
        Binding("l", "leaderboard", "Leaderboard", id="leaderboard"),
        Binding("g", "grid", "Grid", id="grid"),
        Binding("question_mark", "help", "Keys", key_display="?", id="help"),
    ]

    def __init__(
        self,
        source: EventSource,
        *,
        clock: Callable[[], float] = time.time,
        state: FleetState | None = None,
    ) -> None:
        super().__init__()
        self.source = source
        self.clock = clock
        self.state = state if state is not None else FleetState()
        self.paused = False
        self.source_ended = False
        self.source_error: str | None = None
        self._drawn: tuple[object, ...] | None = None
        self._stopping = False

    # ---- lifecycle

    def on_mount(self) -> None:
        self.consume_source()
        self.set_interval(1 / REFRESH_HZ, self._tick)

    @work(exclusive=True, group="source", exit_on_error=False)
    async def consume_source(self) -> None:
        """Fold the source's batches into the state; drawing is the timer's job."""
        try:
            async for batch in self.source.batches():
                self.state.apply_all(batch)
        except Exception as error:  # a broken source must not take the UI down with it
            self.source_error = f"{type(error).__name__}: {error}"
            self.notify(self.source_error, title="Event source failed", severity="error")
        finally:
            self.source_ended = True

    def _tick(self) -> None:
        if not self.screen_stack:  # starting up or shutting down
            return
        now = self.clock()
        key = (
            self.state.version,
            int(now * CLOCK_TICKS_PER_S),
            self.screen,
            self.paused,
            self.source_ended,
            self.theme,
        )
        if key != self._drawn:
            self._drawn = key
            self._draw(now)

    def _draw(self, now: float) -> None:
        screen = self.screen
        if isinstance(screen, StateScreen) and screen.ready:
            screen.show_state(self.state, now)

    def redraw(self) -> None:
        """Draw the current screen now (after a screen change, or for a screenshot)."""
        self._drawn = None
        self._draw(self.clock())

    @property
    def run_active(self) -> bool:
        """A live run still going: quitting would cancel it."""
        return (
            self.source.kind == "live" and self.state.status == "running" and not self.source_ended
        )

    # ---- actions

    def open_detail(self, endpoint_id: str) -> None:
        if endpoint_id in self.state.endpoints:
            self.push_screen(DetailScreen(endpoint_id))

    def action_grid(self) -> None:
        self.switch_mode("fleet")
        # Leave any detail screen so that "g" always lands on the grid itself.
        while isinstance(self.screen, DetailScreen):
            self.pop_screen()

    def action_leaderboard(self) -> None:
        self.switch_mode("leaderboard")

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            sections = (
                ("Everywhere", self.BINDINGS),
                ("Fleet grid", FleetScreen.BINDINGS),
                ("Detail", DetailScreen.BINDINGS),
                ("Leaderboard", LeaderboardScreen.BINDINGS),
                ("Quit dialog", ConfirmQuitScreen.BINDINGS),
                ("This help", HelpScreen.BINDINGS),
            )
            self.push_screen(HelpScreen(sections))

    async def action_toggle_pause(self) -> None:
        if self.source.kind != "live" or not self.run_active:
            self.notify("Nothing to pause: no live run is going.", severity="warning")
            return
        self.paused = not self.paused
        await self.source.command("pause" if self.paused else "resume")
        self.notify("New requests paused; those in flight finish." if self.paused else "Resumed.")

    async def action_request_quit(self) -> None:
        if self._stopping:
            return
        if not self.run_active:
            self.stop_and_exit()
            return

        def confirmed(stop: bool | None) -> None:
            if stop:
                self.stop_and_exit()

        self.push_screen(ConfirmQuitScreen(), confirmed)

    async def action_quit(self) -> None:
        # Ctrl+Q and the palette's Quit go through the same confirmation as "q".
        await self.action_request_quit()

    @work(exclusive=True, group="stop")
    async def stop_and_exit(self) -> None:
        """Stop the run (the source finalises its snapshot), then leave with exit code 0."""
        self._stopping = True
        if self.run_active:
            self.notify("Stopping the run and finishing its snapshot…", timeout=30)
        await self.source.close()
        self.exit(0)

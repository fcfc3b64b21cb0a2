"""FleetApp: the Textual app that folds a source's events into a FleetState and draws it.

A worker reads the source's batches and applies them to the state, which is cheap and does not
draw. A timer at ``REFRESH_HZ`` asks the current screen to draw when the state changed or the
clock moved; screens compare what they would show with what they show and repaint only the
difference, so the redraw rate is bounded whatever the token rate.

The same app shows a live run, a followed one and a replay: it offers what the source's
``capabilities`` name and shows what its ``status()`` tells, never asking which source it is. A
replay's backwards seek arrives as a ``ResetBatch``: the app folds it into a fresh FleetState and
bumps ``generation``, which screens put in their change keys, so nothing drawn from the old state
survives.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import ClassVar

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from nvfp4_tui.core.figures.scores import DEFAULT_SCORE, HEURISTIC, JUDGE, SCORE_LABELS, VERIFIED
from nvfp4_tui.core.plain_text import one_line, widget_id
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.sources.base import EventSource, Folded, ResetBatch
from nvfp4_tui.tui.bindings import GENERAL_BINDINGS, REPLAY_BINDINGS
from nvfp4_tui.tui.commands import FleetCommands
from nvfp4_tui.tui.readouts import next_score, shown_score
from nvfp4_tui.tui.screens.base import StateScreen
from nvfp4_tui.tui.screens.confirm_quit import ConfirmQuitScreen
from nvfp4_tui.tui.screens.detail import DetailScreen
from nvfp4_tui.tui.screens.fleet import FleetScreen
from nvfp4_tui.tui.screens.help import HelpScreen
from nvfp4_tui.tui.screens.leaderboard import LeaderboardScreen
from nvfp4_tui.tui.screens.statistics import StatisticsScreen
from nvfp4_tui.tui.screenshots import ScreenshotsHere
from nvfp4_tui.tui.source_status import (
    FollowReadout,
    ReplayReadout,
    follow_readout,
    replay_readout,
)

# Every frame costs the compositor a pass over all seven panes (about 10 ms here), whatever
# changed in it, so the screen draws at most this often; keys and screen changes draw at once.
REFRESH_HZ = 4
CLOCK_TICKS_PER_S = 1  # time-only changes (elapsed, staleness, sparkline window) redraw this often
MESSAGES_PER_TICK = 3  # a burst of run notes beyond this is counted, not shown one by one
# Textual's own palette entries that ours replace: "Quit" asks first while a run is going, and
# "Keys" lists this app's keys with the abbreviations of its screens.
REPLACED_SYSTEM_COMMANDS = frozenset({"Quit", "Keys"})
# A batch larger than this is folded on a thread (3-12 µs an event here), so a seek in a long
# replay never freezes the keys; the old state stays on screen until the new one is ready.
INLINE_REBUILD_EVENTS = 5_000

DETAILS_KEPT = 8  # detail screens kept built: a 7-GPU box's all, a big fleet's recent ones


class FleetApp(ScreenshotsHere[int]):
    """The monitor. ``clock`` gives "now" (Unix seconds), the source's unless a test fixes one."""

    CSS_PATH = "app.tcss"
    TITLE = "nvfp4-tui"
    COMMANDS = App.COMMANDS | {FleetCommands}
    MODES: ClassVar[dict[str, str | Callable[[], Screen]]] = {
        "fleet": FleetScreen,
        "leaderboard": LeaderboardScreen,
    }
    DEFAULT_MODE = "fleet"
    BINDINGS: ClassVar[list[BindingType]] = [*GENERAL_BINDINGS, *REPLAY_BINDINGS]

    def __init__(
        self,
        source: EventSource,
        *,
        clock: Callable[[], float] | None = None,
        state: FleetState | None = None,
        title: str | None = None,
        keymap: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.source = source
        # The user's keys by binding id (config.keymap), that the help and palette show too.
        self.user_keymap = dict(keymap or {})
        self.clock = clock or source.clock
        self.state = state if state is not None else FleetState()
        self.generation = 0  # bumped whenever ``state`` is replaced by a fresh one
        self.wanted_score = (
            DEFAULT_SCORE  # the quality score asked for; ``score_name`` is the one shown
        )
        self.paused = False
        self.source_ended = False
        self.source_error: str | None = None
        self._drawn: tuple[object, ...] | None = None
        self._stopping = False
        self._end_announced = False
        self._messages_shown = 0
        # Detail screens kept once built, most recently opened last: opening one again skips
        # composing its charts and tables, the larger part of what opening it costs.
        self._details: list[str] = []
        if title:
            self.title = title

    # ---- lifecycle

    def on_mount(self) -> None:
        if self.user_keymap:
            self.set_keymap(self.user_keymap)
        self.consume_source()
        self.set_interval(1 / REFRESH_HZ, self._tick)

    @work(exclusive=True, group="source", exit_on_error=False)
    async def consume_source(self) -> None:
        """Fold the source's batches into the state; drawing is the timer's job."""
        try:
            async for batch in self.source.batches():
                if isinstance(batch, ResetBatch):
                    await self._rebuild(batch)
                elif len(batch) > INLINE_REBUILD_EVENTS:
                    await self._advance(batch)
                else:
                    self.state.apply_all(batch)
                self._announce_end()
        except Exception as error:  # a broken source must not take the UI down with it
            self.source_error = f"{type(error).__name__}: {error}"
            self.notify(
                one_line(self.source_error),
                title="Event source failed",
                severity="error",
                markup=False,
            )
        finally:
            self.source_ended = True
        self._announce_end()

    async def _rebuild(self, events: Sequence[Folded]) -> None:
        """Replace the state by one folded from ``events`` (a replay's seek backwards)."""
        fresh = FleetState()
        if len(events) > INLINE_REBUILD_EVENTS:
            await asyncio.to_thread(fresh.apply_all, events)
        else:
            fresh.apply_all(events)
        self._swap(fresh)

    async def _advance(self, events: Sequence[Folded]) -> None:
        """Fold a large forward batch (a replay's jump ahead, a follower's first read) into a
        copy of the state on a thread: the views keep reading the old one meanwhile."""
        ahead = copy.deepcopy(self.state)
        await asyncio.to_thread(ahead.apply_all, events)
        self._swap(ahead)

    def _swap(self, state: FleetState) -> None:
        self.state = state
        self.generation += 1
        self.redraw()

    def _announce_end(self) -> None:
        """Say once when the run the source ends with completes or aborts, and why (a full disk,
        a lost terminal): nobody watches the header always. A run this monitor drives (quitting
        stops it) completes in front of its user: only its abort is said."""
        capabilities = self.source.capabilities
        if self._end_announced or not capabilities.ends_with_run:
            return
        status = self.end_status
        if capabilities.stops_run and status != "aborted":
            return
        if status == "complete":
            self.notify("The run completed; its snapshot is final. q quits.", timeout=10)
        elif status == "aborted":
            why = f": {one_line(self.state.finish_message)}" if self.state.finish_message else ""
            self.notify(f"The run was aborted{why}.", severity="error", timeout=10, markup=False)
        else:
            return
        self._end_announced = True

    @property
    def end_status(self) -> str | None:
        """``complete`` or ``aborted`` once the run has ended, by its events or its manifest."""
        if self.state.status in ("complete", "aborted"):
            return self.state.status
        follow = self.follow_readout()
        if follow is not None and follow.finished and follow.status in ("complete", "aborted"):
            return follow.status
        return None

    def replay_readout(self) -> ReplayReadout | None:
        return replay_readout(self.source.status())

    def follow_readout(self) -> FollowReadout | None:
        return follow_readout(self.source.status())

    @property
    def score_name(self) -> str:
        """The quality score the views show: the one asked for, unless the run lacks it."""
        return shown_score(self.state, self.wanted_score)

    def _show_source_messages(self) -> None:
        """The run's own notes (a TLS check turned off, a snapshot write that failed), at once."""
        messages = self.source.messages
        if len(messages) <= self._messages_shown:
            return
        fresh = messages[self._messages_shown :]
        self._messages_shown = len(messages)
        for message in fresh[:MESSAGES_PER_TICK]:
            self.notify(
                one_line(message), title="Run", severity="warning", timeout=15, markup=False
            )
        if len(fresh) > MESSAGES_PER_TICK:
            more = len(fresh) - MESSAGES_PER_TICK
            self.notify(f"{more} more; all are printed when the monitor exits", title="Run")

    def _tick(self) -> None:
        if not self.screen_stack:  # starting up or shutting down
            return
        self._show_source_messages()
        now = self.clock()
        key = (
            self.generation,
            self.state.version,
            int(now * CLOCK_TICKS_PER_S),
            self.screen,
            self.paused,
            self.source_ended,
            self.theme,
            self.wanted_score,
            self.replay_readout(),
            self.follow_readout(),
        )
        if key != self._drawn:
            self._drawn = key
            self._draw(now)

    def _draw(self, now: float) -> None:
        if not self.is_running:  # shutting down: screens are losing their widgets
            return
        screen = self.screen
        if isinstance(screen, StateScreen) and screen.is_mounted:
            screen.show_state(self.state, now)

    def redraw(self) -> None:
        """Draw the current screen now (after a screen change, or for a screenshot)."""
        self._drawn = None
        self._draw(self.clock())

    @property
    def run_active(self) -> bool:
        """A run going that quitting would stop."""
        return (
            self.source.capabilities.stops_run
            and self.state.status == "running"
            and not self.source_ended
        )

    # ---- actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "replay":
            return self.source.capabilities.playback
        if action == "toggle_pause":
            return self.source.capabilities.pause_sending
        return True

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title not in REPLACED_SYSTEM_COMMANDS:
                yield command

    def open_detail(self, endpoint_id: str) -> None:
        if endpoint_id in self.state.endpoints:
            self.push_screen(self._detail_screen(endpoint_id))

    def _detail_screen(self, endpoint_id: str) -> str:
        """The installed detail screen of ``endpoint_id`` (installed now if it was not), by name;
        beyond ``DETAILS_KEPT`` the longest unopened one that is not showing is let go."""
        name = widget_id("detail", endpoint_id)
        if name in self._details:
            self._details.remove(name)
        else:
            self.install_screen(DetailScreen(endpoint_id), name)
        self._details.append(name)
        for old in self._details[:-DETAILS_KEPT]:
            if self.get_screen(old) not in self.screen_stack:
                self.uninstall_screen(old)
                self._details.remove(old)
        return name

    def action_grid(self) -> None:
        self.switch_mode("fleet")
        # Leave any detail screen so that "g" always lands on the grid itself.
        while isinstance(self.screen, (DetailScreen, StatisticsScreen)):
            self.pop_screen()

    def action_leaderboard(self) -> None:
        self.switch_mode("leaderboard")

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            sections = help_sections(self.source.capabilities.playback)
            self.push_screen(HelpScreen(sections, self.user_keymap))

    async def action_toggle_pause(self) -> None:
        if not (self.source.capabilities.pause_sending and self.run_active):
            self.notify("Nothing to pause: no live run is going.", severity="warning")
            return
        self.paused = not self.paused
        await self.source.command("pause" if self.paused else "resume")
        self.notify("New requests paused; those in flight finish." if self.paused else "Resumed.")

    async def action_replay(self, command: str) -> None:
        """Send a replay command (toggle, faster, slower, seek:±S, home, end) and show its effect."""
        await self.source.command(command)
        self.redraw()

    def action_toggle_scores(self) -> None:
        wanted = next_score(self.state, self.score_name)
        if wanted is None:
            self.notify("This run has no verified scores: showing heuristic ones.")
            return
        self.wanted_score = wanted
        what = {
            VERIFIED: "answers checked: tests run, numbers compared, schemas validated",
            HEURISTIC: "the seed's text heuristic, comparable with its tables",
            JUDGE: "an LLM judge's grade against the suite's rubric",
        }[wanted]
        self.notify(f"Quality shown: {SCORE_LABELS[wanted]} scores ({what}).")
        self.redraw()

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


def help_sections(playback: bool) -> tuple[tuple[str, list[BindingType]], ...]:
    """Every screen's keys, as the Keys screen lists them."""
    replay = "Replay" if playback else "Replay (replays only)"
    return (
        ("Everywhere", list(GENERAL_BINDINGS)),
        (replay, list(REPLAY_BINDINGS)),
        ("Fleet: grid, compact and table views", FleetScreen.BINDINGS),
        ("Detail", DetailScreen.BINDINGS),
        ("Statistics (from the detail)", StatisticsScreen.BINDINGS),
        ("Leaderboard", LeaderboardScreen.BINDINGS),
        ("Quit dialog", ConfirmQuitScreen.BINDINGS),
        ("This help", HelpScreen.BINDINGS),
    )


def binding_ids() -> frozenset[str]:
    """The id of every binding the monitor has: what a user's keymap may name."""
    return frozenset(
        b.id
        for _, bindings in help_sections(playback=True)
        for b in bindings
        if isinstance(b, Binding) and b.id
    )

"""FleetScreen: the default view, the run header over a grid of one GpuPane per endpoint.

The grid's shape follows the terminal: as few rows as let every pane keep ``PANE_MIN_W`` columns
(4+3 at 160 columns, one row of seven at 240), rows stretched to fill the height when they fit
and fixed at the height the panes need (``pane_height``: 17 rows for six suites; scrolling) when
they do not.
"""

from __future__ import annotations

import contextlib
import math
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid
from textual.css.query import NoMatches
from textual.events import Resize
from textual.geometry import Size
from textual.widget import AwaitMount
from textual.widgets import Footer

from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui.screens.base import StateScreen
from nvfp4_tui.tui.widgets.gpu_pane import GpuPane, pane_height, pane_readout
from nvfp4_tui.tui.widgets.run_header import RunHeader, run_readout

PANE_MIN_W = 28
PANE_MIN_H = 17  # six suites, no SLO line; ``pane_height`` tells the panes of a given run
HEADER_H = 2
FOOTER_H = 1
# A pane's time-dependent parts (sparkline window, staleness) move with whole seconds.
READOUT_HZ = 1


def grid_shape(count: int, width: int) -> tuple[int, int]:
    """(columns, rows) for ``count`` panes in ``width`` columns: the fewest rows that fit."""
    if count <= 0:
        return 1, 1
    for rows in range(1, count + 1):
        columns = math.ceil(count / rows)
        if width // columns >= PANE_MIN_W:
            return columns, math.ceil(count / columns)
    return 1, count


class FleetScreen(StateScreen):
    CSS_PATH = "fleet.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_detail", "Detail", id="detail"),
        Binding("left", "move(-1, 0)", "Previous pane", show=False, id="pane-left"),
        Binding("right", "move(1, 0)", "Next pane", show=False, id="pane-right"),
        Binding("up", "move(0, -1)", "Pane above", show=False, id="pane-up"),
        Binding("down", "move(0, 1)", "Pane below", show=False, id="pane-down"),
    ]

    def __init__(self) -> None:
        super().__init__(id="fleet")
        self._pane_ids: tuple[str, ...] = ()
        self._columns = 1
        self._pane_h = PANE_MIN_H
        self._seen: dict[str, tuple[object, ...]] = {}
        self._pane_list: list[GpuPane] = []
        self._header = RunHeader()

    def compose(self) -> ComposeResult:
        yield self._header
        yield Grid(id="grid")
        yield Footer()

    # ---- layout

    def on_resize(self, event: Resize) -> None:
        self._reflow(event.size)

    def _reflow(self, size: Size) -> None:
        columns, rows = grid_shape(len(self._pane_ids), size.width)
        self._columns = columns
        grid = self.query_one("#grid", Grid)
        grid.styles.grid_size_columns = columns
        room = size.height - HEADER_H
        fits_with_footer = (room - FOOTER_H) // rows >= self._pane_h
        fits = room // rows >= self._pane_h
        # The footer gives way when it alone would push the panes into scrolling.
        self.query_one(Footer).display = fits_with_footer or not fits
        grid.styles.grid_rows = "1fr" if fits else str(self._pane_h)

    def _ensure_panes(self, state: FleetState) -> None:
        ids = tuple(state.endpoints)
        if ids == self._pane_ids:
            return
        self._pane_ids = ids
        self._seen.clear()
        self._pane_h = max((pane_height(e) for e in state.endpoints.values()), default=PANE_MIN_H)
        panes = [GpuPane(endpoint) for endpoint in state.endpoints.values()]
        # Kept, not queried: a query walks the whole screen, and drawing runs several times a second.
        self._pane_list = panes
        grid = self.query_one("#grid", Grid)
        if grid.children:
            self._replace_panes(panes)
        else:
            self._draw_when_mounted(grid.mount_all(panes))
            self._reflow(self.size)

    @work(group="panes")
    async def _draw_when_mounted(self, mounting: AwaitMount) -> None:
        # New panes draw once mounted, even if nothing changes meanwhile.
        await mounting
        self.fleet_app.redraw()

    @work(exclusive=True, group="panes")
    async def _replace_panes(self, panes: list[GpuPane]) -> None:
        # Removal finishes before mounting: a replay that seeks back before the run started and
        # then plays on brings back panes with the ids of those just removed.
        grid = self.query_one("#grid", Grid)
        await grid.remove_children()
        await grid.mount_all(panes)
        if self.app.is_running and self.is_attached and grid.is_attached:
            with contextlib.suppress(NoMatches):  # the app closed while the panes mounted
                self._reflow(self.size)
                self.fleet_app.redraw()

    # ---- drawing

    def show_state(self, state: FleetState, now: float) -> None:
        self._ensure_panes(state)
        app = self.fleet_app
        self._header.show(
            run_readout(
                state,
                now,
                paused=app.paused,
                source_ended=app.source_ended,
                replay=app.replay_readout(),
                follow=app.follow_readout(),
            )
        )
        tick = int(now * READOUT_HZ)
        score_name = app.score_name
        # Once the run has ended its sparklines hold its last minute rather than run down to 0.
        spark_end_t = now if state.finished_t is None else min(now, state.finished_t)
        for pane in self._pane_list:
            endpoint = state.endpoints.get(pane.endpoint_id)
            if endpoint is None:
                continue
            gpu_samples = endpoint.gpu.samples if endpoint.gpu else 0
            key = (app.generation, endpoint.version, gpu_samples, tick, score_name)
            if self._seen.get(pane.endpoint_id) == key:
                continue
            if pane.show(pane_readout(endpoint, now, score_name, spark_end_t=spark_end_t)):
                self._seen[pane.endpoint_id] = key

    # ---- navigation

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # With playback, left and right seek (the app's bindings); tab and up/down still move.
        if action == "move" and parameters and parameters[0] != 0:
            return not self.fleet_app.source.capabilities.playback
        return True

    def on_gpu_pane_selected(self, message: GpuPane.Selected) -> None:
        self.fleet_app.open_detail(message.endpoint_id)

    def _panes(self) -> list[GpuPane]:
        return [pane for pane in self._pane_list if pane.is_mounted]

    def action_open_detail(self) -> None:
        panes = self._panes()
        focused = self.focused if isinstance(self.focused, GpuPane) else None
        target = focused or (panes[0] if panes else None)
        if target is not None:
            self.fleet_app.open_detail(target.endpoint_id)

    def action_move(self, dx: int, dy: int) -> None:
        panes = self._panes()
        if not panes:
            return
        current = panes.index(self.focused) if self.focused in panes else -1
        if current < 0:
            panes[0].focus()
            return
        row, column = divmod(current, self._columns)
        column += dx
        row += dy
        index = row * self._columns + column
        # Left and right stay within the row; up and down within the grid.
        if 0 <= column < self._columns and 0 <= index < len(panes):
            panes[index].focus()

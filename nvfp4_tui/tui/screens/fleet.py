"""FleetScreen: the default view, the run header over the fleet in one of three views.

- **grid**: one GpuPane per endpoint, and the fleet's totals in a spare cell. Its shape follows
  the terminal: of the shapes that keep every pane ``PANE_MIN_W`` columns wide and as tall as
  it needs (``pane_height``: 17 rows for six suites), the one with the best-proportioned panes
  (4+3 and the totals at 120×36, 160×48, 200×50 and 240×60), rows stretched to fill the
  height; where none is tall enough, the fewest rows, fixed at that height (scrolling).
- **compact**: one line per endpoint, for a terminal the grid does not fit (80×24).
- **table**: one line per endpoint grouped by node with each node's totals, sorted by a column
  (``s`` cycles it), for fleets larger than a grid.

Until the user picks one (``c``), the view is the grid when it fits, else the compact view for
a fleet on one node whose lines fit, else the table.
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

from nvfp4_tui.core.endpoint_state import EndpointState
from nvfp4_tui.core.figures.fleet import fleet_totals
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui.palette import cell_styles
from nvfp4_tui.tui.readouts import phase_text
from nvfp4_tui.tui.screens.base import StateScreen
from nvfp4_tui.tui.widgets.fleet_table import (
    NO_NODE,
    SORT_KEYS,
    EndpointLine,
    FleetTable,
    by_node,
)
from nvfp4_tui.tui.widgets.gpu_pane import GpuPane, pane_height, pane_readout
from nvfp4_tui.tui.widgets.keys_footer import KeysFooter
from nvfp4_tui.tui.widgets.run_header import RunHeader, run_readout
from nvfp4_tui.tui.widgets.totals_pane import TotalsPane

PANE_MIN_W = 28
PANE_MIN_H = 17  # six suites, no SLO line; ``pane_height`` tells the panes of a given run
# Columns per row of the best-shaped pane: a cell is about twice as tall as wide, so this is
# near square on screen, and leaves the bars their width and the readouts their lines.
PANE_ASPECT = 2.0
HEADER_H = 2
FOOTER_H = 1
TABLE_CHROME_H = 4  # a table's border (2), its header row and its totals row
# A pane's time-dependent parts (sparkline window, staleness) move with whole seconds.
READOUT_HZ = 1
VIEWS = ("grid", "compact", "table")


def auto_view(count: int, nodes: int, width: int, height: int, pane_h: int) -> str:
    """The view for ``count`` endpoints on ``nodes`` nodes in a ``width`` × ``height`` screen."""
    _, rows = grid_shape(count, width, height, pane_h)
    room = height - HEADER_H
    if room // rows >= pane_h:  # the footer gives way to the panes
        return "grid"
    if nodes <= 1 and count + TABLE_CHROME_H <= room - FOOTER_H:
        return "compact"
    return "table"


def grid_shape(count: int, width: int, height: int, pane_h: int) -> tuple[int, int]:
    """(columns, rows) for ``count`` panes in a ``width`` × ``height`` screen: of the shapes
    whose panes keep ``PANE_MIN_W`` columns and ``pane_h`` rows, the one whose panes are
    nearest ``PANE_ASPECT`` (at 200×50, 4×2 and the totals, not seven narrow walls in a row);
    where none keeps its rows (the grid scrolls), the fewest rows that keep the columns."""
    if count <= 0:
        return 1, 1
    room = height - HEADER_H
    shapes = [(math.ceil(count / rows), rows) for rows in range(1, count + 1)]
    wide_enough = [(c, math.ceil(count / c)) for c, _ in shapes if width // c >= PANE_MIN_W]
    fitting = [(c, r) for c, r in wide_enough if room // r >= pane_h]
    if fitting:
        return min(
            fitting, key=lambda s: abs(math.log((width / s[0]) / (room / s[1]) / PANE_ASPECT))
        )
    return wide_enough[0] if wide_enough else (1, count)


class FleetScreen(StateScreen):
    CSS_PATH = "fleet.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_detail", "Detail", id="detail"),
        Binding("c", "cycle_view", "Grid/compact/table", id="view"),
        Binding("s", "sort", "Sort table", id="sort"),
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
        self._totals = TotalsPane()
        self._compact = FleetTable(id="compact", table=False)
        self._table = FleetTable(id="table", table=True)
        self._compact.can_focus = self._table.can_focus = False  # until their view is shown
        self._chosen: str | None = None  # the view the user picked with "c"; None: automatic
        self.view = "grid"
        self._sort = 0  # index into SORT_KEYS
        self._node_count = 0
        self._lines_key: tuple[object, ...] | None = None

    def compose(self) -> ComposeResult:
        yield self._header
        yield Grid(id="grid")
        yield self._compact
        yield self._table
        yield KeysFooter()

    # ---- layout

    def on_resize(self, event: Resize) -> None:
        self._reflow(event.size)

    def _reflow(self, size: Size) -> None:
        count = len(self._pane_ids)
        auto = auto_view(count, self._node_count, size.width, size.height, self._pane_h)
        self._show_view(self._chosen or auto)
        columns, rows = grid_shape(count, size.width, size.height, self._pane_h)
        self._columns = columns
        grid = self.query_one("#grid", Grid)
        grid.styles.grid_size_columns = columns
        # The eighth cell of a 4×2 grid of seven panes holds the fleet's totals.
        self._totals.display = count % columns != 0
        room = size.height - HEADER_H
        fits_with_footer = (room - FOOTER_H) // rows >= self._pane_h
        fits = room // rows >= self._pane_h
        # In the grid, the footer gives way when it alone would push the panes into scrolling.
        footer = self.view != "grid" or fits_with_footer or not fits
        self.query_one(KeysFooter).display = footer
        grid.styles.grid_rows = "1fr" if fits else str(self._pane_h)

    def _show_view(self, view: str) -> None:
        if view == self.view:
            return
        self.view = view
        self.query_one("#grid", Grid).display = view == "grid"
        for table in (self._compact, self._table):
            shown = table.id == view
            table.display = shown
            # A hidden table must not take the focus (and the arrow keys) from the panes.
            table.can_focus = shown
        self._lines_key = None
        if view != "grid":
            self._shown_table().focus()
        self.refresh_bindings()  # "s" sorts only the table

    def _shown_table(self) -> FleetTable:
        return self._table if self.view == "table" else self._compact

    def _ensure_panes(self, state: FleetState) -> None:
        ids = tuple(state.endpoints)
        if ids == self._pane_ids:
            return
        self._pane_ids = ids
        self._node_count = len({e.info.node for e in state.endpoints.values()})
        self._seen.clear()
        self._pane_h = max((pane_height(e) for e in state.endpoints.values()), default=PANE_MIN_H)
        panes = [GpuPane(endpoint) for endpoint in state.endpoints.values()]
        # Kept, not queried: a query walks the whole screen, and drawing runs several times a second.
        self._pane_list = panes
        grid = self.query_one("#grid", Grid)
        if grid.children:
            self._replace_panes(panes)
        else:
            self._draw_when_mounted(grid.mount_all([*panes, self._totals]))
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
        self._totals = TotalsPane()
        await grid.mount_all([*panes, self._totals])
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
        if self.view != "grid":
            lines_key: tuple[object, ...] = (
                app.generation,
                state.version,
                tick,
                score_name,
                self._sort,
                self.size,
                self.app.theme,
            )
            if lines_key != self._lines_key:
                self._lines_key = lines_key
                self._show_lines(state, now, spark_end_t, score_name)
            return
        if self._totals.display:
            self._totals.show(fleet_totals(state.endpoints.values(), spark_end_t))
        for pane in self._pane_list:
            # Here, not only on Resize, which a pane shown by a switch of view may never get:
            # its whole name would stay, cut by Textual mid-word.
            pane.fit_title()
            endpoint = state.endpoints.get(pane.endpoint_id)
            if endpoint is None:
                continue
            gpu_samples = endpoint.gpu.samples if endpoint.gpu else 0
            key = (app.generation, endpoint.version, gpu_samples, tick, score_name)
            if self._seen.get(pane.endpoint_id) == key:
                continue
            if pane.show(pane_readout(endpoint, now, score_name, spark_end_t=spark_end_t)):
                self._seen[pane.endpoint_id] = key

    def _show_lines(self, state: FleetState, now: float, end_t: float, score_name: str) -> None:
        """The compact or the table view: a line per endpoint and the totals."""
        lines = [
            EndpointLine(
                endpoint_id=e.id,
                node=e.info.node,
                gpu=e.info.gpu,
                label=e.info.label,
                phase=_short_phase(e),
                readout=pane_readout(e, now, score_name, spark_end_t=end_t),
            )
            for e in state.endpoints.values()
        ]
        endpoints = list(state.endpoints.values())
        nodes = {
            node: fleet_totals((e for e in endpoints if (e.info.node or NO_NODE) == node), end_t)
            for node in by_node(lines)
        }
        table = self._shown_table()
        sort = SORT_KEYS[self._sort] if self.view == "table" else None
        totals = fleet_totals(endpoints, end_t)
        table.show_fleet(lines, totals, nodes, cell_styles(self.app), self.size.width, sort)

    # ---- navigation

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # With playback, left and right seek (the app's bindings); tab and up/down still move.
        if action == "move" and parameters and parameters[0] != 0:
            return not self.fleet_app.source.capabilities.playback
        if action == "sort":
            return self.view == "table"
        return True

    def action_cycle_view(self) -> None:
        self._chosen = VIEWS[(VIEWS.index(self.view) + 1) % len(VIEWS)]
        self._reflow(self.size)
        self.fleet_app.redraw()

    def action_sort(self) -> None:
        self._sort = (self._sort + 1) % len(SORT_KEYS)
        self.fleet_app.redraw()

    def on_data_table_row_selected(self, event: FleetTable.RowSelected) -> None:
        key = event.row_key.value
        if key is not None:
            self.fleet_app.open_detail(key)

    def on_gpu_pane_selected(self, message: GpuPane.Selected) -> None:
        self.fleet_app.open_detail(message.endpoint_id)

    def _panes(self) -> list[GpuPane]:
        return [pane for pane in self._pane_list if pane.is_mounted]

    def action_open_detail(self) -> None:
        if self.view != "grid":
            endpoint_id = self._shown_table().endpoint_at_cursor()
            if endpoint_id is not None:
                self.fleet_app.open_detail(endpoint_id)
            return
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


def _short_phase(endpoint: EndpointState) -> str | None:
    phase = phase_text(endpoint)
    return None if phase is None else phase.replace(" · ", "·")

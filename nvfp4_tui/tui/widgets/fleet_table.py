"""FleetTable: the fleet one line per endpoint, for terminals too small for the grid (compact)
and fleets too large for it (table: sortable, grouped by node, node totals).

Each line is drawn from the endpoint's ``PaneReadout``, the same values its pane shows, and the
totals from ``core.figures.fleet``; this module only lays them out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import DataTable

from nvfp4_tui.core.figures.fleet import FleetTotals
from nvfp4_tui.core.figures.pane import SuiteQuality
from nvfp4_tui.core.figures.scores import SCORE_LABELS
from nvfp4_tui.tui import units
from nvfp4_tui.tui.palette import CellStyles
from nvfp4_tui.tui.text_fit import fit_words
from nvfp4_tui.tui.widgets.gpu_pane import STATUS_MARK, STATUS_TEXT, PaneReadout
from nvfp4_tui.tui.widgets.live_table import Cell, LiveTable, Row
from nvfp4_tui.tui.widgets.spark_bars import BARS

FLEET_ROW = "fleet"  # the key of the totals row
NODE_ROW = "node:"  # the prefix of a node's totals row
NO_NODE = "(no node)"
NAME_MIN_W = 10
SUBTITLE_FRAME_W = 10  # the border's corners and dashes, and the spaces around a subtitle
NAME_COLUMN = 1  # the endpoint's name: it gets the width the other columns leave, cut at a word
TABLE_FRAME_W = 4  # the border and the vertical scrollbar


@dataclass(frozen=True)
class EndpointLine:
    """One endpoint as a line of the compact or table view."""

    endpoint_id: str
    node: str
    gpu: int | None
    label: str
    phase: str | None  # the phase running now, e.g. "math·c4"
    readout: PaneReadout

    @property
    def vram_pct(self) -> float | None:
        used, total = self.readout.vram.used_mib, self.readout.vram.total_mib
        if used is None or not total or self.readout.vram.freshness == "none":
            return None
        return used / total * 100

    @property
    def quality_mean(self) -> float | None:
        """The mean of the suites' means, for sorting: the bar shows each suite."""
        means = [q.mean for q in self.readout.quality if q.mean is not None]
        return sum(means) / len(means) if means else None


@dataclass(frozen=True)
class SortKey:
    name: str  # as the header says it
    value: Callable[[EndpointLine], float | str | None]
    descending: bool


SORT_KEYS: tuple[SortKey, ...] = (
    SortKey("GPU", lambda e: e.gpu, False),
    SortKey("tok/s", lambda e: e.readout.decode_tps, True),
    SortKey("TTFT", lambda e: e.readout.timing.ttft_p50_s, False),
    SortKey("VRAM", lambda e: e.vram_pct, True),
    SortKey("power", lambda e: e.readout.gpu.power_w, True),
    SortKey("quality", lambda e: e.quality_mean, True),
    SortKey("errors", lambda e: e.readout.errors.count, True),
    SortKey("endpoint", lambda e: e.label.lower(), False),
)


def sorted_lines(lines: Sequence[EndpointLine], sort: SortKey) -> list[EndpointLine]:
    """``lines`` by ``sort``, unknown values last whichever the direction, then by GPU."""

    def key(line: EndpointLine) -> tuple[bool, float | str, int]:
        value = sort.value(line)
        if value is None:
            return True, 0.0, line.gpu if line.gpu is not None else -1
        if sort.descending and not isinstance(value, str):
            value = -value
        return False, value, line.gpu if line.gpu is not None else -1

    return sorted(lines, key=key)


def by_node(lines: Sequence[EndpointLine]) -> dict[str, list[EndpointLine]]:
    groups: dict[str, list[EndpointLine]] = {}
    for line in lines:
        groups.setdefault(line.node or NO_NODE, []).append(line)
    return dict(sorted(groups.items()))


def quality_bar(quality: Sequence[SuiteQuality]) -> str:
    """One character per suite, as high as its mean score (a dot: no score yet)."""
    return "".join(
        "·" if q.mean is None else BARS[min(len(BARS) - 1, int(q.mean * len(BARS)))]
        for q in quality
    )


def _spaced(cell: Cell, index: int) -> Text:
    """A cell with a space before it: the table's only column gap (a trailing one would be
    stripped from right-aligned numbers)."""
    text = Text(cell) if isinstance(cell, str) else cell.copy()
    text.pad_left(1)
    return text


def _right(text: str, style: str = "") -> Text:
    return Text(text, style=style, justify="right")


def _status(line: EndpointLine, styles: CellStyles) -> Text:
    status = line.readout.status
    mark = STATUS_MARK.get(status, "○")
    if status == "running" and line.phase:
        return Text(f"{mark} {line.phase}", style=styles.ok)
    style = {
        "running": styles.ok,
        "down": styles.error,
        "error": styles.error,
        "paused": styles.warning,
        "warmup": styles.warning,
    }.get(status, styles.muted)
    return Text(f"{mark} {STATUS_TEXT.get(status, status)}", style=style)


def _gpu(gpu: int | None) -> Text:
    return _right(units.DASH if gpu is None else str(gpu))


def _errors(count: int, styles: CellStyles) -> Text:
    return _right(str(count), styles.error if count else styles.muted)


def endpoint_cells(line: EndpointLine, styles: CellStyles, *, table: bool) -> list[Text]:
    r = line.readout
    power = r.gpu.power_w if r.gpu.freshness != "none" else None
    cells: list[Text] = [
        _gpu(line.gpu),
        Text(line.label),
        _status(line, styles),
        _right(units.DASH if r.decode_tps is None else f"{r.decode_tps:.0f}"),
        _right(units.seconds_as_ms(r.timing.ttft_p50_s)),
        _right(units.pct(line.vram_pct)),
        _right(units.watts(power)),
        Text(quality_bar(r.quality), style=styles.bar),
        _errors(r.errors.count, styles),
    ]
    if table:
        cells[8:8] = [_right(units.score(line.quality_mean))]
    return cells


def totals_cells(what: str, totals: FleetTotals, styles: CellStyles, *, table: bool) -> list[Text]:
    decode = units.DASH if totals.decode_tps is None else f"{totals.decode_tps:.0f}"
    if totals.decode_estimated and totals.decode_tps is not None:
        decode = f"≈{decode}"
    cells: list[Text] = [
        Text(""),
        Text(what, style="bold"),
        Text(f"{totals.active}/{totals.endpoints} active", style=styles.muted),
        _right(decode, "bold"),
        Text(""),
        Text(""),
        _right(units.watts(totals.power_w), "bold"),
        Text(f"{totals.requests_done} req", style=styles.muted),
        _errors(totals.errors, styles),
    ]
    if table:
        cells[8:8] = [Text("")]
    return cells


def _name_width(
    heads: Sequence[tuple[str, Text]], rows: Sequence[tuple[str, list[Text]]], width: int
) -> int:
    """What the other columns (each with its space) leave of ``width`` for the names."""
    others = sum(
        1 + max([heads[i][1].cell_len, *(cells[i].cell_len for _, cells in rows)])
        for i in range(len(heads))
        if i != NAME_COLUMN
    )
    return max(NAME_MIN_W, width - TABLE_FRAME_W - others - 1)


def columns(table: bool, sort: SortKey | None) -> list[tuple[str, Text]]:
    names = [
        ("gpu", "GPU"),
        ("endpoint", "endpoint"),
        ("status", "status"),
        ("tok/s", "tok/s"),
        ("TTFT", "TTFT p50"),
        ("VRAM", "VRAM"),
        ("power", "power"),
        ("quality", "quality"),
        ("errors", "err"),
    ]
    if table:  # each node's endpoints under its own totals row: no node column
        names[8:8] = [("mean", "mean")]
    out: list[tuple[str, Text]] = []
    for key, label in names:
        marked = sort is not None and sort.name in (key, label)
        arrow = (" ▼" if sort and sort.descending else " ▲") if marked else ""
        right = key not in ("endpoint", "status", "quality")
        text = Text(
            label + arrow, style="bold" if marked else "", justify="right" if right else "left"
        )
        out.append((key, text))
    return out


class FleetTable(LiveTable):
    """The compact view (``table=False``) or the table view of the fleet."""

    def __init__(self, *, id: str, table: bool) -> None:
        # One space between columns, not Textual's two: 80 columns keep room for the names.
        super().__init__(id=id, zebra_stripes=table, cell_padding=0)
        self.table = table

    def show_fleet(
        self,
        lines: Sequence[EndpointLine],
        fleet: FleetTotals,
        nodes: dict[str, FleetTotals],
        styles: CellStyles,
        width: int,
        sort: SortKey | None = None,
    ) -> None:
        """The endpoints (by ``sort`` within each node in the table view), then the totals, in
        ``width`` columns (the screen's: a hidden table has no width of its own yet)."""
        rows: list[tuple[str, list[Text]]] = []
        if self.table:
            groups = by_node(lines)
            for node, members in groups.items():
                if len(groups) > 1:
                    what = f"{node} · {len(members)}"
                    rows.append(
                        (NODE_ROW + node, totals_cells(what, nodes[node], styles, table=True))
                    )
                for line in sorted_lines(members, sort or SORT_KEYS[0]):
                    rows.append((line.endpoint_id, endpoint_cells(line, styles, table=True)))
        else:
            rows = [(e.endpoint_id, endpoint_cells(e, styles, table=False)) for e in lines]
        what = f"all {fleet.endpoints} endpoints"
        rows.append((FLEET_ROW, totals_cells(what, fleet, styles, table=self.table)))
        heads = columns(self.table, sort)
        name_w = _name_width(heads, rows, width)
        for _, cells in rows:
            name = cells[NAME_COLUMN]
            cells[NAME_COLUMN] = Text(fit_words(name.plain, name_w), style=name.style)
        suites = ", ".join(q.suite for q in lines[0].readout.quality) if lines else ""
        score = SCORE_LABELS.get(lines[0].readout.score_name, "") if lines else ""
        if self.table:
            nodes_text = f" on {len(nodes)} nodes" if len(nodes) > 1 else ""
            order = (sort or SORT_KEYS[0]).name
            self.border_title = (
                f"{len(lines)} endpoints{nodes_text} · by {order} · s: sort · enter: detail"
            )
        else:
            self.border_title = f"{len(lines)} endpoints · enter: detail · c: grid or table"
        self.border_subtitle = fit_words(
            "tok/s: decode per stream, on totals rows every stream's together · "
            f"quality: a bar per suite ({suites}), {score} score",
            width - SUBTITLE_FRAME_W,
        )
        spaced: list[Row] = [
            (key, [_spaced(c, i) for i, c in enumerate(cells)]) for key, cells in rows
        ]
        spaced_heads = [(key, _spaced(label, i)) for i, (key, label) in enumerate(heads)]
        self.show_rows(spaced_heads, spaced)

    def endpoint_at_cursor(self) -> str | None:
        """The endpoint of the row under the cursor; None on a totals row."""
        if not self.is_valid_coordinate(self.cursor_coordinate):
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return None if key is None or key == FLEET_ROW or key.startswith(NODE_ROW) else key

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        # The screen opens the detail: it knows the app.
        key = event.row_key.value
        if key == FLEET_ROW or (key or "").startswith(NODE_ROW):
            event.stop()

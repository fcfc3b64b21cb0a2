"""VramTable: VRAM per GPU before and after the run, as the seed's table showed it, and the
read-out it draws (``vram_rows``, a pure function of the state, tested without an app)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from rich.text import Text

from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui import units
from nvfp4_tui.tui.palette import CellStyles
from nvfp4_tui.tui.readouts import class_name
from nvfp4_tui.tui.widgets.live_table import Cell, Column, LiveTable, Row


@dataclass(frozen=True, slots=True)
class VramRow:
    gpu: int
    node: str  # "" in a run on one node
    endpoint_ids: tuple[str, ...]  # the endpoints the profile placed on this GPU, if any
    model_class: str | None  # when every endpoint on the GPU is of one class
    before_mib: float | None  # the first sample of the run
    after_mib: float | None  # the latest sample: the run's last once it has ended
    total_mib: float | None

    @property
    def change_mib(self) -> float | None:
        if self.before_mib is None or self.after_mib is None:
            return None
        return self.after_mib - self.before_mib

    @property
    def used_pct(self) -> float | None:
        """The latest VRAM used, in % of the card's memory."""
        if self.after_mib is None or not self.total_mib:
            return None
        return 100.0 * self.after_mib / self.total_mib


def vram_rows(state: FleetState) -> list[VramRow]:
    """One row per GPU, by node and index: each one an endpoint names, and each one telemetry reported
    (a GPU no endpoint names is listed too: other tenants of the box show up in its VRAM)."""
    rows = []
    for (node, gpu), track in sorted(state.gpus.items()):
        on_gpu = [e.info for e in state.endpoints.values() if e.gpu is track]
        classes = {info.model_class for info in on_gpu}
        latest = track.latest
        rows.append(
            VramRow(
                gpu=gpu,
                node=node,
                endpoint_ids=tuple(info.id for info in on_gpu),
                model_class=classes.pop() if len(classes) == 1 else None,
                before_mib=track.first_vram_mib,
                after_mib=track.last_vram_mib,
                total_mib=latest.vram_total_mib if latest else None,
            )
        )
    return rows


def _change_text(change_mib: float | None) -> str:
    if change_mib is None:
        return units.DASH
    return "0" if round(change_mib) == 0 else f"{change_mib:+,.0f}"


def _right(text: str, style: str = "") -> Text:
    return Text(text, style=style, justify="right")


class VramTable(LiveTable):
    """Hidden until some GPU reports its VRAM; redrawn only when a value it shows changed."""

    DEFAULT_CSS = """
    VramTable {
        height: auto;
        max-height: 20;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "VRAM used per GPU (MiB, as nvidia-smi reports it)"
        self._key: Hashable | None = None

    def show(self, state: FleetState, labels: dict[str, str], styles: CellStyles) -> None:
        rows = vram_rows(state)
        running = state.status == "running"
        key = (tuple(rows), running, tuple(labels.items()), styles)
        if key == self._key:
            return
        self._key = key
        self.display = any(row.after_mib is not None for row in rows)
        columns: list[Column] = [
            ("gpu", "GPU"),
            ("endpoint", "endpoint"),
            ("class", "class"),
            ("before", _right("before")),
            ("after", _right("now" if running else "after")),
            ("change", _right("change")),
            ("used", _right("of card")),
        ]
        shown: list[Row] = []
        for row in rows:
            change = row.change_mib
            name = f"{row.node} {row.gpu}" if row.node else str(row.gpu)
            cells: list[Cell] = [
                _right(name),
                Text(", ".join(labels.get(e, e) for e in row.endpoint_ids) or units.DASH),
                Text(class_name(row.model_class) if row.model_class else units.DASH, styles.muted),
                _right(units.mib(row.before_mib)),
                _right(units.mib(row.after_mib)),
                _right(_change_text(change), styles.muted),
                _right(units.pct(row.used_pct)),
            ]
            shown.append((name, cells))
        self.show_rows(columns, shown)

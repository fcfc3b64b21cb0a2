"""TotalsPane: the fleet's totals in the grid's spare cell (seven panes in a 4×2 grid)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from nvfp4_tui.core.figures.fleet import FleetTotals
from nvfp4_tui.tui import units


def totals_content(totals: FleetTotals) -> Content:
    decode = units.DASH if totals.decode_tps is None else f"{totals.decode_tps:,.0f}"
    if totals.decode_tps is None:
        how = "no stream in flight, or none reporting progress"
    elif totals.decode_estimated:
        how = "≈ mean × streams (no live progress)"
    else:
        how = "every stream"
    power = units.watts(totals.power_w)
    gpus = f"{totals.power_gpus} GPU{'s' if totals.power_gpus != 1 else ''}"
    errors_style = "bold $error" if totals.errors else ""
    lines = [
        Content.assemble((decode, "bold $text-primary"), (" tok/s decode", "$text-muted")),
        Content.styled(f"  {how}", "$text-muted"),
        Content(""),
        Content.assemble(
            (f"{totals.active}", "bold"),
            (f" of {totals.endpoints} endpoints active", "$text-muted"),
        ),
        Content.assemble((f"{totals.requests_done:,}", "bold"), (" requests done", "$text-muted")),
        Content.assemble((f"{totals.errors:,}", errors_style), (" errors", "$text-muted")),
        Content.assemble((power, "bold"), (f" drawn by {gpus}", "$text-muted")),
    ]
    return Content("\n").join(lines)


class TotalsPane(Static):
    """The whole fleet, summed: decode tok/s, requests, errors and power."""

    DEFAULT_CSS = """
    TotalsPane {
        height: 1fr;
        padding: 1 2;
        background: $surface;
        border: round $panel-lighten-1;
        border-title-color: $text;
        border-title-align: left;
    }
    """

    def __init__(self) -> None:
        super().__init__(id="totals")
        self.border_title = "Fleet totals"
        self._totals: FleetTotals | None = None

    def show(self, totals: FleetTotals) -> None:
        if totals != self._totals:
            self._totals = totals
            self.update(totals_content(totals))

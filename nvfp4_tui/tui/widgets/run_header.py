"""RunHeader: the run at a glance — name, elapsed time, progress with ETA, requests, errors, and
the phase each endpoint is in."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widget import Widget

from nvfp4_tui.state import FleetState
from nvfp4_tui.tui import units
from nvfp4_tui.tui.plain_text import one_line
from nvfp4_tui.tui.readouts import phase_text
from nvfp4_tui.tui.widgets.gpu_pane import STATUS_STYLE, STATUS_TEXT
from nvfp4_tui.tui.widgets.meter import Meter

PROGRESS_MIN_W = 12


@dataclass(frozen=True)
class RunReadout:
    run_name: str
    mode: str  # "live", "paused", "complete", "aborted", "ended", "waiting"
    elapsed_s: float | None
    fraction: float
    eta_s: float | None
    requests_done: int
    requests_total: int | None
    errors: int
    phases: tuple[tuple[str, str, str], ...]  # (gpu tag, phase or status, status)


def _coarse(eta_s: float) -> int:
    """An estimate is no more exact than a few seconds: steps of 5 s beyond a minute."""
    return round(eta_s) if eta_s < 60 else round(eta_s / 5) * 5


def run_readout(state: FleetState, now: float, *, paused: bool, source_ended: bool) -> RunReadout:
    if state.status is None:
        mode = "ended" if source_ended else "waiting"
    elif state.status != "running":
        mode = state.status
    elif source_ended:
        mode = "ended"
    else:
        mode = "paused" if paused else "live"
    phases = []
    for endpoint in state.endpoints.values():
        gpu = endpoint.info.gpu
        tag = f"GPU{gpu}" if gpu is not None else endpoint.id
        phase = phase_text(endpoint)
        status = endpoint.status
        phases.append((tag, phase or STATUS_TEXT.get(status, status), status))
    elapsed_s, eta_s = state.elapsed_s(now), state.eta_s(now)
    # Rounded as shown, so that the header repaints when what it shows changes, not every tick.
    return RunReadout(
        run_name=one_line(state.run_name) or "no run yet",
        mode=mode,
        elapsed_s=None if elapsed_s is None else round(elapsed_s),
        fraction=round(state.progress_fraction(now), 3),
        eta_s=None if eta_s is None else _coarse(eta_s),
        requests_done=state.requests_done,
        requests_total=state.total_requests,
        errors=state.errors,
        phases=tuple(phases),
    )


MODE_STYLE = {
    "live": ("● live", "$success"),
    "paused": ("‖ paused", "bold $warning"),
    "complete": ("✓ complete", "$primary"),
    "aborted": ("✗ aborted", "$error"),
    "ended": ("■ source ended", "$text-muted"),
    "waiting": ("○ waiting for the run", "$text-muted"),
}


class HeaderLine(Widget):
    """One header line whose content is laid out for the width it has."""

    DEFAULT_CSS = "HeaderLine { height: 1; width: 1fr; }"

    def __init__(self, *, classes: str) -> None:
        super().__init__(classes=classes)
        self.readout: RunReadout | None = None

    def show(self, readout: RunReadout) -> None:
        if self.shown(readout) != self.shown(self.readout):
            self.refresh()
        self.readout = readout

    def shown(self, readout: RunReadout | None) -> tuple[object, ...]:
        """The parts of the read-out this line shows."""
        return (readout,)


class RunSummary(HeaderLine):
    def shown(self, readout: RunReadout | None) -> tuple[object, ...]:
        if readout is None:
            return ()
        return (readout.run_name, readout.mode, readout.elapsed_s, readout.eta_s, readout.errors)

    def render(self) -> Content:
        r = self.readout
        if r is None:
            return Content("")
        label, style = MODE_STYLE[r.mode]
        errors_style = "bold $error" if r.errors else "$text-muted"
        eta = units.clock(r.eta_s) if r.mode in ("live", "paused") else units.DASH
        errors = f"{r.errors} error{'s' if r.errors != 1 else ''}"
        full = Content.assemble(
            (r.run_name, "bold"),
            "  ",
            (label, style),
            ("   elapsed ", "$text-muted"),
            units.clock(r.elapsed_s),
            ("   ETA ", "$text-muted"),
            eta,
            "   ",
            (errors, errors_style),
        )
        if full.cell_length <= self.size.width:
            return full
        return Content.assemble(
            (r.run_name, "bold"),
            " ",
            (label.split()[0], style),
            " ",
            units.clock(r.elapsed_s),
            ("  ETA ", "$text-muted"),
            eta,
            "  ",
            (f"{r.errors} err", errors_style),
        )


class PhaseLine(HeaderLine):
    def shown(self, readout: RunReadout | None) -> tuple[object, ...]:
        return () if readout is None else readout.phases

    def render(self) -> Content:
        r = self.readout
        if r is None or not r.phases:
            return Content("")
        width = self.size.width
        for sep, compact in (("   ", False), ("  ", True)):
            parts: list[Content] = []
            for tag, phase, status in r.phases:
                text = phase.replace(" · ", "·") if compact else phase
                style = STATUS_STYLE.get(status, "") if status != "running" else ""
                parts.append(Content.assemble((tag, "$text-muted"), " ", (text, style)))
            line = Content(sep).join(parts)
            if line.cell_length <= width or compact:
                return line
        return Content("")


class RunHeader(Vertical):
    """Two lines: the run's summary with a progress bar, then each endpoint's current phase."""

    DEFAULT_CSS = """
    RunHeader { height: 2; }
    RunHeader > .top { height: 1; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal(classes="top"):
            yield RunSummary(classes="summary")
            yield Meter(classes="progress")
        yield PhaseLine(classes="phases")

    def __init__(self) -> None:
        super().__init__()
        self._readout: RunReadout | None = None

    def show(self, readout: RunReadout) -> None:
        if readout == self._readout:
            return
        self._readout = readout
        self.query_one(RunSummary).show(readout)
        self.query_one(PhaseLine).show(readout)
        total = units.DASH if readout.requests_total is None else str(readout.requests_total)
        done = f"{readout.requests_done}/{total}"
        percent = f"{readout.fraction * 100:.0f}%"
        self.query_one(".progress", Meter).show(
            [(f"{done} requests", percent), (done, percent)], readout.fraction
        )

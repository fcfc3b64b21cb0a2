"""RunHeader: the run at a glance — name, elapsed time, progress with ETA, requests, errors, and
the phase each endpoint is in; for a replay, its timeline; for a followed run, its freshness."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widget import Widget

from nvfp4_tui.core.client_health import ClientReadout, client_readout
from nvfp4_tui.core.plain_text import one_line
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.core.timing_doubt import MODELLED_TIME
from nvfp4_tui.tui import units
from nvfp4_tui.tui.readouts import phase_text
from nvfp4_tui.tui.source_status import FollowReadout, ReplayReadout
from nvfp4_tui.tui.widgets.gpu_pane import STATUS_STYLE, STATUS_TEXT
from nvfp4_tui.tui.widgets.meter import Meter

T = TypeVar("T")
Phases = tuple[tuple[str, str, str], ...]  # (gpu tag, phase or status, status) per endpoint


@dataclass(frozen=True)
class RunReadout:
    run_name: str
    # "live", "paused", "complete", "aborted", "ended", "waiting"; for a replay "replay",
    # "replay-paused", "replay-end"; for a followed run "following", "stale".
    mode: str
    elapsed_s: float | None
    fraction: float
    eta_s: float | None
    requests_done: int
    requests_total: int | None
    errors: int
    phases: Phases
    replay: ReplayReadout | None = None
    quiet_s: int = 0  # a stale followed run: seconds since anything new arrived
    time_scale: float = 1.0  # a simulator run faster than real time, figures in modelled time
    # Its worst phase's timing doubt (modelled seconds): a scaled client that could not keep up.
    behind_s: float | None = None
    client: ClientReadout | None = None  # the load generator's own health, while it sends


def _coarse(eta_s: float) -> int:
    """An estimate is no more exact than a few seconds: steps of 5 s beyond a minute."""
    return round(eta_s) if eta_s < 60 else round(eta_s / 5) * 5


def _mode(
    state: FleetState,
    *,
    paused: bool,
    source_ended: bool,
    replay: ReplayReadout | None,
    follow: FollowReadout | None,
) -> str:
    finished = state.status is not None and state.status != "running"
    if replay is not None:
        if replay.at_end:
            return state.status if finished and state.status else "replay-end"
        return "replay-paused" if replay.paused else "replay"
    if finished and state.status:
        return state.status
    if follow is not None and follow.finished and follow.status in ("complete", "aborted"):
        return follow.status  # the writer closed the run without a RunFinished event
    if state.status is None:
        return "ended" if source_ended else "waiting"
    if source_ended:
        return "ended"
    if follow is not None:
        return "stale" if follow.stale else "following"
    return "paused" if paused else "live"


def run_readout(
    state: FleetState,
    now: float,
    *,
    paused: bool,
    source_ended: bool,
    replay: ReplayReadout | None = None,
    follow: FollowReadout | None = None,
) -> RunReadout:
    mode = _mode(state, paused=paused, source_ended=source_ended, replay=replay, follow=follow)
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
        time_scale=max((e.info.time_scale for e in state.endpoints.values()), default=1.0),
        behind_s=max(
            (
                doubt
                for e in state.endpoints.values()
                if e.info.time_scale != 1.0 and (doubt := e.timing_doubt_s) is not None
            ),
            default=None,
        ),
        replay=replay,
        quiet_s=follow.quiet_s if follow is not None and mode == "stale" else 0,
        client=_rounded(client_readout(state.client_health, now)),
    )


def _rounded(client: ClientReadout | None) -> ClientReadout | None:
    """As shown (whole %, whole ms, tenths of a second), so the header repaints when it changes."""
    if client is None:
        return None

    def to(value: float | None, digits: int) -> float | None:
        return None if value is None else round(value, digits)

    return replace(
        client,
        cpu_pct=to(client.cpu_pct, 0),
        loop_lag_p99_s=to(client.loop_lag_p99_s, 3),
        cpu_wait_s=to(client.cpu_wait_s, 1),
    )


MODE_STYLE = {
    "live": ("● live", "$success"),
    "paused": ("‖ paused", "bold $warning"),
    "complete": ("✓ complete", "$primary"),
    "aborted": ("✗ aborted", "$error"),
    "ended": ("■ source ended", "$text-muted"),
    "waiting": ("○ waiting for the run", "$text-muted"),
    "replay": ("▶ replay", "$success"),
    "replay-paused": ("‖ replay paused", "bold $warning"),
    "replay-end": ("■ end of replay", "$text-muted"),
    "following": ("◉ following", "$success"),
    "stale": ("◉ following STALE", "bold $warning"),
}
# Modes in which an estimate of the time left means something.
ETA_MODES = frozenset({"live", "following", "stale"})  # paused: no ETA, nothing is sent


@dataclass(frozen=True)
class SummaryLine:
    """What the summary line is drawn from."""

    run_name: str
    mode: str
    errors: int
    quiet_s: int
    time_scale: float
    behind_s: float | None
    # A replay shows (requests done, total) here, its timeline on the meter; a run its clock.
    requests: tuple[int, int | None] | None
    elapsed_s: float | None
    eta_s: float | None
    client: ClientReadout | None = None


def summary_line(r: RunReadout) -> SummaryLine:
    replay = r.replay is not None
    return SummaryLine(
        run_name=r.run_name,
        mode=r.mode,
        errors=r.errors,
        quiet_s=r.quiet_s,
        time_scale=r.time_scale,
        behind_s=r.behind_s,
        requests=(r.requests_done, r.requests_total) if replay else None,
        elapsed_s=None if replay else r.elapsed_s,
        eta_s=None if replay else r.eta_s,
        client=r.client,
    )


def client_text(client: ClientReadout) -> tuple[str, str]:
    """The load generator's health and its style: muted while it keeps up, a warning when it
    may be what limits the run."""
    parts = [f"client CPU {units.pct(client.cpu_pct)}"]
    if client.loop_lag_p99_s is not None:
        parts.append(f"lag p99 {client.loop_lag_p99_s * 1000:.0f} ms")
    if client.cpu_wait_s is not None and client.cpu_wait_s > 0:
        parts.append(f"waited {client.cpu_wait_s:.1f} s for a CPU")
    parts.append(f"{client.queued} queued")
    if client.workers > 1 or client.silent:
        parts.append(f"{client.workers - client.silent}/{client.workers} workers reporting")
    text = " · ".join(parts)
    return (f"⚠ {text}", "bold $warning") if client.limiting else (text, "$text-muted")


class HeaderLine(Widget, Generic[T]):
    """One header line, drawn from a value of its own and repainted only when that changes; its
    content is laid out for the width it has."""

    DEFAULT_CSS = "HeaderLine { height: 1; width: 1fr; }"

    def __init__(self, *, classes: str) -> None:
        super().__init__(classes=classes)
        self.value: T | None = None

    def show(self, value: T) -> None:
        if value != self.value:
            self.value = value
            self.refresh()


class RunSummary(HeaderLine[SummaryLine]):
    def render(self) -> Content:
        r = self.value
        if r is None:
            return Content("")
        label, style = MODE_STYLE[r.mode]
        compact_label = label.split()[0]
        if r.mode == "stale":
            label = f"{label} {units.clock(r.quiet_s)}"
            compact_label = f"{compact_label} STALE"
        errors_style = "bold $error" if r.errors else "$text-muted"
        errors = f"{r.errors} error{'s' if r.errors != 1 else ''}"
        if r.requests is not None:
            done, total = r.requests
            count = f"{done}/{units.DASH if total is None else total}"
            middle: tuple[tuple[str, str] | str, ...] = (("   requests ", "$text-muted"), count)
            compact: tuple[tuple[str, str] | str, ...] = (f"{count} req",)
        else:
            eta = units.clock(r.eta_s) if r.mode in ETA_MODES else units.DASH
            elapsed = units.clock(r.elapsed_s)
            middle = (("   elapsed ", "$text-muted"), elapsed, ("   ETA ", "$text-muted"), eta)
            compact = (elapsed, ("  ETA ", "$text-muted"), eta)
        scaled = (
            (f"  simulator ×{r.time_scale:g}: {MODELLED_TIME}", "bold $warning")
            if r.time_scale != 1.0
            else ""
        )
        behind = (
            (
                f"  ⚠ client fell behind: timings up to {r.behind_s * 1000:.0f} ms late",
                "bold $error",
            )
            if r.behind_s is not None
            else ""
        )
        head = Content.assemble(
            (r.run_name, "bold"),
            scaled,
            behind,
            "  ",
            (label, style),
            *middle,
            "   ",
            (errors, errors_style),
        )
        busy = r.client is not None and r.client.limiting
        # The client's health where it fits; a warning of it never gives way to the rest.
        wordings = [head]
        if r.client is not None:
            short = Content.assemble(head, ("   ⚠ client busy", "bold $warning")) if busy else head
            wordings = [Content.assemble(head, "   ", client_text(r.client)), short]
        for wording in wordings:
            if wording.cell_length <= self.size.width:
                return wording
        return Content.assemble(
            (r.run_name, "bold"),
            (f" ×{r.time_scale:g}", "bold $warning") if r.time_scale != 1.0 else "",
            (" ⚠ behind", "bold $error") if r.behind_s is not None else "",
            # Before the rest, where a narrow header cuts it last.
            (" ⚠ client busy", "bold $warning") if busy else "",
            " ",
            (compact_label, style),
            " ",
            *compact,
            "  ",
            (f"{r.errors} err", errors_style),
        )


class PhaseLine(HeaderLine[Phases]):
    def render(self) -> Content:
        phases = self.value
        if not phases:
            return Content("")
        width = self.size.width
        compact_parts: list[Content] = []
        for sep, compact in (("   ", False), ("  ", True)):
            parts: list[Content] = []
            for tag, phase, status in phases:
                text = phase.replace(" · ", "·") if compact else phase
                style = STATUS_STYLE.get(status, "") if status != "running" else ""
                parts.append(Content.assemble((tag, "$text-muted"), " ", (text, style)))
            line = Content(sep).join(parts)
            if line.cell_length <= width:
                return line
            compact_parts = parts
        # Too many to fit: as many whole ones as fit, and how many more, never half of one.
        for shown in range(len(compact_parts) - 1, -1, -1):
            more = Content.styled(f"  +{len(compact_parts) - shown} more", "$text-muted")
            line = Content("  ").join(compact_parts[:shown]) + more
            if line.cell_length <= width:
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
        self.query_one(RunSummary).show(summary_line(readout))
        self.query_one(PhaseLine).show(readout.phases)
        meter = self.query_one(".progress", Meter)
        replay = readout.replay
        self.set_class(replay is not None, "-replay")
        if replay is not None:
            # The meter becomes the replay's timeline: position over length, and the speed.
            where = f"{units.clock(replay.position_s)} / {units.clock(replay.duration_s)}"
            mark = "■" if replay.at_end else "‖" if replay.paused else "▶"
            meter.show([(where, f"{mark} {replay.speed_label}")], replay.fraction)
            return
        total = units.DASH if readout.requests_total is None else str(readout.requests_total)
        done = f"{readout.requests_done}/{total}"
        percent = f"{readout.fraction * 100:.0f}%"
        meter.show([(f"{done} requests", percent), (done, percent)], readout.fraction)

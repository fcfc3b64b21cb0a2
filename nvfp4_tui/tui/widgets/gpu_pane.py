"""GpuPane: one endpoint's live pane on the fleet screen, and the read-out it is drawn from.

``pane_readout`` turns the endpoint's state into a frozen ``PaneReadout``; the pane repaints a
line only when its part of the read-out changed, so a pane whose numbers hold still costs nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Digits, Sparkline, Static

from nvfp4_tui.state import EndpointState
from nvfp4_tui.tui import units
from nvfp4_tui.tui.plain_text import one_line
from nvfp4_tui.tui.readouts import class_badge, decode_bins
from nvfp4_tui.tui.widgets.fit_line import FitLine
from nvfp4_tui.tui.widgets.meter import Meter

Freshness = Literal["none", "stale", "ok"]
SPARK_WINDOW_S = 60.0
# One-second bins: two samples per column for sparklines up to 30 columns wide (see below).
SPARK_BINS = 60
VRAM_HIGH_FRACTION = 0.97
MIN_QUALITY_BAR = 6  # narrower quality bars read as noise: below this the bar is left out

STATUS_TEXT = {
    "waiting": "waiting",
    "warmup": "warm-up",
    "running": "running",
    "paused": "paused",
    "done": "done",
    "error": "error",
    "down": "down",
}
STATUS_STYLE = {
    "waiting": "$text-muted",
    "warmup": "$warning",
    "running": "$success",
    "paused": "$warning",
    "done": "$primary",
    "error": "$error",
    "down": "bold $error",
}
STATUS_MARK = {"running": "●", "done": "✓", "down": "✗", "error": "✗", "paused": "‖"}


@dataclass(frozen=True)
class SuiteQuality:
    suite: str
    mean: float | None
    n: int
    ci_half: float | None


@dataclass(frozen=True)
class PaneReadout:
    """Everything a pane shows, as plain values (compared to skip repaints)."""

    status: str
    decode_tps: float | None
    spark: tuple[float, ...]
    ttft_p50_s: float | None
    in_flight: int | None
    target: int | None
    vram_used_mib: float | None
    vram_total_mib: float | None
    util_pct: float | None
    power_w: float | None
    temperature_c: float | None
    gpu_freshness: Freshness
    kv_cache_pct: float | None
    queue: float | None
    server_freshness: Freshness
    quality: tuple[SuiteQuality, ...]
    errors: int
    last_error: str | None


def _freshness(present: bool, stale: bool) -> Freshness:
    return "none" if not present else "stale" if stale else "ok"


def pane_readout(endpoint: EndpointState, now: float) -> PaneReadout:
    gpu = endpoint.gpu
    sample = gpu.latest if gpu else None
    server = endpoint.server_latest
    error = endpoint.last_error
    error_text = None
    if error is not None:
        error_text = one_line(f"{error.kind or 'error'}: {error.message or ''}").rstrip(": ")
    elif endpoint.status in ("down", "error") and endpoint.status_message:
        error_text = one_line(endpoint.status_message)
    return PaneReadout(
        status=endpoint.status,
        decode_tps=endpoint.decode_tps_now(now),
        # Whole seconds only: the sparkline moves once a second, not with every progress event.
        spark=tuple(
            decode_bins(
                endpoint.decode_history, math.floor(now), window_s=SPARK_WINDOW_S, bins=SPARK_BINS
            )
        ),
        ttft_p50_s=endpoint.ttft_p50_recent_s,
        in_flight=endpoint.in_flight,
        target=endpoint.target_concurrency,
        vram_used_mib=sample.vram_used_mib if sample else None,
        vram_total_mib=sample.vram_total_mib if sample else None,
        util_pct=sample.util_gpu_pct if sample else None,
        power_w=sample.power_w if sample else None,
        temperature_c=sample.temperature_c if sample else None,
        gpu_freshness=_freshness(sample is not None, bool(gpu and gpu.stale(now))),
        kv_cache_pct=server.kv_cache_pct if server else None,
        queue=server.requests_waiting if server else None,
        server_freshness=_freshness(server is not None, endpoint.server_stale(now)),
        quality=tuple(
            SuiteQuality(suite, q.mean, q.n, q.ci95_half_width)
            for suite in endpoint.suites()
            for q in (endpoint.quality_stats(suite),)
        ),
        errors=endpoint.requests_error,
        last_error=error_text,
    )


def status_content(status: str) -> Content:
    mark = STATUS_MARK.get(status, "○")
    return Content.styled(f"{mark} {STATUS_TEXT.get(status, status)}", STATUS_STYLE.get(status, ""))


class ZeroBasedSparkline(Sparkline):
    """A Sparkline whose scale starts at zero, so steady decoding draws a steady, full bar.

    Textual's Sparkline scales from the data's minimum, which turns ±2% noise into full-height
    swings. Each column summarises (max) its bucket of samples, so giving it two samples per
    column (``SPARK_BINS`` over its width) and a leading 0 puts that 0 in the first bucket beside
    a real sample: the minimum becomes 0 and no column changes.
    """

    def show(self, values: tuple[float, ...]) -> None:
        data = [0.0, *values] if values else []
        if data != self.data:
            self.data = data


class QualityList(Widget):
    """Running quality per suite: mean, a small bar, the 95% CI once n >= 3, and n."""

    DEFAULT_CSS = """
    QualityList { height: auto; width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rows: tuple[SuiteQuality, ...] = ()

    def show(self, rows: tuple[SuiteQuality, ...]) -> None:
        if rows != self._rows:
            layout = len(rows) != len(self._rows)
            self._rows = rows
            self.refresh(layout=layout)

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, len(self._rows))

    def render(self) -> Content:
        if not self._rows:
            return Content.styled("no scores yet", "$text-muted")
        width = self.size.width
        name_w = min(9, max(len(r.suite) for r in self._rows))
        lines = []
        for row in self._rows:
            name = row.suite[:name_w].ljust(name_w)
            mean = units.score(row.mean)
            ci = units.score_ci(row.ci_half).ljust(4)
            n = f"{row.n:>3}"
            room = width - name_w - len(mean) - len(ci) - len(n) - 2
            bar_w = room - 2 if room >= MIN_QUALITY_BAR + 2 else 0
            filled = round((row.mean or 0.0) * bar_w)
            lines.append(
                Content.assemble(
                    (name, "$text-muted"),
                    " " * (max(1, room - bar_w - 1) if not bar_w else 1),
                    ("━" * filled, "$accent"),
                    ("━" * (bar_w - filled), "$panel-lighten-2"),
                    " " if bar_w else "",
                    (mean, "bold" if row.mean is not None else "$text-muted"),
                    " ",
                    (ci, "$text-muted"),
                    (n, "$text-muted"),
                )
            )
        return Content("\n").join(lines)


class GpuPane(Vertical, can_focus=True):
    """One endpoint: status, decode tok/s, latency, VRAM, GPU and server load, quality, errors."""

    class Selected(Message):
        """The user chose this pane (click or Enter): open its detail screen."""

        def __init__(self, endpoint_id: str) -> None:
            super().__init__()
            self.endpoint_id = endpoint_id

    class Ready(Message):
        """The pane is mounted and can be drawn."""

    _STATUS_CLASSES: ClassVar[tuple[str, ...]] = tuple(f"-{s}" for s in STATUS_TEXT)

    def __init__(self, endpoint: EndpointState) -> None:
        super().__init__(id=f"pane-{endpoint.id}")
        self.endpoint_id = endpoint.id
        info = endpoint.info
        gpu = f"GPU {info.gpu}" if info.gpu is not None else "GPU ?"
        self.border_title = Content.assemble((gpu, "bold"), " · ", info.label)
        self._badge = class_badge(info)
        self._readout: PaneReadout | None = None
        self._ready = False

    def compose(self) -> ComposeResult:
        with Horizontal(classes="pane-row"):
            yield Static(self._badge, classes="badge", markup=False)
            yield Static(classes="status")
        with Horizontal(classes="speed"):
            yield Digits("", classes="decode")
            with Vertical(classes="speed-side"):
                yield Static("tok/s decode", classes="unit")
                yield ZeroBasedSparkline(classes="spark")
        yield FitLine(classes="timing")
        yield Meter(classes="vram")
        yield FitLine(classes="gpu")
        yield FitLine(classes="server")
        yield QualityList()
        yield FitLine(classes="errors")

    def on_mount(self) -> None:
        self._ready = True
        self.post_message(self.Ready())

    def on_click(self) -> None:
        self.post_message(self.Selected(self.endpoint_id))

    def show(self, readout: PaneReadout) -> bool:
        """Repaint the parts whose values changed since the last read-out; False before mount."""
        if not self._ready:
            return False
        old, self._readout = self._readout, readout

        def changed(*fields: str) -> bool:
            return old is None or any(getattr(old, f) != getattr(readout, f) for f in fields)

        if changed("status"):
            self.query_one(".status", Static).update(status_content(readout.status))
            self.remove_class(*self._STATUS_CLASSES)
            self.add_class(f"-{readout.status}")
        if changed("decode_tps"):
            value = readout.decode_tps
            self.query_one(Digits).update("—" if value is None else f"{value:.0f}")
        if changed("spark"):
            self.query_one(ZeroBasedSparkline).show(readout.spark)
        if changed("ttft_p50_s", "in_flight", "target"):
            self.query_one(".timing", FitLine).show(*_timing(readout))
        if changed("vram_used_mib", "vram_total_mib", "gpu_freshness"):
            self._show_vram(readout)
        if changed("util_pct", "power_w", "temperature_c", "gpu_freshness"):
            self.query_one(".gpu", FitLine).show(*_gpu(readout))
        if changed("kv_cache_pct", "queue", "server_freshness"):
            self.query_one(".server", FitLine).show(*_server(readout))
        if changed("quality"):
            self.query_one(QualityList).show(readout.quality)
        if changed("errors", "last_error"):
            self.query_one(".errors", FitLine).show(_errors(readout))
            self.set_class(readout.errors > 0, "-has-errors")
        return True

    def _show_vram(self, r: PaneReadout) -> None:
        meter = self.query_one(Meter)
        if r.vram_used_mib is None or r.gpu_freshness == "none":
            meter.show([("VRAM", "no telemetry"), ("VRAM", "—")], None)
            return
        total = r.vram_total_mib
        fraction = r.vram_used_mib / total if total else None
        percent = "" if fraction is None else f" {fraction * 100:.0f}%"
        total_text = units.DASH if total is None else f"{total:.0f}"
        label = "VRAM STALE" if r.gpu_freshness == "stale" else "VRAM"
        meter.show(
            [
                (label, f"{units.mib(r.vram_used_mib)} / {units.mib(total)} MiB {percent}"),
                (label, f"{units.mib(r.vram_used_mib)}/{units.mib(total)} MiB{percent}"),
                (label, f"{r.vram_used_mib:.0f}/{total_text} MiB{percent}"),
                (label.replace("VRAM ", ""), f"{r.vram_used_mib:.0f}/{total_text}{percent}"),
            ],
            fraction,
            high=bool(fraction and fraction >= VRAM_HIGH_FRACTION),
        )


def _timing(r: PaneReadout) -> tuple[Content, ...]:
    # Numbers keep a fixed width, so the line neither jitters nor changes wording as they move.
    in_flight = units.DASH if r.in_flight is None else str(r.in_flight)
    target = units.DASH if r.target is None else str(r.target)
    ttft = units.seconds_as_ms(r.ttft_p50_s).rjust(6)
    flight = f"{in_flight}/{target}"
    return (
        Content.assemble(
            ("TTFT p50 ", "$text-muted"), ttft, ("   in flight ", "$text-muted"), flight
        ),
        Content.assemble(("TTFT ", "$text-muted"), ttft, ("  in flight ", "$text-muted"), flight),
        Content.assemble(("TTFT ", "$text-muted"), ttft, ("  ", ""), flight),
    )


def _gpu(r: PaneReadout) -> tuple[Content, ...]:
    if r.gpu_freshness == "none":
        return (Content.styled("GPU —  no telemetry", "$text-muted"),)
    stale = r.gpu_freshness == "stale"
    value_style = "$text-muted" if stale else ""
    values = [
        units.pct(r.util_pct).rjust(4),
        units.watts(r.power_w).rjust(5),
        units.celsius(r.temperature_c).rjust(5),
    ]
    wordings = []
    for label, gap in (("GPU util ", "   "), ("GPU ", "  "), ("", " ")):
        parts: list[tuple[str, str]] = [(label, "$text-muted")]
        for index, value in enumerate(values):
            parts += [(gap if index else "", ""), (value, value_style)]
        if stale:
            parts += [(gap, ""), ("STALE", "bold $warning")]
        wordings.append(Content.assemble(*parts))
    return tuple(wordings)


def _server(r: PaneReadout) -> tuple[Content, ...]:
    if r.server_freshness == "none":
        return (Content.styled("KV —  no server metrics", "$text-muted"),)
    queue = units.DASH if r.queue is None else f"{r.queue:.0f}"
    kv = units.pct(r.kv_cache_pct, 1).rjust(5)
    stale: list[tuple[str, str]] = (
        [("  ", ""), ("STALE", "bold $warning")] if r.server_freshness == "stale" else []
    )
    return (
        Content.assemble(
            ("KV cache ", "$text-muted"), kv, ("   queue ", "$text-muted"), queue, *stale
        ),
        Content.assemble(("KV ", "$text-muted"), kv, ("  queue ", "$text-muted"), queue, *stale),
    )


def _errors(r: PaneReadout) -> Content:
    if not r.errors and not r.last_error:
        return Content.styled("no errors", "$text-muted")
    count = f"✗ {r.errors} error{'s' if r.errors != 1 else ''}"
    if not r.last_error:
        return Content.styled(count, "bold $error")
    return Content.assemble((count, "bold $error"), "  ", (r.last_error, "$text-muted"))

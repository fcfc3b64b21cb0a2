"""GpuPane: one endpoint's live pane on the fleet screen, and the read-out it is drawn from.

``pane_readout`` turns the endpoint's state into a frozen ``PaneReadout`` of plain values, one
part per line; the pane repaints a line only when its part changed (``OnChange``), so a pane
whose numbers hold still costs nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.events import Resize
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from nvfp4_tui.core.endpoint_state import EndpointState
from nvfp4_tui.core.figures.pane import (
    PaneFigures,
    ServerGauges,
    SuiteQuality,
    pane_figures,
)
from nvfp4_tui.core.figures.scores import DEFAULT_SCORE, SCORE_LABELS
from nvfp4_tui.core.plain_text import one_line, widget_id
from nvfp4_tui.tui import units
from nvfp4_tui.tui.readouts import class_badge, decode_bins, gpu_tag
from nvfp4_tui.tui.text_fit import fit_words
from nvfp4_tui.tui.widgets.big_number import BigNumber
from nvfp4_tui.tui.widgets.fit_line import FitLine
from nvfp4_tui.tui.widgets.meter import Meter
from nvfp4_tui.tui.widgets.on_change import OnChange
from nvfp4_tui.tui.widgets.spark_bars import SparkBars

# "before_done": the latest sample was taken while the endpoint still ran (telemetry ended
# with the run): it is no reading of the card now.
Freshness = Literal["none", "stale", "ok", "before_done"]
SPARK_WINDOW_S = 60.0
SPARK_BINS = 60  # one-second bins; each column of the sparkline shows the highest of its bins
VRAM_HIGH_FRACTION = 0.97
MIN_QUALITY_BAR = 6  # narrower quality bars read as noise: below this the bar is left out
# The big number keeps this many characters (padded with spaces, drawn blank), so a rate
# crossing 99 -> 100 does not change the widget's width and lay the whole screen out again.
DECODE_CHARS = 3
# Rows of a pane besides its quality list: border 2, status 1, big number 3, TTFT, VRAM, GPU,
# server and errors 1 each. The SLO line adds one when the run has SLO targets.
PANE_FIXED_ROWS = 11
TITLE_FRAME_W = 6  # the border's corners and rules, and the spaces around its title

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
class TimingLine:
    level: str | None  # the load level the TTFT median is of
    ttft_p50_s: float | None
    in_flight: int | None
    target: int | None
    others: tuple[tuple[str, float | None], ...] = ()  # once done: the other levels' medians


@dataclass(frozen=True)
class VramLine:
    used_mib: float | None
    total_mib: float | None
    freshness: Freshness


@dataclass(frozen=True)
class GpuLine:
    util_pct: float | None
    power_w: float | None
    temperature_c: float | None
    freshness: Freshness


@dataclass(frozen=True)
class ServerLine:
    gauges: ServerGauges | None
    freshness: Freshness


@dataclass(frozen=True)
class SloLine:
    shown: bool  # the run has SLO targets
    attainment_pct: int | None  # of the phase now running (or the last): whole percent
    target_pct: int
    goodput_rps: float | None  # requests that met the SLO per second, to one decimal


@dataclass(frozen=True)
class ErrorLine:
    count: int
    last: str | None
    timing_doubt_s: float | None  # the runner's loop lag, when it may have distorted timings


@dataclass(frozen=True)
class PaneReadout:
    """Everything a pane shows, as plain values: each field is what one part of it is drawn from."""

    status: str
    decode_tps: float | None
    decode_words: tuple[str, ...]  # what the big number is, longest wording first
    spark: tuple[float, ...]
    timing: TimingLine
    vram: VramLine
    gpu: GpuLine
    server: ServerLine
    slo: SloLine
    quality: tuple[SuiteQuality, ...]
    score_name: str  # which score ``quality`` holds
    errors: ErrorLine


def _freshness(present: bool, stale: bool) -> Freshness:
    return "none" if not present else "stale" if stale else "ok"


def pane_height(endpoint: EndpointState) -> int:
    """The rows a pane needs to show all of ``endpoint`` without cutting a line."""
    return PANE_FIXED_ROWS + max(1, len(endpoint.scored_suites())) + int(endpoint.load.has_slo)


def pane_readout(
    endpoint: EndpointState,
    now: float,
    score_name: str = DEFAULT_SCORE,
    *,
    spark_end_t: float | None = None,
) -> PaneReadout:
    """What the pane shows at ``now``; its sparkline ends at ``spark_end_t`` (default ``now``:
    a finished run's views pass its end, so the last minute of the run stays in view)."""
    figures = pane_figures(endpoint, now, score_name)
    # A finished run's telemetry is as fresh as it was when the run ended, not STALE forever.
    end_t = now if spark_end_t is None else spark_end_t
    load = endpoint.load
    slo = load.current() if load.has_slo else None
    attainment = slo.attainment if slo else None
    goodput = slo.goodput_rps if slo else None
    gpu = endpoint.gpu
    sample = gpu.latest if gpu else None
    gpu_freshness = _freshness(sample is not None, bool(gpu and gpu.stale(end_t)))
    done_t = endpoint.done_t
    if sample is not None and done_t is not None and sample.t < done_t:
        gpu_freshness = "before_done"
    error = endpoint.last_error
    error_text = None
    if error is not None:
        error_text = one_line(f"{error.kind or 'error'}: {error.message or ''}").rstrip(": ")
    elif endpoint.status in ("down", "error") and endpoint.status_message:
        error_text = one_line(endpoint.status_message)
    return PaneReadout(
        status=figures.status,
        decode_tps=figures.decode_tps,
        decode_words=decode_words(figures),
        # Whole seconds only: the sparkline moves once a second, not with every progress event.
        spark=tuple(
            decode_bins(
                endpoint.decode_history,
                math.floor(end_t),
                window_s=SPARK_WINDOW_S,
                bins=SPARK_BINS,
            )
        ),
        timing=timing_line(figures),
        vram=VramLine(
            used_mib=sample.vram_used_mib if sample else None,
            total_mib=sample.vram_total_mib if sample else None,
            freshness=gpu_freshness,
        ),
        gpu=GpuLine(
            util_pct=sample.util_gpu_pct if sample else None,
            power_w=sample.power_w if sample else None,
            temperature_c=sample.temperature_c if sample else None,
            freshness=gpu_freshness,
        ),
        server=ServerLine(
            figures.server,
            _freshness(
                figures.server is not None,
                endpoint.server_stale(end_t) and not (figures.server and figures.server.peak),
            ),
        ),
        slo=SloLine(
            shown=load.has_slo,
            attainment_pct=None if attainment is None else math.floor(attainment * 100),
            target_pct=round(load.targets.attainment * 100),
            goodput_rps=None if goodput is None else round(goodput, 1),
        ),
        quality=figures.quality,
        score_name=score_name,
        errors=ErrorLine(endpoint.requests_error, error_text, figures.timing_doubt_s),
    )


def timing_line(figures: PaneFigures) -> TimingLine:
    """The TTFT median of the level shown, and once done the other levels' beside it."""
    level = figures.shown_level.label if figures.shown_level is not None else None
    others: tuple[tuple[str, float | None], ...] = ()
    if figures.decode_kind == "final":
        others = tuple((lv.load.label, lv.ttft_p50_s) for lv in figures.levels[1:])
    return TimingLine(level, figures.ttft_p50_s, figures.in_flight, figures.target, others)


def decode_words(figures: PaneFigures) -> tuple[str, ...]:
    """The words beside the big number, saying what it is: the live rate at the phase's level,
    paused, or once phases are over the mean at the base level and the others after it. A
    scaled simulator's rate is in modelled time, which the run's header says once."""
    # Longest first; a pane 26 columns wide has 15 beside the number, so the last ones fit it.
    if figures.decode_kind == "paused":
        return ("paused: no new requests", "paused")
    p50 = _p50_words(figures.decode_p50_tps)
    if figures.decode_kind == "final" and figures.levels:
        base, *others = figures.levels
        rest = [f"{lv.load.label} {units.tps(lv.decode_tps)}" for lv in others]
        head = f"tok/s pooled {base.load.label}"
        short = f"pooled {base.load.label}"
        return (
            " · ".join([head, *p50[:1], *rest]),
            " · ".join([short, *p50[1:], *rest]),
            " · ".join([short, *rest]),
            head,
            short,
        )
    level = f" {figures.level.label}" if figures.level is not None else ""
    if figures.decode_kind == "none" and figures.level is not None:
        return (f"tok/s decode{level}: none finished yet", f"tok/s{level}: none yet", "tok/s")
    if figures.decode_kind == "recent":
        shown = f" {figures.shown_level.label}" if figures.shown_level is not None else ""
        return (
            *(f"tok/s decode{shown} recent · {words}" for words in p50),
            f"tok/s decode{shown} (last requests)",
            f"tok/s decode{shown} recent",
            "tok/s recent",
        )
    return (
        *(f"tok/s decode{level} · {words}" for words in p50),
        f"tok/s decode{level}",
        "tok/s decode",
    )


def _p50_words(p50_tps: float | None) -> tuple[str, ...]:
    """The median request's own rate, longest wording first; none before a request finished."""
    if p50_tps is None:
        return ()
    return (f"request p50 {p50_tps:.0f}", f"p50 {p50_tps:.0f}")


def decode_text(decode_tps: float | None) -> str:
    """The big number: whole tokens per second, padded to ``DECODE_CHARS``."""
    text = units.DASH if decode_tps is None else f"{decode_tps:.0f}"
    return text.ljust(DECODE_CHARS)


def status_content(status: str) -> Content:
    mark = STATUS_MARK.get(status, "○")
    return Content.styled(f"{mark} {STATUS_TEXT.get(status, status)}", STATUS_STYLE.get(status, ""))


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

    _STATUS_CLASSES: ClassVar[tuple[str, ...]] = tuple(f"-{s}" for s in STATUS_TEXT)

    def __init__(self, endpoint: EndpointState) -> None:
        super().__init__(id=widget_id("pane", endpoint.id))
        self.endpoint_id = endpoint.id
        info = endpoint.info
        self._gpu_tag = gpu_tag(info)
        self._label = info.label
        self._title_for(len(self._gpu_tag) + 3 + len(self._label) + TITLE_FRAME_W)  # all of it
        self._badge = class_badge(info)
        self.readout: PaneReadout | None = None  # the last one shown

    def compose(self) -> ComposeResult:
        # Kept as attributes: ``show`` runs several times a second and a query walks the DOM.
        self._status = Static(classes="status")
        self._decode = BigNumber(classes="decode")
        self._unit = FitLine(classes="unit")
        self._spark = SparkBars(classes="spark")
        self._timing = FitLine(classes="timing")
        self._vram = Meter(classes="vram")
        self._gpu = FitLine(classes="gpu")
        self._server = FitLine(classes="server")
        self._slo = FitLine(classes="slo")
        self._quality = QualityList()
        self._errors = FitLine(classes="errors")
        # Each part of the read-out, painted again only when it changed: most hold still.
        self._on_status = OnChange(self._paint_status)
        self._on_decode = OnChange(self._paint_decode)
        self._on_decode_words = OnChange(self._paint_decode_words)
        self._on_spark = OnChange(self._spark.show)
        self._on_timing = OnChange(self._paint_timing)
        self._on_vram = OnChange(self._paint_vram)
        self._on_gpu = OnChange(self._paint_gpu)
        self._on_server = OnChange(self._paint_server)
        self._on_slo = OnChange(self._paint_slo)
        self._on_quality = OnChange(self._quality.show)
        self._on_score_name = OnChange(self._paint_score_name)
        self._on_errors = OnChange(self._paint_errors)
        with Horizontal(classes="pane-row"):
            yield Static(self._badge, classes="badge", markup=False)
            yield self._status
        with Horizontal(classes="speed"):
            yield self._decode
            with Vertical(classes="speed-side"):
                yield self._unit
                yield self._spark
        yield self._timing
        yield self._vram
        yield self._gpu
        yield self._server
        yield self._slo
        yield self._quality
        yield self._errors

    def _title_for(self, width: int) -> None:
        # Textual would cut the border title mid-word ("Huihui Gemma4-2…"): cut it at a word.
        self._titled_w = width
        room = width - TITLE_FRAME_W - len(self._gpu_tag) - 3
        self.border_title = Content.assemble(
            (self._gpu_tag, "bold"), " · ", fit_words(self._label, room)
        )

    def fit_title(self) -> None:
        """The name cut to the pane's width, once that width is known or when it changed."""
        if self.outer_size.width and self.outer_size.width != self._titled_w:
            self._title_for(self.outer_size.width)

    def on_resize(self, event: Resize) -> None:
        self.fit_title()

    def on_click(self) -> None:
        self.post_message(self.Selected(self.endpoint_id))

    def show(self, readout: PaneReadout) -> bool:
        """Repaint the parts whose values changed since the last read-out; False before mount."""
        if not self.is_mounted:
            return False
        self.readout = readout
        self._on_status.show(readout.status)
        self._on_decode.show(readout.decode_tps)
        self._on_decode_words.show(readout.decode_words)
        self._on_spark.show(readout.spark)
        self._on_timing.show(readout.timing)
        self._on_vram.show(readout.vram)
        self._on_gpu.show(readout.gpu)
        self._on_server.show(readout.server)
        self._on_slo.show(readout.slo)
        self._on_quality.show(readout.quality)
        self._on_score_name.show(readout.score_name)
        self._on_errors.show(readout.errors)
        return True

    def _paint_status(self, status: str) -> None:
        self._status.update(status_content(status), layout=False)
        self.remove_class(*self._STATUS_CLASSES)
        self.add_class(f"-{status}")

    def _paint_decode(self, decode_tps: float | None) -> None:
        self._decode.show(decode_text(decode_tps))

    def _paint_decode_words(self, words: tuple[str, ...]) -> None:
        self._unit.show(*words)

    def _paint_timing(self, line: TimingLine) -> None:
        self._timing.show(*_timing(line))

    def _paint_vram(self, line: VramLine) -> None:
        meter = self._vram
        used, total = line.used_mib, line.total_mib
        if used is None or line.freshness == "none":
            meter.show([("VRAM", "no telemetry"), ("VRAM", "—")], None)
            return
        fraction = used / total if total else None
        percent = "" if fraction is None else f" {fraction * 100:.0f}%"
        total_text = units.DASH if total is None else f"{total:.0f}"
        label = "VRAM STALE" if line.freshness == "stale" else "VRAM"
        meter.show(
            [
                (label, f"{units.mib(used)} / {units.mib(total)} MiB {percent}"),
                (label, f"{units.mib(used)}/{units.mib(total)} MiB{percent}"),
                (label, f"{used:.0f}/{total_text} MiB{percent}"),
                (label.replace("VRAM ", ""), f"{used:.0f}/{total_text}{percent}"),
            ],
            fraction,
            high=bool(fraction and fraction >= VRAM_HIGH_FRACTION),
        )

    def _paint_gpu(self, line: GpuLine) -> None:
        self._gpu.show(*_gpu(line))

    def _paint_server(self, line: ServerLine) -> None:
        self._server.show(*_server(line))

    def _paint_slo(self, line: SloLine) -> None:
        self._slo.display = line.shown
        self._slo.show(*_slo(line))

    def _paint_score_name(self, score_name: str) -> None:
        self.border_subtitle = f"{SCORE_LABELS.get(score_name, score_name)} scores"

    def _paint_errors(self, line: ErrorLine) -> None:
        self._errors.show(_errors(line))
        self.set_class(line.count > 0, "-has-errors")


def _timing(r: TimingLine) -> tuple[Content, ...]:
    # Numbers keep a fixed width, so the line neither jitters nor changes wording as they move.
    level = f" {r.level}" if r.level else ""
    ttft = units.seconds_as_ms(r.ttft_p50_s).rjust(6)
    if r.others:  # done: nothing in flight; each level's median instead
        rest: list[tuple[str, str] | str] = []
        for label, value in r.others:
            rest += [(f" · {label} ", "$text-muted"), units.seconds_as_ms(value)]
        return (
            Content.assemble(("TTFT p50" + level + " ", "$text-muted"), ttft.strip(), *rest),
            Content.assemble(("TTFT" + level + " ", "$text-muted"), ttft.strip(), *rest),
            Content.assemble(("TTFT p50" + level + " ", "$text-muted"), ttft.strip()),
            Content.assemble(("TTFT" + level + " ", "$text-muted"), ttft.strip()),
        )
    in_flight = units.DASH if r.in_flight is None else str(r.in_flight)
    target = units.DASH if r.target is None else str(r.target)
    flight = f"{in_flight}/{target}"
    return (
        Content.assemble(
            ("TTFT p50" + level + " ", "$text-muted"),
            ttft,
            ("   in flight ", "$text-muted"),
            flight,
        ),
        Content.assemble(
            ("TTFT p50" + level + " ", "$text-muted"), ttft, ("  in flight ", "$text-muted"), flight
        ),
        Content.assemble(("TTFT" + level + " ", "$text-muted"), ttft, ("  ", ""), flight),
        Content.assemble(("TTFT ", "$text-muted"), ttft, ("  ", ""), flight),
    )


def _slo(r: SloLine) -> tuple[Content, ...]:
    """Attainment of the SLO in the current phase (coloured against its target), and goodput."""
    if r.attainment_pct is None:
        return (Content.styled("SLO —  no requests yet", "$text-muted"),)
    met = r.attainment_pct >= r.target_pct
    pct = (f"{r.attainment_pct}%", "$success" if met else "bold $error")
    goodput = units.DASH if r.goodput_rps is None else f"{r.goodput_rps:.1f}"
    target = f" of ≥{r.target_pct}%"
    return (
        Content.assemble(
            ("SLO met ", "$text-muted"),
            pct,
            (target, "$text-muted"),
            ("   goodput ", "$text-muted"),
            goodput,
            (" req/s", "$text-muted"),
        ),
        Content.assemble(
            ("SLO ", "$text-muted"), pct, ("   goodput ", "$text-muted"), goodput, ("/s", "")
        ),
        Content.assemble(("SLO ", "$text-muted"), pct, ("  good ", "$text-muted"), goodput, "/s"),
    )


def _gpu(r: GpuLine) -> tuple[Content, ...]:
    if r.freshness == "none":
        return (Content.styled("GPU —  no telemetry", "$text-muted"),)
    if r.freshness == "before_done":  # rather no numbers than busy ones beside a "done"
        return (
            Content.styled("GPU —  no sample since done", "$text-muted"),
            Content.styled("GPU — none since done", "$text-muted"),
        )
    stale = r.freshness == "stale"
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


def _server(r: ServerLine) -> tuple[Content, ...]:
    gauges = r.gauges
    if r.freshness == "none" or gauges is None:
        return (Content.styled("KV —  no server metrics", "$text-muted"),)
    running = units.DASH if gauges.running is None else f"{gauges.running:.0f}"
    waiting = units.DASH if gauges.waiting is None else f"{gauges.waiting:.0f}"
    kv = units.pct(gauges.kv_cache_pct, 1).rjust(5)
    stale: list[tuple[str, str]] = (
        [("  ", ""), ("STALE", "bold $warning")] if r.freshness == "stale" else []
    )
    peak = "peak " if gauges.peak else ""  # a done pane: the run's peaks, not the last scrape
    return tuple(
        Content.assemble(
            (f"{peak}{kv_word} ", "$text-muted"),
            kv,
            (f"{gap}{run_word} ", "$text-muted"),
            running,
            (f"{gap}{wait_word} ", "$text-muted"),
            waiting,
            *stale,
        )
        for kv_word, run_word, wait_word, gap in (
            ("KV cache", "running", "waiting", "  "),
            ("KV", "run", "wait", "  "),
            ("KV", "r", "w", " "),
        )
    )


def _errors(r: ErrorLine) -> Content:
    if not r.count and not r.last:
        if r.timing_doubt_s is not None:
            return Content.styled(
                f"⚠ timings may read {r.timing_doubt_s * 1000:.0f} ms late", "$warning"
            )
        return Content.styled("no errors", "$text-muted")
    count = f"✗ {r.count} error{'s' if r.count != 1 else ''}"
    if not r.last:
        return Content.styled(count, "bold $error")
    return Content.assemble((count, "bold $error"), "  ", (r.last, "$text-muted"))

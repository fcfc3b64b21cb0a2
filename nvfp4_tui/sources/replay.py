"""Replay of a recorded snapshot on its own timeline: pause, speed steps, seek, home and end.

The timeline places each event when the live UI would have seen it: a RequestFinished when its
request ended (``t + e2e_s``; its ``t`` is when it was sent), every other event at its ``t``.
Playback runs at a speed from ``SPEED_STEPS`` (or any positive factor given on the command line);
``None`` is "max": events go out in chunks as fast as the consumer takes them.

The request and sample rows stay in the snapshot's polars frames; the timeline is an array of
positions into them, and a batch's rows become events only when it is due. So starting a replay
of a million requests and ten million GPU samples builds none of them.

Seeking forward delivers the skipped events in one batch. Seeking backwards cannot un-apply
events, so the next batch is a ``ResetBatch`` holding every event from the start up to the new
position: a consumer drops its state and folds that batch into a fresh one.

A batch longer than a history ring (``events.HISTORY_LEN``) carries only the telemetry samples the
state still shows after it: per GPU and per endpoint the last ``HISTORY_LEN`` samples, and those
that set the latest sample and the first and last VRAM; a ``SamplesSkipped`` counts the rest. The
state folded from it is the one every sample would have built, so a seek to the end of a long run
costs its requests and a few thousand samples, not every sample it recorded.

A snapshot whose writer died (killed, crashed) holds no RunFinished; the replay ends it with one
of its own, ``aborted`` with ``WRITER_GONE_MESSAGE``, at its last event, so views show how it
ended rather than a run that seems to go on.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import math
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from nvfp4_tui.core.events import (
    HISTORY_LEN,
    Event,
    RequestFinished,
    RunFinished,
    RunStarted,
    SamplesSkipped,
)
from nvfp4_tui.core.gpu_track import GpuKeys
from nvfp4_tui.sources.base import Capabilities, Folded, Playback, ResetBatch, SourceStatus
from nvfp4_tui.store.reader import Snapshot, open_snapshot, sorted_rows
from nvfp4_tui.store.schema import EVENTS_TABLE, TABLES, frame_to_events

# x1 ... x60, then None: as fast as the consumer takes the events.
SPEED_STEPS: tuple[float | None, ...] = (1.0, 2.0, 5.0, 10.0, 60.0, None)
TICK_S = 1 / 30  # at a finite speed, batches are at least this far apart (bounded wake-ups)
MAX_SPEED_CHUNK = 5000  # events per batch at max speed, so the consumer can draw between them
BUILD_INLINE_EVENTS = 5000  # a larger batch (a seek in a long run) is built on a thread
WRITER_GONE_MESSAGE = "writer gone: the run's process ended without finishing its snapshot"


# Which frame a timeline row comes from: a snapshot table by its place in TABLES, or the
# replay's own events after them.
_RUN, _GPU, _SERVER = (TABLES.index(table) for table in (EVENTS_TABLE, "gpu", "server"))
_OWN = len(TABLES)


def _batch(events: list[Folded], reset: bool) -> list[Folded]:
    return ResetBatch(events) if reset else events


def timeline_t(event: Event, time_scales: Mapping[str, float] | None = None) -> float:
    """When the event appears on the replay timeline: a request when it ended (its e2e_s is in
    the modelled seconds of its endpoint's ``time_scales``), others at ``t``."""
    if (
        isinstance(event, RequestFinished)
        and event.e2e_s is not None
        and math.isfinite(event.e2e_s)
    ):
        return event.t + event.e2e_s / (time_scales or {}).get(event.endpoint_id, 1.0)
    return event.t


def _time_scales(run: Sequence[Event]) -> dict[str, float]:
    """Each endpoint's simulator clock factor, from the run's starts (1: real time)."""
    return {
        info.id: info.time_scale
        for event in run
        if isinstance(event, RunStarted)
        for info in event.endpoints
    }


def _ring_keep(by: list[str], extremes: list[pl.Expr]) -> pl.Expr:
    """Which of a batch's samples (in batch order, column ``pos``) the state still shows: the
    last ``HISTORY_LEN`` of each ``by`` group, the latest (by ``t``, the last of equals), and
    the rows ``extremes`` name. A group with a non-finite ``t`` is kept whole: "latest" means
    nothing there."""
    t, pos = pl.col("t"), pl.col("pos")
    whole = ~t.is_finite().fill_null(False).all().over(by)
    recent = pl.int_range(pl.len()).over(by) >= pl.len().over(by).cast(pl.Int64) - HISTORY_LEN
    latest = pos == pos.filter(t == t.max()).max().over(by)
    keep = whole | recent | latest
    for extreme in extremes:
        keep = keep | extreme
    return keep.fill_null(True)


def _vram_extremes(by: list[str]) -> list[pl.Expr]:
    """The samples that set a GPU's first and last VRAM: a finite value at the earliest ``t``
    (the first of equals) and at the latest (the last of equals), as ``GpuTrack`` keeps them."""
    t, pos = pl.col("t"), pl.col("pos")
    finite = pl.col("vram_used_mib").is_finite().fill_null(False)
    first = pos == pos.filter(finite & (t == t.filter(finite).min())).min().over(by)
    last = pos == pos.filter(finite & (t == t.filter(finite).max())).max().over(by)
    return [first.fill_null(False), last.fill_null(False)]


def _skip_counts(
    samples: pl.DataFrame, by: list[str], also: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Per ``by`` group with samples not kept: how many, and the ``pos`` and ``t`` (and the
    ``also`` columns) of its last sample (always kept), after which the count goes."""
    counts = samples.group_by(by, maintain_order=True).agg(
        pl.col(*also).last() if also else [],
        skipped=(~pl.col("keep")).sum(),
        after=pl.col("pos").last(),
        t=pl.col("t").last(),
    )
    return counts.filter(pl.col("skipped") > 0).to_dicts()


class _Timeline:
    """A snapshot's events in replay order, held as positions into its frames."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._run = snapshot.run_events()
        self._time_scales = _time_scales(self._run)
        self._frames = {table: snapshot.table(table) for table in TABLES if table != EVENTS_TABLE}
        keys = [self._keys_of(table) for table in TABLES]
        self._own: list[Event] = []
        if snapshot.writer_gone:
            finite = [
                frame.get_column("key").filter(frame.get_column("key").is_finite())
                for frame in keys
            ]
            maxima = [m for k in finite if isinstance(m := k.max(), int | float)]  # None if empty
            last_t = float(max(maxima, default=0.0))
            self._own.append(RunFinished(last_t, "aborted", WRITER_GONE_MESSAGE))
            # An infinite tie-break puts it after every event at the same time, as appended.
            keys.append(pl.DataFrame({"key": [last_t], "t": [math.inf]}))
        self._order = sorted_rows(keys)
        # A damaged row's NaN or infinite time sorts to an end of the timeline: it shows there,
        # at the nearest finite time, so the replay clock only ever runs over finite times.
        key = pl.col("key")
        self._keys = self._order.select(
            pl.when(key.is_finite()).then(key).forward_fill().backward_fill().fill_null(0.0)
        ).to_series()
        runs = self._order.with_row_index("pos").filter(pl.col("table") == _RUN)
        starts = [
            (pos, event)
            for pos, row in runs.select("pos", "row").iter_rows()
            if isinstance(event := self._run[row], RunStarted)
        ]
        # Where each RunStarted is: the endpoints it names are the ones the state knows after it.
        self._start_positions = [pos for pos, _ in starts]
        self._starts = [event for _, event in starts]

    def _keys_of(self, table: str) -> pl.DataFrame:
        """``key`` (when each row appears on the timeline) and ``t`` of one table's rows."""
        if table == EVENTS_TABLE:
            return pl.DataFrame(
                {
                    "key": [timeline_t(e, self._time_scales) for e in self._run],
                    "t": [e.t for e in self._run],
                },
                schema={"key": pl.Float64, "t": pl.Float64},
            )
        t = pl.col("t")
        if table == "requests":  # as timeline_t has it
            scale = pl.col("endpoint_id").replace_strict(
                self._time_scales, default=1.0, return_dtype=pl.Float64
            )
            e2e = pl.col("e2e_s") / scale
            return self._frames[table].select(
                key=pl.when(e2e.is_finite()).then(t + e2e).otherwise(t), t=t
            )
        return self._frames[table].select(key=t, t=t)

    def __len__(self) -> int:
        return self._order.height

    def key(self, index: int) -> float:
        """When the event at ``index`` appears on the timeline."""
        return float(self._keys[index])

    def count_through(self, t: float) -> int:
        """How many events appear at or before ``t``."""
        return int(self._keys.search_sorted(t, side="right"))

    def events(self, start: int, stop: int) -> list[Folded]:
        """The events at positions ``start`` to ``stop``, folded when they outnumber a ring."""
        window = self._order.slice(start, stop - start).with_row_index("pos")
        skipped: dict[int, list[SamplesSkipped]] = {}
        if window.height > HISTORY_LEN:
            window, skipped = self._fold(window, start)
        return self._build(window, skipped)

    def _fold(
        self, window: pl.DataFrame, start: int
    ) -> tuple[pl.DataFrame, dict[int, list[SamplesSkipped]]]:
        """The window without the samples the state would not show, and the counts of those
        left out, each to go after the window row (``pos``) it is keyed by."""
        starts, known = self._runs(start, start + window.height)
        marks = pl.repeat(False, window.height, eager=True).scatter(starts, True)
        window = window.with_columns(run=marks.cum_sum().cast(pl.Int64))
        # By card: each node of a fleet has a GPU 0, and the state keeps them apart.
        card = ["node", "gpu"]
        gpu = self._cards(self._samples(window, _GPU, ["host", "gpu", "t", "vram_used_mib"]), start)
        gpu = gpu.with_columns(keep=_ring_keep(card, _vram_extremes(card)))
        server = self._samples(window, _SERVER, ["endpoint_id", "t"])
        server = server.join(known, on=["run", "endpoint_id"], how="left", maintain_order="left")
        # An endpoint the state does not know drops each sample and counts each drop: keep them.
        endpoint_run = ["run", "endpoint_id"]
        server = server.with_columns(keep=_ring_keep(endpoint_run, []) | pl.col("known").is_null())
        skipped: dict[int, list[SamplesSkipped]] = {}
        for row in _skip_counts(gpu, card, also=["host"]):
            # The host of the group's last sample names its card where the count is applied.
            marker = SamplesSkipped(row["t"], row["skipped"], gpu=row["gpu"], host=row["host"])
            skipped.setdefault(row["after"], []).append(marker)
        for row in _skip_counts(server, endpoint_run):
            marker = SamplesSkipped(row["t"], row["skipped"], endpoint_id=row["endpoint_id"])
            skipped.setdefault(row["after"], []).append(marker)
        kept = pl.repeat(True, window.height, eager=True)
        for frame in (gpu, server):
            kept = kept.scatter(frame.filter(~pl.col("keep")).get_column("pos"), False)
        return window.filter(kept), skipped

    def _runs(self, start: int, stop: int) -> tuple[pl.Series, pl.DataFrame]:
        """The window positions of the RunStarted events in ``start:stop``, and the endpoints
        the state knows in each run of the window (``run`` 0 is before the first of them, under
        the RunStarted in force when the window starts)."""
        first = bisect.bisect_left(self._start_positions, start)
        last = bisect.bisect_left(self._start_positions, stop)
        starts = pl.Series([pos - start for pos in self._start_positions[first:last]])
        pairs = [
            (run, info.id)
            for run, index in enumerate(range(first - 1, last))
            if index >= 0
            for info in self._starts[index].endpoints
        ]
        known = pl.DataFrame(
            {
                "run": [run for run, _ in pairs],
                "endpoint_id": [endpoint_id for _, endpoint_id in pairs],
                "known": [True] * len(pairs),
            },
            schema={"run": pl.Int64, "endpoint_id": pl.String, "known": pl.Boolean},
        )
        return starts.cast(pl.UInt32), known

    def _cards(self, samples: pl.DataFrame, start: int) -> pl.DataFrame:
        """GPU samples with the ``node`` of the card each names under the run in force where it
        lies (``GpuKeys``, as the state files them)."""
        first = bisect.bisect_left(self._start_positions, start)
        seen = samples.select("run", "host", "gpu").unique()
        nodes = []
        for run, host, gpu in seen.iter_rows():
            index = first - 1 + run
            keys = GpuKeys.of(self._starts[index].endpoints) if index >= 0 else GpuKeys()
            nodes.append(keys.sampled(gpu, host)[0])
        cards = seen.with_columns(node=pl.Series(nodes, dtype=pl.String))
        return samples.join(
            cards, on=["run", "host", "gpu"], how="left", nulls_equal=True, maintain_order="left"
        )

    def _samples(self, window: pl.DataFrame, table: int, columns: list[str]) -> pl.DataFrame:
        """The window's rows of one sample table: ``pos``, ``run`` and the table's ``columns``."""
        rows = window.filter(pl.col("table") == table)
        values = self._frames[TABLES[table]].select(columns)[rows.get_column("row")]
        return pl.concat([rows.select("pos", "run"), values], how="horizontal")

    def _build(
        self, window: pl.DataFrame, skipped: dict[int, list[SamplesSkipped]]
    ) -> list[Folded]:
        """The window's events in its order, each ``skipped`` count after the row it names."""
        tables = window.get_column("table")
        made: dict[int, Iterator[Event]] = {}
        for table in tables.unique().to_list():
            rows = window.filter(pl.col("table") == table).get_column("row")
            if table == _RUN:
                made[table] = iter([self._run[row] for row in rows.to_list()])
            elif table == _OWN:
                made[table] = iter([self._own[row] for row in rows.to_list()])
            else:
                name = TABLES[table]
                made[table] = iter(frame_to_events(name, self._frames[name][rows]))
        if not skipped:
            return [next(made[table]) for table in tables.to_list()]
        folded: list[Folded] = []
        for table, pos in window.select("table", "pos").iter_rows():
            folded.append(next(made[table]))
            folded.extend(skipped.get(pos, ()))
        return folded


def parse_speed(text: str) -> float | None:
    """``"max"`` -> None, ``"5"`` / ``"x5"`` -> 5.0; ValueError unless a finite number > 0."""
    word = text.strip().lower()
    if word == "max":
        return None
    try:
        speed = float(word.removeprefix("x"))
    except ValueError:
        raise ValueError(f"speed: expected a number > 0 or 'max', got {text!r}") from None
    if not (math.isfinite(speed) and speed > 0):
        raise ValueError(f"speed: expected a number > 0 or 'max', got {text!r}")
    return speed


def speed_label(speed: float | None) -> str:
    return "max" if speed is None else f"x{speed:g}"


class ReplaySource:
    """Plays a snapshot's events on the recorded timeline; controlled with ``command``.

    Commands: ``pause``, ``resume``, ``toggle``, ``faster``, ``slower``, ``speed:X`` (a number or
    ``max``), ``seek:+S`` / ``seek:-S`` (relative, seconds of run time), ``seek:S`` (absolute
    position), ``home``, ``end``. Unknown commands are ignored, as the EventSource protocol says.

    With ``hold_at_end`` (the UI's choice) ``batches`` keeps waiting for commands once everything
    is delivered, so the user can still seek back; without it the iteration ends there: with
    the recording, never because the recorded run ended.
    ``clock`` is the monotonic clock playback is timed by; tests inject their own.
    """

    capabilities = Capabilities(playback=True)
    messages: Sequence[str] = ()  # the recorded run's notes were printed when it ran

    def __init__(
        self,
        snapshot: Snapshot | Path,
        *,
        speed: float | None = 1.0,
        hold_at_end: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if speed is not None and not (math.isfinite(speed) and speed > 0):
            raise ValueError(f"speed must be a number > 0 or None (max), got {speed!r}")
        self.snapshot = snapshot if isinstance(snapshot, Snapshot) else open_snapshot(snapshot)
        self.hold_at_end = hold_at_end
        self._clock = clock
        self._timeline = _Timeline(self.snapshot)
        count = len(self._timeline)
        self.start_t = self._timeline.key(0) if count else 0.0
        self.end_t = self._timeline.key(count - 1) if count else 0.0
        self._speed = speed
        self._paused = False
        self._anchor_t = self.start_t  # run time at ``_anchor_mono``
        self._anchor_mono = clock()
        self._started = False  # the position moves only once playback has started
        self._cursor = 0  # events[:cursor] are delivered (or owed in a pending reset batch)
        self._reset_pending = False
        self._closed = False
        self._wake = asyncio.Event()

    # ---- read-outs for the UI

    @property
    def snapshot_path(self) -> Path:
        return self.snapshot.path

    @property
    def warnings(self) -> list[str]:
        """Parts of the snapshot that could not be read and were skipped, one line each."""
        return list(self.snapshot.warnings)

    @property
    def run_status(self) -> str:
        """The recorded run's status: ``complete``, ``aborted`` (its writer's death included), or
        ``running`` while another process still writes it."""
        return "aborted" if self.snapshot.writer_gone else self.snapshot.status

    @property
    def events_total(self) -> int:
        return len(self._timeline)

    @property
    def events_delivered(self) -> int:
        return self._cursor

    @property
    def duration_s(self) -> float:
        return self.end_t - self.start_t

    @property
    def position_t(self) -> float:
        """The replay's "now" on the recorded run's clock (Unix seconds)."""
        if self._paused or self._speed is None or not self._started:
            return self._anchor_t
        elapsed = (self._clock() - self._anchor_mono) * self._speed
        return min(self.end_t, self._anchor_t + elapsed)

    def clock(self) -> float:
        """``position_t`` as a clock for views that ask for "now" (staleness, elapsed time)."""
        return self.position_t

    @property
    def position_s(self) -> float:
        """Seconds of run time since the first event."""
        return self.position_t - self.start_t

    @property
    def speed(self) -> float | None:
        return self._speed

    @property
    def speed_label(self) -> str:
        return speed_label(self._speed)

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def at_end(self) -> bool:
        """Every event delivered and the position at the last one."""
        return self._cursor >= len(self._timeline) and not self._reset_pending

    def status(self) -> SourceStatus:
        playback = Playback(
            self.position_s, self.duration_s, self.speed_label, self._paused, self.at_end
        )
        return SourceStatus(playback=playback)

    # ---- control

    async def command(self, name: str) -> None:
        self.control(name)

    def control(self, name: str) -> None:
        """Apply one command at once (``command`` without the await); see the class docstring."""
        word, _, argument = name.strip().partition(":")
        if word == "pause":
            self._set_paused(True)
        elif word == "resume":
            self._set_paused(False)
        elif word == "toggle":
            self._set_paused(not self._paused)
        elif word == "faster":
            self._set_speed(self._next_speed(+1))
        elif word == "slower":
            self._set_speed(self._next_speed(-1))
        elif word == "speed":
            self._set_speed(parse_speed(argument))
        elif word == "seek":
            self._seek(argument)
        elif word == "home":
            self._seek_to(self.start_t)
        elif word == "end":
            self._seek_to(self.end_t)
        else:
            return
        self._wake.set()

    def _reanchor(self) -> None:
        self._anchor_t = self.position_t
        self._anchor_mono = self._clock()

    def _set_paused(self, paused: bool) -> None:
        self._reanchor()
        self._paused = paused

    def _set_speed(self, speed: float | None) -> None:
        self._reanchor()
        self._speed = speed

    def _next_speed(self, direction: int) -> float | None:
        current = self._speed
        if current is None:
            return None if direction > 0 else SPEED_STEPS[-2]
        finite = [s for s in SPEED_STEPS if s is not None]
        if direction > 0:
            return next((s for s in finite if s > current), None)
        return next((s for s in reversed(finite) if s < current), current)

    def _seek(self, argument: str) -> None:
        try:
            seconds = float(argument)
        except ValueError:
            raise ValueError(
                f"seek: expected seconds such as +10, -10 or 120, got {argument!r}"
            ) from None
        if not math.isfinite(seconds):
            raise ValueError(f"seek: expected a finite number of seconds, got {argument!r}")
        relative = argument.strip().startswith(("+", "-"))
        self._seek_to(self.position_t + seconds if relative else self.start_t + seconds)

    def _seek_to(self, target_t: float) -> None:
        target_t = min(self.end_t, max(self.start_t, target_t))
        self._anchor_t = target_t
        self._anchor_mono = self._clock()
        index = self._timeline.count_through(target_t)
        if index < self._cursor:
            self._cursor = index
            self._reset_pending = True

    # ---- delivery

    def start(self) -> None:
        """Start the playback clock (``batches`` does it; idempotent)."""
        if not self._started:
            self._started = True
            self._anchor_mono = self._clock()

    def take_due(self) -> list[Folded] | None:
        """The batch due now: a pending ``ResetBatch``, else the events up to the position."""
        due = self._due()
        if due is None:
            return None
        start, stop, reset = due
        return _batch(self._timeline.events(start, stop), reset)

    def _due(self) -> tuple[int, int, bool] | None:
        """The timeline positions of the batch due now, and whether it is a reset batch; the
        cursor moves past them."""
        if self._reset_pending:
            self._reset_pending = False
            return 0, self._cursor, True
        count = len(self._timeline)
        if self._speed is None and not self._paused and self._cursor < count:
            chunk_end = min(count, self._cursor + MAX_SPEED_CHUNK)
            self._anchor_t = max(self._anchor_t, self._timeline.key(chunk_end - 1))
        due = self._timeline.count_through(self.position_t)
        if due <= self._cursor:
            return None
        start, self._cursor = self._cursor, due
        return start, due, False

    def wait_s(self) -> float | None:
        """Seconds until the next event is due; None when only a command can change anything."""
        if self._reset_pending or (self._speed is None and not self._paused and not self.at_end):
            return 0.0
        if self._paused or self._cursor >= len(self._timeline):
            return None
        assert self._speed is not None
        return max(TICK_S, (self._timeline.key(self._cursor) - self.position_t) / self._speed)

    async def batches(self) -> AsyncIterator[list[Folded]]:
        self.start()
        while not self._closed:
            due = self._due()
            if due is not None:
                start, stop, reset = due
                if stop - start > BUILD_INLINE_EVENTS:  # off the loop: keys keep working
                    events = await asyncio.to_thread(self._timeline.events, start, stop)
                else:
                    events = self._timeline.events(start, stop)
                yield _batch(events, reset)
                # A consumer that never awaits would otherwise starve its own loop at max speed.
                await asyncio.sleep(0)
                continue
            if self.at_end and not self.hold_at_end:
                return
            wait = self.wait_s()
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    async def close(self) -> None:
        self._closed = True
        self._wake.set()

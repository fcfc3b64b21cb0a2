"""The one interface every event source offers the UI: its batches, what it can be asked to do,
and what it can tell about itself.

A live run, a followed snapshot and a replay differ only in what their ``capabilities`` and
``status()`` say, so the UI reads those and never asks which source it has. A batch is a list of
events; a ``ResetBatch`` replaces every batch before it (a replay's seek backwards).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from nvfp4_tui.core.events import Event, SamplesSkipped

Folded = Event | SamplesSkipped  # what a batch holds: events, and a replay's skipped-sample counts


class ResetBatch(list[Folded]):
    """A batch that replaces everything delivered before it: drop the state and fold this batch
    into a fresh one."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a source can be asked to do with ``command``, and what the end of its batches means."""

    pause_sending: bool = False  # "pause" / "resume": hold and restart the run's new requests
    stops_run: bool = False  # ``close`` stops a run still going: quitting asks first
    # "toggle", "faster", "slower", "speed:X", "seek:+S" / "seek:-S" / "seek:S", "home", "end"
    playback: bool = False
    # True: the batches end because the run did, and its outcome is the source's; False: they
    # end (if ever) with a recording.
    ends_with_run: bool = False


@dataclass(frozen=True, slots=True)
class Playback:
    """Where a replay stands on its recorded timeline."""

    position_s: float  # seconds of run time since the first event
    duration_s: float
    speed_label: str  # "x5"; "max": as fast as the consumer takes the events
    paused: bool
    at_end: bool  # every event delivered and the position at the last one


@dataclass(frozen=True, slots=True)
class Watch:
    """A run another process writes, as the source last read its snapshot."""

    run_status: str | None  # the manifest's: running, complete, aborted (None before a read)
    finished: bool  # the writer closed the run and every event it wrote is delivered
    quiet_s: float  # seconds since a read last brought new events


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """What a source knows beyond its events; a part is None where it means nothing."""

    playback: Playback | None = None
    watch: Watch | None = None


class EventSource(Protocol):
    """Produces batches of events; the UI folds them into its FleetState."""

    @property
    def capabilities(self) -> Capabilities: ...

    def batches(self) -> AsyncIterator[Sequence[Folded]]:
        """Batches of events in order (a ``ResetBatch`` starts over), until the source ends."""
        ...

    async def command(self, name: str) -> None:
        """A command its ``capabilities`` name; a source ignores every other."""
        ...

    async def close(self) -> None:
        """Stop producing; a source that ``stops_run`` stops the run and finishes its snapshot."""
        ...

    def clock(self) -> float:
        """ "Now" for the views, in Unix seconds: the wall clock, or a replay's position on the
        recorded run's clock."""
        ...

    def status(self) -> SourceStatus: ...

    @property
    def messages(self) -> Sequence[str]:
        """The run's own notes (a TLS check turned off, a snapshot write that failed), in order:
        shown as they arrive and printed when the monitor exits."""
        ...

    @property
    def warnings(self) -> Sequence[str]:
        """Parts of a snapshot that could not be read and were skipped, one line each."""
        ...

    @property
    def snapshot_path(self) -> Path | None:
        """Where the run's snapshot is; None until the source knows."""
        ...

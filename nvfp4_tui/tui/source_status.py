"""What the views show about the event source itself: a replay's timeline, a watched run's freshness.

A source tells these in its ``status()`` (``nvfp4_tui.sources.base``); this module rounds them
into frozen values as they are shown, so a header compares them to skip repaints.
"""

from __future__ import annotations

from dataclasses import dataclass

from nvfp4_tui.sources.base import SourceStatus

# A followed run that wrote nothing for this long is marked STALE: its writer flushes at least
# once a second while requests finish, and GPU samples arrive every half second.
FOLLOW_STALE_S = 10.0


@dataclass(frozen=True)
class ReplayReadout:
    position_s: int  # whole seconds, as shown
    duration_s: int
    speed_label: str  # "x5", "max"
    paused: bool
    at_end: bool

    @property
    def fraction(self) -> float:
        return min(1.0, self.position_s / self.duration_s) if self.duration_s > 0 else 1.0


@dataclass(frozen=True)
class FollowReadout:
    status: str | None  # the manifest's: running, complete, aborted (None before a poll)
    finished: bool
    stale: bool
    quiet_s: int  # whole seconds since anything new arrived; 0 unless stale


def replay_readout(status: SourceStatus) -> ReplayReadout | None:
    """The replay's position and controls; None unless the source plays a recording."""
    playback = status.playback
    if playback is None:
        return None
    return ReplayReadout(
        position_s=round(playback.position_s),
        duration_s=round(playback.duration_s),
        speed_label=playback.speed_label,
        paused=playback.paused,
        at_end=playback.at_end,
    )


def follow_readout(status: SourceStatus) -> FollowReadout | None:
    """The watched run's status and freshness; None unless another process writes the run."""
    watch = status.watch
    if watch is None:
        return None
    stale = not watch.finished and watch.quiet_s >= FOLLOW_STALE_S
    return FollowReadout(
        status=watch.run_status,
        finished=watch.finished,
        stale=stale,
        quiet_s=round(watch.quiet_s) if stale else 0,
    )

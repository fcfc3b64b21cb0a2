"""What the views show about the event source itself: a replay's timeline, a follower's freshness.

Sources other than the live one carry read-outs of their own (``ReplaySource.position_s``,
``FollowSource.quiet_s``); this module reads them, by the source's ``kind``, into frozen values
rounded as they are shown, so a header compares them to skip repaints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, cast

from nvfp4_tui.sources.base import EventSource

# A followed run that wrote nothing for this long is marked STALE: its writer flushes at least
# once a second while requests finish, and GPU samples arrive every half second.
FOLLOW_STALE_S = 10.0


class ReplayControls(Protocol):
    """The read-outs of ``nvfp4_tui.sources.replay.ReplaySource`` the views use."""

    @property
    def position_s(self) -> float: ...

    @property
    def duration_s(self) -> float: ...

    @property
    def speed_label(self) -> str: ...

    @property
    def paused(self) -> bool: ...

    @property
    def at_end(self) -> bool: ...

    @property
    def run_status(self) -> str: ...


class FollowStatus(Protocol):
    """The read-outs of ``nvfp4_tui.sources.follow.FollowSource`` the views use."""

    @property
    def status(self) -> str | None: ...

    @property
    def finished(self) -> bool: ...

    @property
    def quiet_s(self) -> float: ...


@dataclass(frozen=True)
class ReplayReadout:
    position_s: int  # whole seconds, as shown
    duration_s: int
    speed_label: str  # "x5", "max"
    paused: bool
    at_end: bool
    run_status: str  # the recorded run's: complete, aborted, running (its writer died)

    @property
    def fraction(self) -> float:
        return min(1.0, self.position_s / self.duration_s) if self.duration_s > 0 else 1.0


@dataclass(frozen=True)
class FollowReadout:
    status: str | None  # the manifest's: running, complete, aborted (None before a poll)
    finished: bool
    stale: bool
    quiet_s: int  # whole seconds since anything new arrived; 0 unless stale


def replay_readout(source: EventSource) -> ReplayReadout | None:
    """The replay's position and controls; None unless ``source`` is a replay."""
    if source.kind != "replay":
        return None
    replay = cast(ReplayControls, source)
    return ReplayReadout(
        position_s=round(replay.position_s),
        duration_s=round(replay.duration_s),
        speed_label=replay.speed_label,
        paused=replay.paused,
        at_end=replay.at_end,
        run_status=replay.run_status,
    )


def follow_readout(source: EventSource) -> FollowReadout | None:
    """The followed run's status and freshness; None unless ``source`` follows a snapshot."""
    if source.kind != "follow":
        return None
    follow = cast(FollowStatus, source)
    quiet_s = follow.quiet_s
    stale = not follow.finished and quiet_s >= FOLLOW_STALE_S
    return FollowReadout(
        status=follow.status,
        finished=follow.finished,
        stale=stale,
        quiet_s=round(quiet_s) if stale else 0,
    )

"""FleetView: what the screens and the palette read of the app and ask of it, and no more.

Screens draw from the app's state and ask it to redraw or to open an endpoint's detail; they
never reach into the concrete ``FleetApp`` (which satisfies this protocol, as a test checks),
so a screen can be shown by any app that offers these.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

from nvfp4_tui.core.state import FleetState
from nvfp4_tui.sources.base import EventSource
from nvfp4_tui.tui.source_status import FollowReadout, ReplayReadout


@runtime_checkable
class FleetView(Protocol):
    state: FleetState
    generation: int  # bumped whenever ``state`` is replaced by a fresh one
    source: EventSource
    user_keymap: Mapping[str, str]  # the user's keys by binding id
    clock: Callable[[], float]
    paused: bool  # sending is paused
    source_ended: bool

    @property
    def score_name(self) -> str: ...  # the quality score the views show

    def replay_readout(self) -> ReplayReadout | None: ...

    def follow_readout(self) -> FollowReadout | None: ...

    def redraw(self) -> None: ...

    def open_detail(self, endpoint_id: str) -> None: ...

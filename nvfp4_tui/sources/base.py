"""The one interface every event source offers the UI."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from nvfp4_tui.core.events import Event


class EventSource(Protocol):
    """Produces batches of events; the UI reduces them into its FleetState."""

    kind: str  # "live" | "follow" | "replay"

    def batches(self) -> AsyncIterator[list[Event]]:
        """Batches of events in order, until the source ends."""
        ...

    async def command(self, name: str) -> None:
        """A control command (``pause``, ``resume``, ``stop``); sources ignore what they lack."""
        ...

    async def close(self) -> None: ...

"""``--json``: what every pane shows, as one JSON object per endpoint per second, for scripts.

The objects are ``figures.pane.PaneFigures.json``: the same figures the monitor's panes format,
folded from the same events, so a script checking the big number checks what a person sees.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import TextIO

from nvfp4_tui.events import Event
from nvfp4_tui.figures.pane import pane_figures
from nvfp4_tui.figures.scores import shown_score
from nvfp4_tui.state import FleetState

JSON_INTERVAL_S = 1.0


class PaneJsonLines:
    """A subscriber that folds the run's events and prints every pane's figures on demand."""

    def __init__(
        self, stream: TextIO | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.state = FleetState()
        self._stream = stream  # None: whatever sys.stdout is when a line is printed
        self._clock = clock

    def __call__(self, event: Event) -> None:
        self.state.apply(event)

    def print_now(self) -> None:
        state = self.state
        now = self._clock()
        score = shown_score(state.figures.has_scores)
        t_s = None if state.started_t is None else now - state.started_t
        stream = self._stream or sys.stdout
        for endpoint in state.endpoints.values():
            line = pane_figures(endpoint, now, score).json(t_s)
            print(json.dumps(line, ensure_ascii=False), file=stream)
        stream.flush()

    async def print_every(self, interval_s: float = JSON_INTERVAL_S) -> None:
        """Print every ``interval_s`` until cancelled, on the wall clock's whole intervals."""
        while True:
            await asyncio.sleep(interval_s - self._clock() % interval_s)
            self.print_now()

"""``--json``: what every pane shows, as one JSON object per endpoint per second, for scripts.

The objects are ``figures.pane.PaneFigures.json``: the same figures the monitor's panes format,
folded from the same events, so a script checking the big number checks what a person sees.
When the run is over, one object per endpoint and level with the server's own view beside the
client's (``figures.server_view``, ``"kind": "server"``) follows, and the context ladder's rows
and capacities (``figures.context``, ``"kind": "context"`` and ``"context_capacity"``), as
``report --format json`` has them.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TextIO

from nvfp4_tui.core.events import EndpointConfig, Event, RequestFinished, RunStarted
from nvfp4_tui.core.figures.context import (
    CONTEXT_SUITE_PREFIX,
    LadderGauges,
    LadderSent,
    LadderTally,
    run_configs,
    rung_capacities,
)
from nvfp4_tui.core.figures.pane import pane_figures
from nvfp4_tui.core.figures.scores import shown_score
from nvfp4_tui.core.figures.server_view import ServerViewFold
from nvfp4_tui.core.state import FleetState

JSON_INTERVAL_S = 1.0


class PaneJsonLines:
    """A subscriber that folds the run's events and prints every pane's figures on demand."""

    def __init__(
        self, stream: TextIO | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.state = FleetState()
        self.server_view = ServerViewFold()
        self.ladder = LadderTally()
        self.ladder_gauges = LadderGauges()
        self._configs: dict[str, EndpointConfig] = {}
        self._stream = stream  # None: whatever sys.stdout is when a line is printed
        self._clock = clock
        self._reader_gone = False
        self._printed_version: int | None = None

    def __call__(self, event: Event) -> None:
        self.state.apply(event)
        self.server_view.apply(event)
        self.ladder_gauges.apply(event)
        if isinstance(event, RequestFinished) and event.suite.startswith(CONTEXT_SUITE_PREFIX):
            self.ladder.add(LadderSent.of(event))
        elif isinstance(event, RunStarted):
            self._configs |= run_configs([event])

    def print_now(self, *, unless_printed: bool = False) -> None:
        """Print every pane's line; with ``unless_printed``, not when the last lines already
        showed this state (the run's end falling on a tick prints once)."""
        state = self.state
        if self._reader_gone or (unless_printed and self._printed_version == state.version):
            return
        self._printed_version = state.version
        now = self._clock()
        score = shown_score(state.figures.has_scores)
        lines = [
            json.dumps(pane_figures(endpoint, now, score).json(state.elapsed_s(now)))
            for endpoint in state.endpoints.values()
        ]
        self._print(lines)

    def print_server_view(self) -> None:
        """The server's view per endpoint and level (none when no endpoint served metrics),
        then the context ladder's, once the run is over."""
        self._print([json.dumps(row.json()) for row in self.server_view.rows()])
        order = tuple(self.state.endpoints)
        rungs = self.ladder.rows(self.ladder_gauges, order)
        fits = [row for row in rung_capacities(rungs, self._configs) if row.fits is not None]
        self._print([json.dumps(row.json()) for row in rungs])
        self._print([json.dumps(row.json()) for row in fits])

    def _print(self, lines: list[str]) -> None:
        if self._reader_gone:
            return
        stream = self._stream or sys.stdout
        try:
            for line in lines:
                print(line, file=stream)
            stream.flush()
        except BrokenPipeError:
            # The reader stopped (``| head``): the run goes on and its snapshot is written;
            # stdout is pointed at /dev/null so that closing it at exit does not fail again.
            self._reader_gone = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)

    async def print_every(self, interval_s: float = JSON_INTERVAL_S) -> None:
        """Print every ``interval_s`` until cancelled, on the wall clock's whole intervals."""
        while True:
            await asyncio.sleep(interval_s - self._clock() % interval_s)
            self.print_now()


@asynccontextmanager
async def printing_panes(panes: PaneJsonLines | None) -> AsyncIterator[None]:
    """While the block runs, ``panes`` printed every interval; when it ends without an error,
    the final figures once (nothing at all when ``panes`` is None: no --json)."""
    ticker = asyncio.create_task(panes.print_every()) if panes is not None else None
    try:
        yield
    finally:
        if ticker is not None:
            ticker.cancel()
    if panes is not None:
        panes.print_now(unless_printed=True)

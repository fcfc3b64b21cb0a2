"""Helpers of the UI tests: waiting for a replay to settle, running a command through the
palette, and small seeded runs whose differences the compare screen must find."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot

from nvfp4_tui.core.events import Event
from nvfp4_tui.sources.replay import ReplaySource
from nvfp4_tui.tui.app import FleetApp
from tests.support.factories import Shift, endpoint_info, seeded_run

POLL_S = 0.02
POLL_TRIES = 250  # 5 s at most
# A replay's jump folds thousands of events on a thread: 60 s at most, on a box under load.
SETTLE_TRIES = 3000


async def settle_replay(pilot: Pilot, source: ReplaySource) -> None:
    """Wait until the replay has delivered everything due at its (paused) position, the app has
    folded all of it into its state (a large batch is folded on a thread, which a busy machine
    makes slow), and the screen shows it."""
    app = pilot.app
    assert isinstance(app, FleetApp)
    for _ in range(SETTLE_TRIES):
        await pilot.pause(POLL_S)
        due = source.wait_s() is not None and not source.at_end
        folded = app.state.version + app.state.dropped
        if not due and folded >= source.events_delivered:
            break
    else:
        raise AssertionError(
            f"the replay never settled: {source.events_delivered} events delivered, "
            f"{app.state.version + app.state.dropped} folded"
        )
    await pilot.pause()
    app.redraw()
    await pilot.pause(0.1)


async def run_command(pilot: Pilot, text: str, command: str) -> None:
    """Type ``text`` into the command palette and run ``command`` once its search offers it
    first (the search runs in a worker: on a busy machine it may take a while)."""
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*text)
    for _ in range(POLL_TRIES):
        await pilot.pause(POLL_S)
        palette = pilot.app.screen
        assert isinstance(palette, CommandPalette)
        hits = palette.query_one(CommandList)
        first = hits.get_option_at_index(0) if hits.option_count else None
        if first is not None and hits.highlighted == 0 and command in str(first.prompt):
            break
    else:
        raise AssertionError(f"the palette never offered {command!r} first for {text!r}")
    await pilot.press("enter")
    await pilot.pause()


SUITES = ("math", "coding")
COMPARED = (
    endpoint_info("moe_a", 0, label="Alpha-35B-A3B"),
    endpoint_info("dense_b", 1, label="Beta-27B", model_class="dense"),
    endpoint_info("moe_c", 2, label="Gamma-26B-A4B"),
)


def compare_run(run_id: str, seed: int, *, n: int = 20, shift: Shift) -> list[Event]:
    """Three endpoints x two suites, ``n`` requests a cell (``factories.seeded_run``)."""
    return seeded_run(run_id, seed, COMPARED, SUITES, n=n, shift=shift)

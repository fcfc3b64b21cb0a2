"""The app on the sample events with a frozen clock: what snapshot tests and the docs show.

``sample_app`` gives an app whose picture depends on nothing but the events, so a snapshot SVG
taken today matches one taken on another machine tomorrow; ``settle`` waits until every event is
in the state and the screen has drawn it, ``wait_until`` until a condition holds, ``press_for``
presses keys and checks which screen they brought up.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot
from textual.screen import Screen

from nvfp4_tui.tui.app import FleetApp
from tests.support.fixed_source import FixedSource, Kind
from tests.support.sample_events import FLEET, PARTWAY_S, START_T, SampleEndpoint, sample_events

SETTLE_S = 0.1
POLL_S = 0.02
POLL_TRIES = 1500  # 30 s at most: far above what a loaded machine needs


def sample_app(
    *, complete: bool = False, kind: Kind = "live", fleet: tuple[SampleEndpoint, ...] = FLEET
) -> tuple[FleetApp, FixedSource]:
    """The demo fleet (or ``fleet``) partway through its run (or ``complete``), its clock
    stopped at the end."""
    events = sample_events(None if complete else PARTWAY_S, fleet)
    now = events[-1].t if complete else START_T + PARTWAY_S
    # Lingering: a live run that is still going, not one whose worker has gone away.
    source = FixedSource(events, kind=kind, linger=not complete)
    return FleetApp(source, clock=lambda: now), source


async def settle(pilot: Pilot, source: FixedSource) -> None:
    """Wait until the source has given every event and the current screen shows them."""
    await source.drained.wait()
    app = pilot.app
    assert isinstance(app, FleetApp)
    if not source.linger:
        await app.workers.wait_for_complete()
    await pilot.pause()
    app.redraw()
    await pilot.pause(SETTLE_S)


async def press_for(pilot: Pilot, *keys: str, screen: type[Screen]) -> None:
    """Press ``keys``, let the app handle them, and check that ``screen`` is on top."""
    await pilot.press(*keys)
    await pilot.pause()
    shown = pilot.app.screen
    assert isinstance(shown, screen), f"{keys} showed {type(shown).__name__}, not {screen.__name__}"


async def wait_until(pilot: Pilot, condition: Callable[[], bool], what: str) -> None:
    """Let the app run until ``condition()`` holds (bounded: fails after ``POLL_TRIES``)."""
    for _ in range(POLL_TRIES):
        if condition():
            return
        await pilot.pause(POLL_S)
    raise AssertionError(f"never happened: {what}")

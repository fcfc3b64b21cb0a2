"""Fixtures for the simulator's tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest

from nvfp4_tui.config.profile import Endpoint
from nvfp4_tui.sim.fleet import SimFleet

FleetFactory = Callable[..., Awaitable[SimFleet]]


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(read_bufsize=2**20) as s:
        yield s


@pytest.fixture
async def fleet_of() -> AsyncIterator[FleetFactory]:
    """Start fleets inside a test; all are closed at its end."""
    fleets: list[SimFleet] = []

    async def start(*endpoints: Endpoint, **kwargs: Any) -> SimFleet:
        fleet = SimFleet(endpoints, **kwargs)
        await fleet.__aenter__()
        fleets.append(fleet)
        return fleet

    yield start
    for fleet in fleets:
        await fleet.aclose()

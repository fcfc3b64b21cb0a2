"""An endpoint that stops taking connections mid-run: its sends wait while /health is probed.

Without the gate, a dead endpoint's remaining plan became instant ``connect`` errors; with it, the
outage costs the one request that revealed it (plus those in flight), the endpoint says ``down``
while it is probed, and the plan goes on when it answers again, or ends after the give-up time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import aiohttp
import pytest

from nvfp4_tui.bench.outage import EndpointGate
from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.core.events import (
    EndpointStatus,
    ErrorKind,
    Event,
    PhaseFinished,
    RequestFinished,
    RunFinished,
)
from nvfp4_tui.sim.fleet import SimFleet
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.runs import record_run, rows_of, statuses_of, write_run_profile
from tests.support.factories import request

OUTAGE_S = 1.0  # how long the endpoint stays down before it is brought back
REQUESTS = 12
DOWN_AFTER_OK = 3
BOUND_S = 30.0


def _refused(endpoint_id: str = "e") -> RequestFinished:
    return request(
        endpoint_id,
        t=0.0,
        suite="essay",
        prompt_id="p",
        status="error",
        error_kind="connect",
        error_message="connect: connection refused (127.0.0.1:1)",
    )


def _probe_answering(after: int) -> Callable:
    calls = {"n": 0}

    async def probe() -> tuple[bool, str]:
        calls["n"] += 1
        return (True, "ok") if calls["n"] > after else (False, "connect: connection refused")

    return probe


async def test_the_gate_closes_on_a_refused_connection_and_opens_when_health_answers() -> None:
    events: list[Event] = []
    gate = EndpointGate("e", events.append, give_up_s=60.0, probe_first_s=0.01, probe_max_s=0.02)
    gate.probe = _probe_answering(after=3)
    gate.report(_refused())
    assert gate.down and not gate.event.is_set()
    gate.report(_refused())  # a second failure starts no second prober
    async with asyncio.timeout(BOUND_S):
        await gate.wait()
    assert not gate.down and gate.gave_up is None
    statuses = [(e.status, e.message) for e in events if isinstance(e, EndpointStatus)]
    assert [s for s, _ in statuses] == ["down", "running"]
    assert "connection refused" in (statuses[0][1] or "")
    assert (statuses[1][1] or "").startswith("back after")


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("protocol", "server error in stream: engine died"),
        # vLLM between its engine's death and its own exit
        ("http_5xx", 'HTTP 500: {"error":{"message":"EngineCore encountered an issue."}}'),
    ],
)
async def test_a_failure_a_dying_server_leaves_asks_health_and_a_dead_server_ends_down(
    kind: ErrorKind, message: str
) -> None:
    events: list[Event] = []
    gate = EndpointGate("e", events.append, give_up_s=60.0, probe_first_s=0.01, last_watch_s=0.05)
    crashed = replace(_refused(), error_kind=kind, error_message=message)
    gate.probe = _probe_answering(after=0)  # still healthy after that failure: nothing said
    gate.report(crashed)
    await gate.finish()
    assert gate.gave_up is None and events == []

    gate = EndpointGate("e", events.append, give_up_s=60.0, probe_first_s=0.01)
    gate.probe = _probe_answering(after=10**6)
    gate.report(crashed)
    async with asyncio.timeout(BOUND_S):
        await gate.finish()  # the plan ends while the server is gone
    assert gate.gave_up is not None and "still down when its plan ended" in gate.gave_up
    (said,) = [e for e in events if isinstance(e, EndpointStatus)]
    assert said.status == "down" and f"(after: {message})" in (said.message or "")


def _probe_failing(after: int) -> Callable:
    calls = {"n": 0}

    async def probe() -> tuple[bool, str]:
        calls["n"] += 1
        return (True, "ok") if calls["n"] <= after else (False, "connect: connection refused")

    return probe


async def test_a_plan_that_ends_on_a_dying_failure_watches_health_until_the_server_exits() -> None:
    # vLLM: HTTP 500 to the last requests, /health passing, then the API server exits.
    events: list[Event] = []
    gate = EndpointGate("e", events.append, give_up_s=60.0, probe_first_s=0.01)
    gate.probe = _probe_failing(after=3)
    message = 'HTTP 500: {"error":{"message":"EngineCore encountered an issue."}}'
    gate.report(replace(_refused(), error_kind="http_5xx", error_message=message))
    async with asyncio.timeout(BOUND_S):
        await gate.finish()
    assert gate.gave_up is not None and "still down when its plan ended" in gate.gave_up
    (said,) = [e for e in events if isinstance(e, EndpointStatus)]
    assert said.status == "down" and f"(after: {message})" in (said.message or "")


async def test_a_plan_that_ends_on_a_success_does_not_watch_health() -> None:
    gate = EndpointGate("e", lambda event: None, give_up_s=60.0, probe_first_s=0.01)
    gate.probe = _probe_failing(after=1)
    gate.report(replace(_refused(), error_kind="http_5xx", error_message="HTTP 500"))
    gate.report(replace(_refused(), status="ok", error_kind=None, error_message=None))
    async with asyncio.timeout(BOUND_S):
        await gate.finish()
    assert gate.gave_up is None


async def test_a_gate_closed_by_pause_and_outage_opens_only_when_both_end() -> None:
    gate = EndpointGate("e", lambda event: None, give_up_s=60.0, probe_first_s=0.01)
    gate.probe = _probe_answering(after=0)
    gate.pause()
    gate.report(_refused())
    async with asyncio.timeout(BOUND_S):
        while gate.down:
            await asyncio.sleep(0.01)
    assert not gate.event.is_set()  # still paused
    gate.resume()
    assert gate.event.is_set()


async def test_the_gate_gives_up_and_opens_so_that_waiting_sends_stop() -> None:
    gate = EndpointGate("e", lambda event: None, give_up_s=0.05, probe_first_s=0.01)
    gate.probe = _probe_answering(after=10**6)
    gate.report(_refused())
    async with asyncio.timeout(BOUND_S):
        await gate.wait()
    assert gate.gave_up is not None and "gave up" in gate.gave_up
    await gate.close()


async def test_a_probe_that_raises_counts_as_down_and_never_leaves_the_gate_shut() -> None:
    async def closed_client() -> tuple[bool, str]:
        raise RuntimeError("EndpointClient is used outside `async with`")

    gate = EndpointGate("e", lambda event: None, give_up_s=0.05, probe_first_s=0.01)
    gate.probe = closed_client
    gate.report(_refused())
    async with asyncio.timeout(BOUND_S):
        await gate.wait()
    assert gate.gave_up is not None and "health check failed" in gate.gave_up
    await gate.close()  # nothing re-raised


async def test_closing_the_gate_while_it_probes_opens_it() -> None:
    gate = EndpointGate("e", lambda event: None, give_up_s=60.0, probe_first_s=0.01)
    gate.probe = _probe_answering(after=10**6)
    gate.report(_refused())
    assert not gate.event.is_set()
    await gate.close()
    assert gate.event.is_set() and not gate.down


async def _run_with_outage(tmp_path: Path, *, back_after_s: float | None, give_up_s: float):
    endpoints = [
        endpoint_toml("steady", 0, decode_tps=400.0, ttft_s=0.01),
        endpoint_toml("dies", 1, decode_tps=400.0, ttft_s=0.01),
    ]
    path = write_run_profile(
        tmp_path, endpoints, requests=REQUESTS, timeout_s=2.0, outage_give_up_s=give_up_s
    )
    profile = load_profile(path)
    tasks: set[asyncio.Task] = set()
    ok = {"n": 0}
    async with (
        SimFleet(profile.endpoints, time_scale=5.0) as fleet,
        aiohttp.ClientSession() as http,
    ):

        async def set_down(url: str, down: bool, after_s: float = 0.0) -> None:
            await asyncio.sleep(after_s)
            async with http.post(url, json={"down": down}) as response:
                assert response.status == 200

        def watch(event: Event) -> None:
            if isinstance(event, RequestFinished) and event.endpoint_id == "dies":
                ok["n"] += event.status != "error"
                if ok["n"] == DOWN_AFTER_OK and event.status != "error":
                    tasks.add(
                        asyncio.create_task(set_down(f"{fleet.urls['dies']}/sim/faults", True))
                    )
                    if back_after_s is not None:
                        back = f"{fleet.urls['steady']}/sim/faults?endpoint=dies"
                        tasks.add(asyncio.create_task(set_down(back, False, back_after_s)))

        async with asyncio.timeout(BOUND_S * 2):
            result, snapshot = await record_run(
                with_urls(profile, fleet.urls), tmp_path / "out", subscribers=[watch]
            )
            await asyncio.gather(*tasks)
    return result, snapshot


async def test_an_endpoint_down_for_a_second_costs_one_row_not_its_plan(tmp_path: Path) -> None:
    result, snapshot = await _run_with_outage(tmp_path, back_after_s=OUTAGE_S, give_up_s=60.0)
    assert result.status == "complete"
    rows = rows_of(snapshot)
    dies = rows["dies"].sort("t")
    assert dies.height == REQUESTS  # the whole plan ran
    statuses = dies.get_column("status").to_list()
    errors = [i for i, status in enumerate(statuses) if status == "error"]
    assert 1 <= len(errors) <= 2, statuses  # what revealed the outage; nothing burnt while down
    assert "error" not in statuses[errors[-1] + 1 :]
    assert "error" not in rows["steady"].get_column("status").to_list()
    said = [(s.status, s.message or "") for s in statuses_of(snapshot.events(), "dies")]
    down_at = [i for i, (status, _) in enumerate(said) if status == "down"]
    assert len(down_at) == 1
    status, message = said[down_at[0] + 1]
    assert status == "running" and message.startswith("back after")


async def test_an_endpoint_that_never_comes_back_ends_its_run_after_the_give_up_time(
    tmp_path: Path,
) -> None:
    result, snapshot = await _run_with_outage(tmp_path, back_after_s=None, give_up_s=1.0)
    assert result.status == "complete"  # the other endpoint finished its plan
    rows = rows_of(snapshot)
    assert rows["steady"].height == REQUESTS
    dies = rows["dies"]
    assert DOWN_AFTER_OK < dies.height < REQUESTS
    assert dies.filter(dies["status"] == "error").height <= 2
    events = snapshot.events()
    last = statuses_of(events, "dies")[-1]
    assert last.status == "down" and "gave up" in (last.message or "")
    limits = [e.limit for e in events if isinstance(e, PhaseFinished) and e.endpoint_id == "dies"]
    assert limits == ["endpoint_down"]
    assert isinstance(events[-1], RunFinished)

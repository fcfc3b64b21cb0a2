"""The fault matrix: every fault on one endpoint of one multi-endpoint run, against a clean run.

Simulated endpoints inject the faults the simulator knows (HTTP statuses, resets, malformed and
cut streams, stalls, an endpoint down from the start); hostile servers written here add the rest
(Retry-After, stalls before the first byte, an HTML error page, a 10 MiB line, a stream that never
ends, a one-byte drip, a server healthy on /health that hangs up on completions). One run holds
them all beside two clean endpoints; a second run holds the clean endpoints alone. Each fault must
give error rows of its kind on its endpoint only, leave the clean endpoints' numbers as they are
in the clean run, let the run finish its plan, and leave the UI responsive on what was recorded.
"""

from __future__ import annotations

import asyncio
import statistics
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import polars as pl
import pytest

from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.core.events import Event, PhaseFinished, RequestFinished, RunFinished, RunStarted
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.sim.validation import RETRY_AFTER_S
from nvfp4_tui.store.reader import Snapshot
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.screens.detail import DetailScreen
from nvfp4_tui.tui.screens.help import HelpScreen
from nvfp4_tui.tui.screens.leaderboard import LeaderboardScreen
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.hostile_servers import HostileProcess
from tests.reliability.runs import (
    hostile_endpoint_toml,
    record_run,
    rows_of,
    statuses_of,
    write_run_profile,
)
from tests.support.fixed_source import FixedSource

REQUESTS = 4  # per endpoint: one prompt, four times
CONCURRENCY = 2
TIMEOUT_S = 2.0  # bounds every stall, drip and endless stream; a 10 MiB line fits well within
CLEAN = ("clean_a", "clean_b")
DECODE_RATIO_TOLERANCE = 0.25  # a clean endpoint's median decode tok/s, faulty run / clean run
MESSAGE_MAX_CHARS = 300  # a prefix and an excerpt of at most 200 characters


@dataclass(frozen=True)
class Fault:
    endpoint_id: str
    kind: str  # the error_kind every one of its rows carries
    sim_faults: str | None = None  # its [endpoint.sim.faults] table, for a simulated endpoint
    says: tuple[str, ...] = ()  # words its error messages contain


def _status(code: int) -> str:
    return f"http_status = {code}\nerror_rate = 1.0"


FAULTS: tuple[Fault, ...] = (
    Fault("sim_http_400", "http_4xx", _status(400), ("HTTP 400",)),
    Fault("sim_http_404", "http_4xx", _status(404), ("HTTP 404",)),
    Fault("sim_http_422", "http_4xx", _status(422), ("HTTP 422",)),
    Fault("sim_http_429", "http_4xx", _status(429), ("HTTP 429",)),
    Fault("sim_http_500", "http_5xx", _status(500), ("HTTP 500",)),
    Fault("sim_http_503", "http_5xx", _status(503), ("HTTP 503",)),
    Fault("sim_reset", "reset", "reset_rate = 1.0", ("connection lost",)),
    Fault("sim_malformed", "protocol", "malformed_rate = 1.0", ("malformed JSON chunk",)),
    Fault("sim_cutoff", "truncated", "cutoff_rate = 1.0", ("before any finish_reason",)),
    Fault("sim_stall", "timeout", "stall_s = 60.0\nstall_rate = 1.0", ("total",)),
    Fault("http_429_retry_after", "http_4xx", None, ("HTTP 429", "slow down")),
    Fault("http_503_retry_after", "http_5xx", None, ("HTTP 503",)),
    Fault("stall_first_byte", "timeout", None, ("total",)),
    Fault("stall_between_chunks", "timeout", None, ("total",)),
    Fault("reset_mid_stream", "reset", None, ("connection lost",)),
    Fault("malformed_chunk", "protocol", None, ("malformed JSON chunk",)),
    Fault("non_sse_200", "protocol", None, ("expected text/event-stream", "application/json")),
    Fault("html_error_page", "http_5xx", None, ("HTTP 502", "502 Bad Gateway")),
    Fault("huge_line", "protocol", None, ("malformed JSON chunk",)),
    Fault("never_ending", "timeout", None, ("total",)),
    Fault("slow_drip", "timeout", None, ("total",)),
    Fault("health_only", "reset", None, ("connection lost",)),
)
HOSTILE = [f.endpoint_id for f in FAULTS if f.sim_faults is None]
DOWN = "sim_down"  # refusing connections from the start


@dataclass(frozen=True)
class Matrix:
    clean: Snapshot  # the clean endpoints alone
    faulty: Snapshot  # the clean endpoints and every fault


def _clean_endpoints() -> list[str]:
    # Slow enough (24 tokens in about half a second) that a busy machine's timer jitter stays
    # small beside it.
    return [endpoint_toml(eid, gpu, decode_tps=50.0, ttft_s=0.05) for gpu, eid in enumerate(CLEAN)]


def _faulty_endpoints(hostile_urls: dict[str, str]) -> list[str]:
    endpoints = _clean_endpoints()
    for gpu, fault in enumerate(FAULTS, start=len(CLEAN)):
        if fault.sim_faults is not None:
            endpoints.append(
                endpoint_toml(
                    fault.endpoint_id, gpu, decode_tps=100.0, ttft_s=0.05, faults=fault.sim_faults
                )
            )
        else:
            url = hostile_urls[fault.endpoint_id]
            endpoints.append(hostile_endpoint_toml(fault.endpoint_id, url))
    endpoints.append(endpoint_toml(DOWN, 99, faults="down = true"))
    return endpoints


def _record(directory: Path, endpoints: list[str]) -> Snapshot:
    path = write_run_profile(
        directory, endpoints, requests=REQUESTS, concurrency=CONCURRENCY, timeout_s=TIMEOUT_S
    )
    profile = load_profile(path)
    with SimProcess(path, port_base=0) as sim:
        live = with_urls(profile, sim.urls)
        result, snapshot = asyncio.run(record_run(live, directory / "out"))
    assert result.status == "complete", result.messages
    return snapshot


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    root = tmp_path_factory.mktemp("matrix")
    clean = _record(root / "clean", _clean_endpoints())
    with HostileProcess(HOSTILE) as urls:
        faulty = _record(root / "faulty", _faulty_endpoints(urls))
    return Matrix(clean, faulty)


# A 10 MiB line is read well within TIMEOUT_S on a quiet box, but a second test run and a demo
# beside this one made it a timeout: that case waits for the slow run, which has the box alone.
WALL_CLOCK_BOUND = ("huge_line",)


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(f, marks=pytest.mark.slow) if f.endpoint_id in WALL_CLOCK_BOUND else f
        for f in FAULTS
    ],
    ids=lambda f: f.endpoint_id,
)
def test_each_fault_gives_error_rows_of_its_kind_on_its_endpoint(
    matrix: Matrix, fault: Fault
) -> None:
    rows = rows_of(matrix.faulty)[fault.endpoint_id]
    assert rows.height == REQUESTS  # every planned request has its row: nothing silent
    assert rows.get_column("status").to_list() == ["error"] * REQUESTS
    assert set(rows.get_column("error_kind")) == {fault.kind}
    assert rows.get_column("attempt").to_list() == [0] * REQUESTS  # no retry by default
    assert rows.get_column("score_heuristic").null_count() == REQUESTS  # never a zero score
    assert rows.get_column("decode_tps").null_count() == REQUESTS
    for message in rows.get_column("error_message"):
        assert "\n" not in message and len(message) <= MESSAGE_MAX_CHARS, message
        for word in fault.says:
            assert word in message, (word, message)


def test_a_retry_after_is_recorded_not_obeyed_by_default(matrix: Matrix) -> None:
    rows = rows_of(matrix.faulty)
    for endpoint_id in ("http_429_retry_after", "http_503_retry_after"):
        assert set(rows[endpoint_id].get_column("retry_after_s")) == {0.2}
    assert set(rows["sim_http_429"].get_column("retry_after_s")) == {float(RETRY_AFTER_S)}
    assert rows["sim_http_500"].get_column("retry_after_s").null_count() == REQUESTS


def test_an_endpoint_refusing_from_the_start_is_down_with_a_connect_reason(matrix: Matrix) -> None:
    # Its first planned request is tried once and recorded; the rest of its plan is not sent.
    rows = rows_of(matrix.faulty)[DOWN]
    assert rows.get_column("status").to_list() == ["error"]
    assert rows.get_column("error_kind").to_list() == ["connect"]
    assert rows.get_column("request_index").to_list() == [0]
    statuses = statuses_of(matrix.faulty.events(), DOWN)
    assert statuses[-1].status == "down"
    assert statuses[-1].message is not None
    assert statuses[-1].message.startswith("connect: connection refused")


@pytest.mark.slow  # a ratio of two wall-clock decode rates: 1.32 with a second test run beside it
def test_clean_endpoints_measure_the_same_beside_every_fault(matrix: Matrix) -> None:
    clean, faulty = rows_of(matrix.clean), rows_of(matrix.faulty)
    assert set(clean) == set(CLEAN)
    for endpoint_id in CLEAN:
        before, during = clean[endpoint_id], faulty[endpoint_id]
        assert during.height == before.height == REQUESTS
        assert during.get_column("status").to_list() == before.get_column("status").to_list()
        assert "error" not in set(during.get_column("status"))  # "incomplete": max_tokens hit
        assert during.get_column("tokens_out").sum() == before.get_column("tokens_out").sum()
        ratio = statistics.median(during.get_column("decode_tps")) / statistics.median(
            before.get_column("decode_tps")
        )
        assert abs(ratio - 1) <= DECODE_RATIO_TOLERANCE, (endpoint_id, ratio)


def test_the_faulty_run_finishes_its_plan(matrix: Matrix) -> None:
    events = matrix.faulty.events()
    assert matrix.faulty.status == "complete"
    assert [e.status for e in events if isinstance(e, RunFinished)] == ["complete"]
    started = next(e for e in events if isinstance(e, RunStarted))
    planned = {p.endpoint_id: p.requests for p in started.phases}
    finished = {e.endpoint_id: e for e in events if isinstance(e, PhaseFinished)}
    assert set(finished) == set(planned)
    down = finished.pop(DOWN)
    assert (down.requests, down.errors, down.limit) == (1, 1, "endpoint_down")
    for endpoint_id, phase in finished.items():
        assert phase.requests == planned[endpoint_id] == REQUESTS, endpoint_id
        assert statuses_of(events, endpoint_id)[-1].status == "done"
    errors = matrix.faulty.requests().filter(pl.col("status") == "error")
    assert set(errors.get_column("endpoint_id")) == {f.endpoint_id for f in FAULTS} | {DOWN}


async def test_the_ui_stays_responsive_on_the_faulty_run(matrix: Matrix) -> None:
    events = matrix.faulty.events()
    source = FixedSource(events, kind="live")
    end_t = max(e.t for e in events)
    app = FleetApp(source, clock=lambda: end_t)
    async with app.run_test(size=(160, 60)) as pilot:
        await source.drained.wait()
        await pilot.pause()
        assert app.state.status == "complete"
        assert app.state.errors == len(FAULTS) * REQUESTS + 1  # and the down endpoint's one
        # A detail screen draws charts (about half a second here): the most hostile few.
        for endpoint_id in ("huge_line", DOWN):
            app.open_detail(endpoint_id)
            await pilot.pause()
            assert isinstance(app.screen, DetailScreen), endpoint_id
            app.redraw()
            await pilot.press("escape")
            assert not isinstance(app.screen, DetailScreen)
        for key, screen in (("l", LeaderboardScreen), ("question_mark", HelpScreen)):
            await pilot.press(key)
            assert isinstance(app.screen, screen)
            await pilot.press("escape")
        await pilot.press("g", "right", "down", "enter")
        assert isinstance(app.screen, DetailScreen)


DYING_REQUESTS = 30
DOWN_AFTER_OK = 5


async def test_an_endpoint_that_dies_mid_run_and_comes_back(tmp_path: Path) -> None:
    """Taken down over POST /sim/faults while serving, brought back through a peer's route."""
    endpoints = [
        endpoint_toml("steady", 0, decode_tps=200.0, ttft_s=0.02),
        endpoint_toml("dies", 1, decode_tps=200.0, ttft_s=0.02),
    ]
    path = write_run_profile(tmp_path, endpoints, requests=DYING_REQUESTS, timeout_s=TIMEOUT_S)
    profile = load_profile(path)
    tasks: set[asyncio.Task] = set()
    phase = {"name": "up", "ok": 0}

    async with (
        SimFleet(profile.endpoints, time_scale=5.0) as fleet,
        aiohttp.ClientSession() as http,
    ):

        async def set_down(url: str, down: bool) -> None:
            async with http.post(url, json={"down": down}) as response:
                assert response.status == 200

        def watch(event: Event) -> None:
            if not isinstance(event, RequestFinished) or event.endpoint_id != "dies":
                return
            phase["ok"] += event.status != "error"
            if phase["name"] == "up" and phase["ok"] == DOWN_AFTER_OK:
                phase["name"] = "going down"
                task = asyncio.create_task(set_down(f"{fleet.urls['dies']}/sim/faults", True))
            elif phase["name"] == "going down" and event.status == "error":
                phase["name"] = "coming back"
                back = f"{fleet.urls['steady']}/sim/faults?endpoint=dies"
                task = asyncio.create_task(set_down(back, False))
            else:
                return
            tasks.add(task)

        live = with_urls(profile, fleet.urls)
        result, snapshot = await record_run(live, tmp_path / "out", subscribers=[watch])
        await asyncio.gather(*tasks)
    assert result.status == "complete"
    rows = rows_of(snapshot)
    assert "error" not in set(rows["steady"].get_column("status"))
    dies = rows["dies"].sort("request_index")
    assert dies.height == DYING_REQUESTS  # the plan finished: one row per request
    statuses = dies.get_column("status").to_list()
    failed = [i for i, status in enumerate(statuses) if status == "error"]
    assert failed, "the endpoint never went down"
    assert set(dies.filter(pl.col("status") == "error").get_column("error_kind")) <= {
        "connect",
        "reset",
    }
    assert "error" not in statuses[failed[-1] + 1 :] and failed[-1] < DYING_REQUESTS - 1

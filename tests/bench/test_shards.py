"""Worker processes: endpoints shared out over shard processes, one stream of events back.

The runs are real: a simulated fleet on loopback ports, shard processes started by the session,
their events recorded in one snapshot. Killing a shard costs its endpoints only.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from aiohttp import web

from nvfp4_tui.bench.session import Session
from nvfp4_tui.bench.shards import ShardedRunner, share_out, worker_count
from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.config.plan import LaunchPlan, plan_run
from nvfp4_tui.config.profile import load_profile, with_overrides
from nvfp4_tui.core.events import EndpointStatus, Event, RequestFinished, RunFinished, RunStarted
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.store.reader import open_snapshot
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite

RUN_WAIT_S = 90.0  # bounds the whole run on a loaded 2-core box; a hang fails, it never waits
ORPHAN_WAIT_S = 20.0  # a worker process's stop once its parent is gone, on a loaded box


def test_worker_count_follows_endpoints_and_cores() -> None:
    assert worker_count(None, 7, cores=16) == 1
    assert worker_count(None, 64, cores=16) == 4
    assert worker_count(None, 64, cores=2) == 1  # one core stays with the recorder and the UI
    assert worker_count(3, 64, cores=2) == 3  # asked for: given, cores or not
    assert worker_count(8, 2, cores=16) == 2  # never more than one per endpoint


def test_share_out_deals_endpoints_round_robin(tmp_path: Path) -> None:
    endpoints = load_profile(_fleet_file(tmp_path)).endpoints
    assert share_out(endpoints, 2) == [("e0", "e2"), ("e1", "e3")]
    assert share_out(endpoints[:1], 3) == [("e0",)]


def _fleet_file(tmp_path: Path, *, requests: int = 3) -> Path:
    write_suite(tmp_path / "suites", "essay", max_tokens=24)
    endpoints = [endpoint_toml(f"e{i}", i, decode_tps=400.0, ttft_s=0.02) for i in range(4)]
    return write_profile(tmp_path, endpoints, suites=["essay"], concurrency=[2], requests=requests)


async def _run(plan: LaunchPlan, out: Path, on_event: list) -> tuple[Session, str, list[Event]]:
    events: list[Event] = []

    def collect(event: Event) -> None:
        events.append(event)
        for react in on_event:
            react(session, event)

    session = Session(plan.profile, plan.suites, out, subscribers=[collect])
    session.open()
    result = await asyncio.wait_for(session.run(), RUN_WAIT_S)
    return session, result.status, events


async def test_two_workers_record_one_run_of_every_endpoint(tmp_path: Path) -> None:
    path = _fleet_file(tmp_path)
    profile = with_overrides(load_profile(path), workers=2)
    async with SimFleet(profile.endpoints, time_scale=5.0) as fleet:
        plan = plan_run(profile).with_urls(fleet.urls, 5.0)
        session, status, events = await _run(plan, tmp_path / "out", [])
    assert isinstance(session.runner, ShardedRunner)
    assert status == "complete"
    assert [type(e) for e in events].count(RunStarted) == 1
    assert [type(e) for e in events].count(RunFinished) == 1
    snapshot = open_snapshot(session.snapshot_path)
    assert snapshot.status == "complete"
    per_endpoint = snapshot.requests().group_by("endpoint_id").len().sort("endpoint_id")
    # 3 requests of the one prompt per endpoint, each endpoint in one of two processes.
    assert per_endpoint.rows() == [("e0", 3), ("e1", 3), ("e2", 3), ("e3", 3)]
    done = {e.endpoint_id for e in events if isinstance(e, EndpointStatus) and e.status == "done"}
    assert done == {"e0", "e1", "e2", "e3"}


async def test_a_killed_worker_costs_its_endpoints_only(tmp_path: Path) -> None:
    path = _fleet_file(tmp_path, requests=12)
    profile = with_overrides(load_profile(path), workers=2)
    killed: list[int] = []

    def kill_first_shard(session: Session, event: Event) -> None:
        # At the first answer from the shard holding e0 and e2: it dies mid-run.
        if killed or not isinstance(event, RequestFinished) or event.endpoint_id != "e0":
            return
        runner = session.runner
        assert isinstance(runner, ShardedRunner)
        pid = runner._shards[0].process.pid
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    async with SimFleet(profile.endpoints, time_scale=5.0) as fleet:
        plan = plan_run(profile).with_urls(fleet.urls, 5.0)
        session, status, events = await _run(plan, tmp_path / "out", [kill_first_shard])
    assert killed
    errors = {
        e.endpoint_id: e.message
        for e in events
        if isinstance(e, EndpointStatus) and e.status == "error"
    }
    assert set(errors) == {"e0", "e2"}
    assert all("worker process 1 of 2 exited (killed by signal 9)" in m for m in errors.values())
    assert set(session.runner.down) == {"e0", "e2"}
    assert status == "complete"  # the other shard's endpoints ran their whole plan
    snapshot = open_snapshot(session.snapshot_path)
    counts = dict(snapshot.requests().group_by("endpoint_id").len().rows())
    assert counts["e1"] == counts["e3"] == 12
    assert counts.get("e0", 0) < 12
    recorded = {e.endpoint_id: e.status for e in snapshot.events() if isinstance(e, EndpointStatus)}
    assert recorded["e0"] == recorded["e2"] == "error"


async def test_a_stopped_sharded_run_ends_aborted_without_hanging(tmp_path: Path) -> None:
    path = _fleet_file(tmp_path, requests=200)
    profile = with_overrides(load_profile(path), workers=2)

    async with SimFleet(profile.endpoints, time_scale=5.0) as fleet:
        plan = plan_run(profile).with_urls(fleet.urls, 5.0)
        session = Session(plan.profile, plan.suites, tmp_path / "out")
        session.open()
        run = asyncio.create_task(session.run())
        first = asyncio.Event()
        session.subscribers.append(
            lambda e: first.set() if isinstance(e, RequestFinished) else None
        )
        await asyncio.wait_for(first.wait(), RUN_WAIT_S)
        run.cancel()
        result = await asyncio.wait_for(run, RUN_WAIT_S)
    assert result.status == "aborted"
    assert not result.every_endpoint_down
    assert open_snapshot(session.snapshot_path).status == "aborted"
    runner = session.runner
    assert isinstance(runner, ShardedRunner)
    assert all(s.process.returncode is not None for s in runner._shards)


def test_worker_processes_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    """The run's process dies without a word (SIGKILL): its worker processes see their stdin
    close and stop, leaving no orphan sending requests."""
    # A plan of minutes: a worker process still running after ORPHAN_WAIT_S has not stopped.
    path = _fleet_file(tmp_path, requests=4000)
    profile = with_overrides(load_profile(path), workers=2)
    with SimProcess(path, port_base=0) as sim:
        plan = plan_run(profile).with_urls(sim.urls)
        spec = WorkerSpec.of(plan, tmp_path / "out", run_id="orphans")
        with (tmp_path / "worker.log").open("wb") as log:
            parent = subprocess.Popen(
                [sys.executable, "-m", "nvfp4_tui.bench.worker", json.dumps(spec.__dict__)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        try:
            shards = _wait_for_children(parent.pid, 2)
        finally:
            parent.kill()
            parent.wait(timeout=RUN_WAIT_S)
        deadline = time.monotonic() + ORPHAN_WAIT_S
        while any(_alive(pid) for pid in shards):
            assert time.monotonic() < deadline, "a worker process outlived its parent"
            time.sleep(0.05)


def _wait_for_children(pid: int, count: int) -> list[int]:
    deadline = time.monotonic() + RUN_WAIT_S
    while True:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if len(children) >= count:
            return [int(child) for child in children]
        assert time.monotonic() < deadline, "the worker processes never started"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has ended; only its parent's wait would clear it


QUOTES_CHUNK = '"' * (1 << 20)  # a byte of answer that JSON writes as two
QUOTE_CHUNKS = 12  # 12 MiB of answer: under max_answer_bytes, 24 MiB as an event line


async def _quotes_reply(request: web.Request) -> web.StreamResponse:
    reply = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await reply.prepare(request)

    async def send(chunk: dict) -> None:
        await reply.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")

    await send({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
    for _ in range(QUOTE_CHUNKS):
        await send({"choices": [{"index": 0, "delta": {"content": QUOTES_CHUNK}}]})
    await send({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    usage = {"prompt_tokens": 12, "completion_tokens": QUOTE_CHUNKS, "total_tokens": 24}
    await send({"choices": [], "usage": usage})
    await reply.write(b"data: [DONE]\n\n")
    return reply


async def _healthy(_: web.Request) -> web.Response:
    return web.Response(text="ok")


async def _models(_: web.Request) -> web.Response:
    return web.json_response({"data": [{"id": "current"}]})


@asynccontextmanager
async def _quotes_server() -> AsyncIterator[str]:
    """An endpoint whose every answer is 12 MiB of double quotes."""
    app = web.Application()
    app.router.add_get("/health", _healthy)
    app.router.add_get("/v1/models", _models)
    app.router.add_post("/v1/chat/completions", _quotes_reply)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_an_answer_longer_as_json_than_any_buffer_ends_no_one(tmp_path: Path) -> None:
    """One endpoint's answer of quotes, which doubles as an event line, reaches the snapshot
    whole; the shards' other endpoints run their plans and the run closes complete."""
    path = _fleet_file(tmp_path, requests=1)
    profile = with_overrides(load_profile(path), workers=2, concurrency=(1,))
    async with SimFleet(profile.endpoints, time_scale=5.0) as fleet, _quotes_server() as url:
        plan = plan_run(profile).with_urls({**fleet.urls, "e0": url}, 5.0)
        session, status, _ = await _run(plan, tmp_path / "out", [])
    assert status == "complete"
    snapshot = open_snapshot(session.snapshot_path)
    assert snapshot.status == "complete"
    rows = snapshot.requests().select("endpoint_id", "status", "answer_text").sort("endpoint_id")
    assert rows["endpoint_id"].to_list() == ["e0", "e1", "e2", "e3"]
    assert rows["status"][0] == "ok"  # the others stop at the suite's max_tokens
    assert len(rows["answer_text"][0]) == QUOTE_CHUNKS * len(QUOTES_CHUNK)

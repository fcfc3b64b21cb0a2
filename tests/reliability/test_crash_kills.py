"""SIGKILL a run at 20 seeded random moments: every time, nothing finished is lost.

Each kill hits the worker process that records a run (the UI's and ``--detach``'s engine) at a
moment drawn from a seeded generator: while requests stream, right after it starts, or while it
closes the snapshot after a ``stop`` (compaction and the final manifest). Every time the snapshot
opens without a warning, holds every request the worker reported more than a second before the
kill, shows no half-written file under a part name, and replays as an aborted run.

Four workers run side by side against one simulator, five kills each, and each is forked from a
process that has already imported it (``forked_worker``), to keep the test short.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.cli import main as cli_main
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.core.events import RequestFinished, RunFinished, RunStarted, decode
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.sources.replay import WRITER_GONE_MESSAGE, ReplaySource
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.store.schema import TABLES
from nvfp4_tui.store.writer import list_parts
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite
from tests.reliability.forked_worker import WorkerForker
from tests.reliability.runs import pointed_at, wait_for_rows

pytestmark = pytest.mark.slow  # twenty kills at seeded random moments

SEED = 20260416
KILLS = 20
LANES = 4  # workers alive at once
FLUSH_MARGIN_S = 1.0  # the writer flushes every 0.5 s; a request older than this is on disk
LATEST_KILL_S = 1.5
STOP_THEN_KILL_EVERY = 5  # every fifth kill lands while the run closes its snapshot
START_TIMEOUT_S = 30.0


@dataclass
class Kill:
    number: int
    delay_s: float  # after the worker's RunStarted
    during_close: bool
    arrived: list[tuple[float, str]] = field(default_factory=list)
    killed_at: float = 0.0

    @property
    def run_id(self) -> str:
        return f"kill-{self.number:02d}"


def _schedule() -> list[Kill]:
    rng = random.Random(SEED)
    kills = []
    for number in range(KILLS):
        during_close = number % STOP_THEN_KILL_EVERY == STOP_THEN_KILL_EVERY - 1
        delay_s = rng.uniform(0.0, 0.15) if during_close else rng.uniform(0.0, LATEST_KILL_S)
        kills.append(Kill(number, delay_s, during_close))
    return kills


def _key(event: RequestFinished) -> str:
    return f"{event.endpoint_id}/{event.phase_index}/{event.request_index}"


async def _kill_once(kill: Kill, spec: WorkerSpec, forker: WorkerForker) -> None:
    spec = WorkerSpec(**{**spec.__dict__, "run_id": kill.run_id})
    pid, events_fd = forker.start(json.dumps(spec.__dict__))
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader(limit=1 << 24)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(stream), os.fdopen(events_fd, "rb", buffering=0)
    )
    started = asyncio.Event()

    async def read_events() -> None:
        while line := await stream.readline():
            event = decode(line)
            if isinstance(event, RunStarted):
                started.set()
            elif isinstance(event, RequestFinished):
                kill.arrived.append((time.monotonic(), _key(event)))

    reader = asyncio.create_task(read_events())
    try:
        await asyncio.wait_for(started.wait(), START_TIMEOUT_S)
        if kill.during_close:
            await asyncio.sleep(LATEST_KILL_S / 2)
            os.kill(pid, signal.SIGTERM)  # a clean stop: it flushes, compacts, marks aborted
        await asyncio.sleep(kill.delay_s)
        kill.killed_at = time.monotonic()
    finally:
        os.kill(pid, signal.SIGKILL)
        await asyncio.wait_for(reader, START_TIMEOUT_S)  # the pipe ends when the worker dies
        transport.close()


async def _lane(kills: list[Kill], spec: WorkerSpec, forker: WorkerForker) -> None:
    for kill in kills:
        await _kill_once(kill, spec, forker)


def _profile(tmp_path: Path) -> Path:
    write_suite(tmp_path / "suites", "essay", max_tokens=64)
    endpoints = [endpoint_toml(f"e{i}", i, decode_tps=300.0, ttft_s=0.05) for i in range(3)]
    return write_profile(tmp_path, endpoints, suites=["essay"], concurrency=[2], requests=400)


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Kill]]:
    root = tmp_path_factory.mktemp("kills")
    path = _profile(root)
    kills = _schedule()
    with SimProcess(path, port_base=0) as sim:
        plan = plan_run(load_profile(path)).with_urls(sim.urls)
        spec = WorkerSpec.of(plan, root / "out")
        forker = WorkerForker()

        async def all_lanes() -> None:
            lanes = [kills[lane::LANES] for lane in range(LANES)]
            await asyncio.gather(*(_lane(lane, spec, forker) for lane in lanes))

        try:
            asyncio.run(all_lanes())
        finally:
            forker.close()
    return root / "out", kills


def _kept(directory: Path) -> set[str]:
    frame = open_snapshot(directory).requests()
    return {
        f"{r['endpoint_id']}/{r['phase_index']}/{r['request_index']}"
        for r in frame.select("endpoint_id", "phase_index", "request_index").iter_rows(named=True)
    }


def test_every_kill_keeps_what_finished_a_second_before(killed: tuple[Path, list[Kill]]) -> None:
    out, kills = killed
    assert sum(len(k.arrived) for k in kills) > KILLS  # the kills did land mid-run
    for kill in kills:
        snapshot = open_snapshot(out / kill.run_id)
        assert snapshot.warnings == [], kill
        due = {key for t, key in kill.arrived if t < kill.killed_at - FLUSH_MARGIN_S}
        missing = due - _kept(out / kill.run_id)
        assert not missing, (kill, sorted(missing)[:5])


def test_no_half_written_file_is_ever_visible(killed: tuple[Path, list[Kill]]) -> None:
    out, kills = killed
    for kill in kills:
        directory = out / kill.run_id
        for table in TABLES:
            table_dir = directory / table
            if not table_dir.is_dir():
                continue  # compacted before the kill
            visible = {p for p in table_dir.iterdir() if not p.name.startswith(".")}
            # Journals beside the parts are appended line by line; a reader drops a cut last line.
            others = visible - set(list_parts(table_dir))
            assert all(re.fullmatch(r"journal-\d{6}\.jsonl", p.name) for p in others), visible
        names = {p.name for p in directory.iterdir() if not p.name.startswith(".")}
        assert names <= {"manifest.json", *TABLES, *(f"{t}.parquet" for t in TABLES)}


async def test_every_killed_run_replays_as_aborted(killed: tuple[Path, list[Kill]]) -> None:
    out, kills = killed
    for kill in kills:
        snapshot = open_snapshot(out / kill.run_id)
        if snapshot.status == "running":  # killed before it could say otherwise
            assert snapshot.writer_gone and snapshot.status_label == "aborted (writer gone)"
        else:  # killed after the stop had finished the snapshot
            assert kill.during_close and snapshot.status == "aborted", kill
        source = ReplaySource(snapshot, speed=None, hold_at_end=False)
        assert source.run_status == "aborted"
        state = FleetState()
        async for batch in source.batches():
            state.apply_all(batch)
        if not snapshot.events():  # killed before its first flush: nothing to show but that
            continue
        assert state.status == "aborted", kill
        finished = [e for e in snapshot.events() if isinstance(e, RunFinished)]
        if snapshot.events() and not finished:
            assert state.finish_message == WRITER_GONE_MESSAGE


def test_replay_headless_names_a_dead_writer(
    killed: tuple[Path, list[Kill]], capsys: pytest.CaptureFixture[str]
) -> None:
    out, kills = killed
    running = [k for k in kills if open_snapshot(out / k.run_id).status == "running"]
    assert cli_main(["replay", str(out / running[0].run_id), "--headless"]) == 0
    assert "run aborted (writer gone)" in capsys.readouterr().out


def test_a_killed_headless_run_replays_as_aborted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same, once, for ``nvfp4-tui run --headless`` itself rather than the worker."""
    path = _profile(tmp_path)
    out = tmp_path / "out"
    with SimProcess(path, port_base=0) as sim:
        live = pointed_at(path, sim.urls)
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nvfp4_tui.cli",
                "run",
                str(live),
                "--headless",
                "--out",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            snapshot_dir = wait_for_rows(out)
        finally:
            run.kill()
            run.wait()
    snapshot = open_snapshot(snapshot_dir)
    assert snapshot.warnings == [] and snapshot.requests().height > 0
    assert cli_main(["replay", str(snapshot_dir), "--headless"]) == 0
    assert "run aborted (writer gone)" in capsys.readouterr().out

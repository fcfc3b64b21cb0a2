"""A disk that fills (or turns unwritable) mid-run: the UI says so at once, the run stops cleanly,
and every part written before stays readable.

In-process, the writer's atomic write is made to fail with ENOSPC after a few parts, and the run's
events feed the app directly. Where this process may mount a tmpfs (root on Linux), a real worker
fills a real small filesystem under the live UI.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from nvfp4_tui.bench.session import Session
from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.events import Event
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.sources.live import LiveSource
from nvfp4_tui.store import writer as writer_module
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.store.writer import list_parts
from nvfp4_tui.tui.app import FleetApp
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.runs import write_run_profile
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import wait_until

PLANNED = 200  # per endpoint: far more than runs before the disk fills
PARTS_BEFORE_FULL = 3
RUN_END_TIMEOUT_S = 30.0


class QueueSource(FixedSource):
    """A live source fed by a Session in the same process: events and worker messages."""

    def __init__(self) -> None:
        super().__init__([])
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()

    def __call__(self, event: Event) -> None:
        self.queue.put_nowait(event)

    async def batches(self) -> AsyncIterator[list[Event]]:
        while (event := await self.queue.get()) is not None:
            yield [event]

    async def close(self) -> None:
        self.queue.put_nowait(None)


def _recording(app: FleetApp) -> list[tuple[str, dict[str, Any]]]:
    notes: list[tuple[str, dict[str, Any]]] = []
    shown = app.notify

    def notify(message: str, **options: Any) -> None:
        notes.append((message, options))
        shown(message, **options)

    app.notify = notify  # type: ignore[method-assign]
    return notes


def _profile(tmp_path: Path) -> Path:
    endpoints = [endpoint_toml(f"e{i}", i, decode_tps=400.0, ttft_s=0.02) for i in range(2)]
    return write_run_profile(tmp_path, endpoints, requests=PLANNED, concurrency=2)


async def test_a_disk_that_fills_stops_the_run_and_the_ui_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = writer_module.write_atomic
    writes = {"parts": 0}

    def filling_disk(path: Path, data: bytes) -> None:
        """Parts and compacted tables fail once a few parts are down (the manifest still fits)."""
        writes["parts"] += path.name.startswith("part-")
        if writes["parts"] > PARTS_BEFORE_FULL:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real_write(path, data)

    monkeypatch.setattr(writer_module, "write_atomic", filling_disk)
    profile = load_profile(_profile(tmp_path))
    source = QueueSource()
    app = FleetApp(source)
    notes = _recording(app)
    async with SimFleet(profile.endpoints, time_scale=5.0) as fleet, app.run_test() as pilot:
        live = with_urls(profile, fleet.urls)
        suites = load_suites(live.suite_dirs, live.run.suites)
        session = Session(
            live, suites, tmp_path / "out", subscribers=[source], on_message=source.messages.append
        )
        session.open()
        result = await asyncio.wait_for(session.run(), RUN_END_TIMEOUT_S)
        await source.close()
        await app.workers.wait_for_complete()
        # A timer tick shows the worker's messages.
        await wait_until(
            pilot, lambda: any("No space left" in m for m, _ in notes), "the reason notified"
        )
        assert app.state.status == "aborted"
        assert "snapshot cannot be written" in (app.state.finish_message or "")
        await pilot.press("l", "g")  # still answering keys

    assert result.status == "aborted"
    assert any("No space left on device" in m for m in result.messages)
    said = [message for message, _ in notes]
    assert any(m.startswith("The run was aborted: run stopped: the snapshot") for m in said)
    assert any("No space left on device" in m for m in said)
    # It stopped at the failure rather than running its plan into memory.
    snapshot = open_snapshot(result.snapshot)
    assert snapshot.warnings == []
    assert 0 < snapshot.requests().height < 2 * PLANNED
    # Its last flush failed, so the manifest still says running; a reader that finds its
    # process gone calls it "aborted (writer gone)" (test_crash_kills).
    assert snapshot.status == "running" and not snapshot.writer_gone


def _mount_tmpfs(target: Path, size_mib: int) -> bool:
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    target.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mib}m", "tmpfs", str(target)],
        capture_output=True,
    )
    return mounted.returncode == 0


async def test_a_real_full_filesystem_under_the_live_ui(tmp_path: Path) -> None:
    disk = tmp_path / "small-disk"
    if not _mount_tmpfs(disk, size_mib=80):
        pytest.skip("needs root on Linux to mount a small tmpfs")
    try:
        path = _profile(tmp_path)
        # Real time: the run outlasts the filling by far, however long a loaded box takes to
        # write it (at five times real time it once finished, and compacted, before the disk
        # was full).
        with SimProcess(path, port_base=0, time_scale=1.0) as sim:
            plan = plan_run(load_profile(path)).with_urls(sim.urls)
            source = LiveSource(WorkerSpec.of(plan, disk / "out", run_id="fills"))
            app = FleetApp(source)
            notes = _recording(app)
            async with app.run_test() as pilot:
                requests_dir = disk / "out" / "fills" / "requests"
                while not list_parts(requests_dir):  # some requests are on disk
                    await pilot.pause(0.1)
                # Fill what is left: the next part cannot be written.
                filler = disk / "filler"
                subprocess.run(
                    ["dd", "if=/dev/zero", f"of={filler}", "bs=1M", "count=100"],
                    capture_output=True,
                )
                assert await asyncio.wait_for(source.wait(), RUN_END_TIMEOUT_S) == 130
                await app.workers.wait_for_complete()
                await wait_until(
                    pilot,
                    lambda: any("No space left" in m for m, _ in notes),
                    "the reason notified",
                )
                assert app.state.status == "aborted"
                await pilot.press("l")
            said = " | ".join(message for message, _ in notes)
            assert "No space left on device" in said, said
            filler.unlink()
            snapshot = open_snapshot(disk / "out" / "fills")
            assert snapshot.warnings == [] and snapshot.requests().height > 0
            # The worker is gone and could not write its final manifest, or wrote it at last.
            assert snapshot.status_label in ("aborted (writer gone)", "aborted")
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)

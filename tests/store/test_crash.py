"""A writer killed with SIGKILL loses at most its last flush interval and no part is half-written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import BinaryIO

from nvfp4_tui.store import reader as reader_module
from nvfp4_tui.store.reader import open_snapshot
from tests.store.helpers import request_event

REPO_ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import asyncio, sys
from pathlib import Path
from typing import BinaryIO
from nvfp4_tui.store.writer import SnapshotWriter
from tests.store.helpers import request_event

async def main():
    writer = SnapshotWriter(Path(sys.argv[1]), "crash", {"purpose": "sigkill test"})
    writer.open()
    flusher = asyncio.create_task(writer.flush_periodically(0.2))
    for index in range(20_000):
        writer.add(request_event(index))
        print(index, flush=True)
        await asyncio.sleep(0.002)
    flusher.cancel()

asyncio.run(main())
"""

WAIT_S = 60.0  # a bound on each wait, far above what a loaded box needs
ENOUGH_ADDED = 50
FLUSH_MARGIN_S = 1.0


def test_sigkill_keeps_everything_added_a_second_before(tmp_path: Path, monkeypatch) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    added: list[tuple[float, int]] = []  # (when the parent saw it, index)
    enough = threading.Event()

    def read_lines() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            added.append((time.monotonic(), int(line)))
            if len(added) > ENOUGH_ADDED:
                enough.set()

    reader_thread = threading.Thread(target=read_lines, daemon=True)
    reader_thread.start()
    try:
        assert enough.wait(WAIT_S), f"the writer added only {len(added)} events"
        # Past the margin after that many, so that they are due on disk and later ones are not.
        time.sleep(FLUSH_MARGIN_S * 1.5)
        killed_at = time.monotonic()
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        child.kill()
    reader_thread.join(timeout=30)

    # Each index is printed after its add, so one seen before the margin was added before it.
    must_have = {index for seen_at, index in added if seen_at < killed_at - FLUSH_MARGIN_S}
    assert len(must_have) > ENOUGH_ADDED, "too few events before the kill to test anything"

    files_read: list[Path] = []
    real_open = reader_module.open_regular

    def recording_open(path: Path) -> BinaryIO:
        files_read.append(Path(path))
        return real_open(path)

    monkeypatch.setattr(reader_module, "open_regular", recording_open)
    (tmp_path / "crash" / "requests" / ".part-999999.parquet.tmp").write_bytes(b"PAR1 torn")
    snapshot = open_snapshot(tmp_path / "crash")

    assert snapshot.warnings == []
    assert snapshot.status == "running"
    assert files_read and not [p for p in files_read if p.name.endswith(".tmp")]
    got = [event.request_index for event in snapshot.events()]
    assert must_have <= set(got)
    assert got == list(range(len(got))), "events are a gap-free prefix, each once"
    assert snapshot.events() == [request_event(index) for index in got]

"""A run of large answers (1-4 MiB each) killed with SIGKILL keeps every request it finished.

The run is a Session in a child process against a server of large answers (in a process of its
own). Each finished request is noted in a side file the moment the snapshot writer has taken it
(the writer is the session's first subscriber), with the monotonic clock, which the parent shares.
Before the journal, the rows of the last flush interval (and of any flush held up by encoding
large answers or by a busy event loop) were lost: 0.5-1.9 s of them on a 2-core box.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nvfp4_tui.store.reader import open_snapshot
from tests.reliability.hostile_servers import HostileProcess
from tests.reliability.runs import hostile_endpoint_toml, write_run_profile

REPO_ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 90.0  # a bound on the wait for enough requests, far above a loaded box's need
ENOUGH_FINISHED = 12
PROMISE_S = 1.5  # the README's "about a second", with room for the side file's own lag

CHILD = """
import asyncio, sys, time
from pathlib import Path
from nvfp4_tui.bench.session import Session
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.events import RequestFinished

profile = load_profile(Path(sys.argv[1]))
side = open(sys.argv[3], "a", buffering=1)

def note(event):
    if isinstance(event, RequestFinished):
        key = f"{event.endpoint_id}/{event.phase_index}/{event.request_index}"
        side.write(f"{time.monotonic()} {key} {len(event.answer_text)}\\n")

suites = load_suites(profile.suite_dirs, profile.run.suites)
session = Session(profile, suites, Path(sys.argv[2]), subscribers=[note], run_id="large")
session.open()
asyncio.run(session.run())
"""


def _finished(side: Path) -> list[tuple[float, str, int]]:
    if not side.exists():
        return []
    rows = [line.split() for line in side.read_text().splitlines()]
    return [(float(t), key, int(size)) for t, key, size in rows]


@pytest.mark.slow
def test_sigkill_amid_large_answers_keeps_every_finished_request(tmp_path: Path) -> None:
    side = tmp_path / "finished.txt"
    with HostileProcess(["large_answer"]) as urls:
        endpoint = hostile_endpoint_toml("large", urls["large_answer"])
        profile = write_run_profile(
            tmp_path, [endpoint], requests=400, concurrency=4, timeout_s=60.0, max_tokens=2048
        )
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(profile), str(tmp_path / "out"), str(side)],
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        )
        try:
            deadline = time.monotonic() + WAIT_S
            while len(_finished(side)) < ENOUGH_FINISHED:
                assert child.poll() is None, "the run ended before it was killed"
                assert time.monotonic() < deadline, f"only {len(_finished(side))} finished"
                time.sleep(0.01)
            time.sleep(PROMISE_S)  # those are due on disk now
            # Killed as the next request finishes: almost surely before a flush could write it.
            seen = len(_finished(side))
            while len(_finished(side)) == seen:
                assert time.monotonic() < deadline, "no request finished after the first ones"
                time.sleep(0.001)
            killed_at = time.monotonic()
            child.send_signal(signal.SIGKILL)
            assert child.wait(timeout=30) == -signal.SIGKILL
        finally:
            child.kill()
            child.wait(timeout=30)

    finished = _finished(side)
    assert min(size for _, _, size in finished) >= 1024 * 1024  # the answers were large
    snapshot = open_snapshot(tmp_path / "out" / "large")
    assert snapshot.status == "running" and snapshot.writer_gone
    assert snapshot.warnings == []
    frame = snapshot.requests()
    kept = {
        f"{row['endpoint_id']}/{row['phase_index']}/{row['request_index']}"
        for row in frame.iter_rows(named=True)
    }
    due = {key for t, key, _ in finished if t < killed_at - PROMISE_S}
    assert len(due) >= ENOUGH_FINISHED and due <= kept
    # Stronger than the promise: a request is on disk once the writer has taken it.
    lost = {key: round(killed_at - t, 2) for t, key, _ in finished if key not in kept}
    assert not lost, f"lost (seconds before the kill): {lost}"
    assert frame.get_column("answer_text").str.len_bytes().min() >= 1024 * 1024  # type: ignore[operator]

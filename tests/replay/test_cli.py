"""The replay, follow and detach command lines; the shipped sample snapshot replays."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.launch import ui
from nvfp4_tui.sources.follow import FollowSource
from nvfp4_tui.sources.replay import ReplaySource
from tests.support.factories import write_snapshot

from .builders import timeline_run

SAMPLE = Path(__file__).resolve().parents[2] / "snapshots" / "sample-demo"


async def test_the_shipped_sample_replays_to_a_complete_run() -> None:
    source = ReplaySource(SAMPLE, speed=None, hold_at_end=False)
    state = FleetState()
    async with asyncio.timeout(30):
        async for batch in source.batches():
            state.apply_all(batch)
    assert source.run_status == "complete" and state.status == "complete"
    assert len(state.endpoints) == 7 and state.dropped == 0
    suites = {row.suite for e in state.endpoints.values() for row in e.leaderboard()}
    assert suites == {"english", "math", "coding", "tool_call"}
    assert {row.concurrency for e in state.endpoints.values() for row in e.leaderboard()} == {1, 4}
    assert all(track.samples for track in state.gpus.values())
    assert sum(p.stat().st_size for p in SAMPLE.rglob("*")) < 1_000_000


def test_replay_headless_prints_the_report_and_the_event_count(capsys) -> None:
    assert main(["replay", str(SAMPLE), "--headless"]) == 0
    out = capsys.readouterr().out
    assert "Quality (verified score, mean per suite, concurrency 1)" in out and "Leaderboard" in out
    assert out.rstrip().endswith(f"run complete; snapshot: {SAMPLE}")
    assert " events; " in out.splitlines()[-1]


@pytest.mark.parametrize(("command", "kind"), [("replay", ReplaySource), ("follow", FollowSource)])
def test_without_headless_the_monitor_opens_on_the_snapshot(
    command: str, kind: type, tmp_path: Path, monkeypatch
) -> None:
    path = write_snapshot(tmp_path, "done", timeline_run(3))
    shown: list[tuple[object, str]] = []

    def monitor(source: object, title: str) -> int:
        shown.append((source, title))
        return 0

    monkeypatch.setattr(ui, "run_source_ui", monitor)
    assert main([command, str(path)]) == 0
    ((source, title),) = shown
    assert isinstance(source, kind) and title == f"{command} done"


def test_bad_replay_arguments_are_one_line(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["replay", str(SAMPLE), "--speed", "fast"])
    assert exit_.value.code == 2
    assert "speed: expected a number > 0 or 'max'" in capsys.readouterr().err
    assert main(["replay", str(tmp_path), "--headless"]) == 2
    assert "not a snapshot directory" in capsys.readouterr().err


def test_follow_without_a_running_snapshot_says_so(tmp_path: Path, capsys) -> None:
    write_snapshot(tmp_path, "finished", timeline_run(3))
    assert main(["follow", "--root", str(tmp_path), "--headless"]) == 2
    assert f"no running snapshot under {tmp_path}" in capsys.readouterr().err


def test_follow_headless_on_a_finished_run_prints_its_phases_and_summary(
    tmp_path: Path, capsys
) -> None:
    path = write_snapshot(tmp_path, "done", timeline_run(5), close="aborted")
    assert main(["follow", str(path), "--headless"]) == 1  # it ended aborted
    out = capsys.readouterr().out
    assert "a                english    c=1" in out
    assert out.rstrip().endswith(f"run aborted; snapshot: {path}")


def test_detach_and_headless_exclude_each_other(capsys) -> None:
    assert main(["demo", "--detach", "--headless"]) == 2
    assert "--detach and --headless" in capsys.readouterr().err


@pytest.mark.parametrize("scale", ["0", "-1", "nan", "inf", "1e9", "fast"])
def test_a_bad_time_scale_is_refused_before_anything_starts(
    scale: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["demo", "--headless", "--time-scale", scale])
    assert stopped.value.code == 2
    assert "--time-scale: expected a number above 0" in capsys.readouterr().err


def test_output_cut_short_by_its_reader_is_not_an_error() -> None:
    # `compare A B | head`: the reader is gone before the report is written.
    command = [sys.executable, "-m", "nvfp4_tui.cli", "compare", str(SAMPLE), str(SAMPLE)]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        errors = process.stderr.read().decode()
        assert process.wait(timeout=60) == 0, errors
    assert "BrokenPipe" not in errors and "Traceback" not in errors

"""The plan travels whole to the worker: what it runs is what was resolved at launch. A dataset
swapped for a FIFO or a device afterwards is never read again, and a plan larger than one
command-line argument can hold (128 KiB on Linux) reaches the worker through its hand-over file,
which is gone once the worker has read it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from nvfp4_tui.bench.handover import FILE_MARK, hand_over, taken
from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.config.plan import LaunchPlan, plan_run
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.sources.live import LiveSource
from nvfp4_tui.store.manifest import read_manifest
from tests.reliability.test_hostile_files import within_deadline
from tests.scoring.test_datasets import NUMBER_SUITE, write_jsonl

PROFILE = """
[run]
name = "handover"
suites = ["gsm"]

[[endpoint]]
id = "a"
url = "http://127.0.0.1:9"
model = "m"
"""
LINUX_ARG_MAX = 128 * 1024


def fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def device(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def _planned(tmp_path: Path, rows: int) -> tuple[LaunchPlan, Path]:
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "gsm.toml").write_text(NUMBER_SUITE)
    dataset = tmp_path / "suites" / "rows.jsonl"
    write_jsonl(
        dataset,
        [{"id": f"q{i}", "question": f"{i} times 7?", "answer": i * 7} for i in range(rows)],
    )
    (tmp_path / "p.toml").write_text(PROFILE)
    return plan_run(load_profile(tmp_path / "p.toml"), gpu_telemetry="none"), dataset


@pytest.mark.parametrize("swap", [fifo, device], ids=["fifo", "dev-zero"])
def test_a_dataset_swapped_after_the_launch_is_never_read_again(
    tmp_path: Path, swap: Callable[[Path], None]
) -> None:
    plan, dataset = _planned(tmp_path, rows=1)
    plain = json.loads(json.dumps(plan.to_plain()))
    swap(dataset)
    (tmp_path / "p.toml").write_text("[run\n")  # the profile gone bad too
    again = within_deadline(lambda: LaunchPlan.from_plain(plain))
    assert again == plan
    assert [p.id for p in again.suites["gsm"].prompts] == ["q0"]


def test_a_plan_past_one_arguments_room_reaches_the_worker_by_its_file(tmp_path: Path) -> None:
    plan, _ = _planned(tmp_path, rows=4000)
    spec = WorkerSpec.of(plan, tmp_path / "out", run_id="big")
    assert len(json.dumps(spec.__dict__)) > LINUX_ARG_MAX
    argument = hand_over(spec.__dict__)
    handed = Path(argument.removeprefix(FILE_MARK))
    assert handed.stat().st_mode & 0o777 == 0o600  # the plan is this user's
    done = subprocess.run(
        [sys.executable, "-m", "nvfp4_tui.bench.worker", argument],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert not handed.exists()
    # It ran the plan: its one endpoint (nothing listens on port 9) ended down, recorded.
    manifest = read_manifest(tmp_path / "out" / "big")
    assert manifest["run_id"] == "big" and manifest["status"] == "aborted"


def test_a_spec_is_json_itself_or_the_file_that_holds_it(tmp_path: Path) -> None:
    assert taken('{"a": 1}') == {"a": 1}
    argument = hand_over({"a": [1, 2]})
    assert taken(argument) == {"a": [1, 2]}
    assert not Path(argument.removeprefix(FILE_MARK)).exists()


async def test_a_worker_that_fails_to_start_leaves_no_spec_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan, _ = _planned(tmp_path, rows=3)
    specs = tmp_path / "specs"
    specs.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(specs))

    async def no_process(*_args: object, **_kwargs: object) -> None:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(asyncio, "create_subprocess_exec", no_process)
    source = LiveSource(WorkerSpec.of(plan, tmp_path / "out", "never"))
    with pytest.raises(OSError, match="Too many open files"):
        await source.start()
    await source.close()
    assert list(specs.iterdir()) == []

"""The digests a plan records of its files: a dataset swapped for a FIFO or a device after the
plan was made is a one-line ConfigError naming it, never a read that hangs or never ends."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from nvfp4_tui.config.plan import LaunchPlan, plan_run
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.config.tomlcheck import ConfigError
from tests.reliability.test_hostile_files import within_deadline
from tests.scoring.test_datasets import NUMBER_SUITE, write_jsonl

PROFILE = """
[run]
name = "digests"
suites = ["gsm"]

[[endpoint]]
id = "a"
url = "http://127.0.0.1:9"
model = "m"
"""


def fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def device(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


@pytest.mark.parametrize("swap", [fifo, device], ids=["fifo", "dev-zero"])
def test_a_dataset_swapped_for_a_fifo_or_device_is_one_line(
    tmp_path: Path, swap: Callable[[Path], None]
) -> None:
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "gsm.toml").write_text(NUMBER_SUITE)
    rows = tmp_path / "suites" / "rows.jsonl"
    write_jsonl(rows, [{"id": "q1", "question": "6 times 7?", "answer": 42}])
    (tmp_path / "p.toml").write_text(PROFILE)
    plan = plan_run(load_profile(tmp_path / "p.toml"), gpu_telemetry="none")
    plain = json.loads(json.dumps(plan.to_plain()))
    swap(rows)
    for read in (lambda: LaunchPlan.from_plain(plain), plan.to_plain):
        with pytest.raises(ConfigError) as raised:
            within_deadline(read)
        assert raised.value.problems == [
            f"{rows}: not a regular file (a directory, FIFO or device); "
            "expected the file the run was planned from"
        ]

"""What the sandbox tests share: small limits, the one-test attack, and the checks after a run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from nvfp4_tui.config.checks import HiddenTests
from nvfp4_tui.scoring.code_check import describe
from nvfp4_tui.scoring.sandbox import SandboxLimits, SandboxRun, run_hidden_tests

LIMITS = SandboxLimits(
    test_timeout_s=1.5, cpu_s=1, memory_mib=512, file_size_mib=1, tmp_mib=8, shm_mib=8
)
ATTACK = HiddenTests("def test_attack():\n    assert attack()\n", ("test_attack",))
SECRET = "nvfp4-sandbox-secret-4f1c"


def processes_mentioning(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry.name))
    return found


def assert_unharmed(sandbox_tmp: Path) -> None:
    """No process of the sandbox is left, its directory is gone, and we can still fork."""
    ours = f"nvfp4-sandbox-{os.getpid()}-"  # every sandbox of this process carries it in argv
    deadline = time.monotonic() + 30.0  # a bound on the wait, far above a loaded box's reaping
    while processes_mentioning(ours) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_mentioning(ours) == []
    assert list(sandbox_tmp.iterdir()) == []
    done = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True)
    assert done.stdout.strip() == "42"


def run(mode: str, code: str, tests: HiddenTests = ATTACK) -> SandboxRun:
    result = run_hidden_tests(code, tests, limits=LIMITS, use_bwrap=mode == "bwrap")
    assert result.kind == mode
    assert f"sandbox:{mode}" in describe(result)
    return result


def contained(result: SandboxRun) -> str:
    """The reason the one attack test failed; it must not have passed."""
    (outcome,) = result.outcomes
    assert outcome.outcome != "passed", outcome
    assert result.passed == 0
    assert outcome.reason
    return outcome.reason

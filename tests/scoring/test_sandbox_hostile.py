"""The sandbox as root (issue 15, items 5-7): root's files stay closed, memory and processes are
bounded, and nothing of a job outlives its run.

Run as root these check the dropped uid; run as a normal user they check the same bounds for that
user (root-only cases skip). ``test_a_normal_user_gets_the_same_sandbox`` runs the unprivileged
path from a root test run, under uid 65534, where an interpreter that uid can run exists.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.checks import HiddenTests
from nvfp4_tui.config.suites import load_suite
from nvfp4_tui.scoring.code_check import describe
from nvfp4_tui.scoring.sandbox import (
    SandboxUnavailable,
    bwrap_status,
    fallback_refusal,
    remove_leftovers,
    run_hidden_tests,
    uid_block,
)
from nvfp4_tui.scoring.verify import score_verified_async
from tests.scoring.sandbox_support import LIMITS, SECRET, assert_unharmed, contained, run

REPO = Path(__file__).resolve().parents[2]
ADD = "def add(a, b):\n    return a + b\n"
ADD_TESTS = HiddenTests(
    "def test_small():\n    assert add(1, 2) == 3\n\ndef test_big():\n    assert add(2**40, 1) > 2**40\n",
    ("test_small", "test_big"),
)


def needs_bwrap() -> None:
    if not bwrap_status()[0]:
        pytest.skip(f"bubblewrap unusable here: {bwrap_status()[1]}")


def test_a_correct_answer_passes_and_a_wrong_one_fails(mode, sandbox_tmp):
    assert run(mode, ADD, ADD_TESTS).passed == 2
    wrong = run(mode, "def add(a, b):\n    return a - b\n", ADD_TESTS)
    assert [o.outcome for o in wrong.outcomes] == ["failed", "failed"]
    assert wrong.outcomes[0].reason == "assert failed: assert add(1, 2) == 3"
    assert_unharmed(sandbox_tmp)


def test_root_only_files_are_not_read(mode, sandbox_tmp):
    if os.geteuid() != 0:
        pytest.skip("as a normal user the sandbox runs as that user: root's files are the point")
    # A 0600 file of root's inside the interpreter's prefix, which the sandbox does see.
    fd, planted = tempfile.mkstemp(prefix=".nvfp4-sandbox-secret-", dir=sys.prefix)
    try:
        os.write(fd, SECRET.encode())
        os.close(fd)
        for target in ("/etc/shadow", planted):
            code = f"def attack():\n    raise ValueError(open({target!r}).read())\n"
            result = run(mode, code)
            reason = contained(result)
            assert reason.startswith(("PermissionError", "FileNotFoundError")), reason
            assert SECRET not in describe(result) and "root:" not in describe(result)
    finally:
        os.unlink(planted)
    assert_unharmed(sandbox_tmp)


@pytest.mark.parametrize("place", ["/dev/shm", "/tmp"])
def test_filling_shared_memory_or_tmp_stops_at_its_bound(place, sandbox_tmp):
    needs_bwrap()
    # 100 files of 1 MiB (the file size limit) into a tmpfs of 8 MiB.
    code = (
        "def attack():\n"
        "    for n in range(100):\n"
        f"        with open('{place}/fill-%d' % n, 'wb') as f:\n"
        "            f.write(b'x' * (1 << 20))\n"
        "    return True\n"
    )
    assert contained(run("bwrap", code)).startswith("OSError: [Errno 28] No space left on device")
    assert_unharmed(sandbox_tmp)


def test_dev_and_the_root_are_not_writable(sandbox_tmp):
    needs_bwrap()
    code = "def attack():\n    open('/dev/fill', 'wb').write(b'x')\n    return True\n"
    assert "Read-only file system" in contained(run("bwrap", code))
    assert_unharmed(sandbox_tmp)


def _threads(count: int, hold_s: float) -> str:
    """Code starting ``count`` threads of small stacks (so memory is never what stops them)."""
    return (
        "import threading\n"
        "def attack():\n"
        "    threading.stack_size(1 << 16)\n"
        "    stop, started = threading.Event(), 0\n"
        "    try:\n"
        f"        for _ in range({count}):\n"
        f"            threading.Thread(target=stop.wait, args=({hold_s},), daemon=True).start()\n"
        "            started += 1\n"
        "    except RuntimeError:\n"
        "        raise RuntimeError(f'threads started: {started}') from None\n"
        f"    stop.wait({hold_s})\n"
        "    return True\n"
    )


def test_threads_beyond_the_process_limit_fail(mode, sandbox_tmp):
    reason = contained(run(mode, _threads(300, 1.0)))
    assert reason.startswith("RuntimeError: threads started: "), reason
    started = int(reason.rsplit(" ", 1)[1])
    # max_processes = 64 counts the harness and the test's own thread too; a normal user's
    # fallback counts all of that user's processes.
    assert started < 64 and (started > 56 or mode == "rlimit-only"), started
    assert_unharmed(sandbox_tmp)


def test_concurrent_sandboxes_each_have_the_whole_process_limit(mode, sandbox_tmp):
    if mode == "rlimit-only" and os.geteuid() != 0:
        pytest.skip("as a normal user the fallback's limit counts all of that user's processes")
    # 40 threads each, held 0.5 s: 80 together, over max_processes = 64 were they counted jointly.
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: run(mode, _threads(40, 0.5)), range(2)))
    assert [r.passed for r in results] == [1, 1], results
    assert_unharmed(sandbox_tmp)


def test_memory_outside_the_bounds_is_refused(mode, sandbox_tmp):
    code = "import os\ndef attack():\n    os.memfd_create('fill')\n    return True\n"
    result = run(mode, code)
    if not result.seccomp:
        pytest.skip("no seccomp filter on this machine")
    assert contained(result).startswith("PermissionError")
    assert_unharmed(sandbox_tmp)


def test_no_file_holds_the_job_while_it_runs(mode, sandbox_tmp):
    marker = "nvfp4-hidden-test-marker-7d2e"
    tests = HiddenTests(f"def test_slow():\n    assert slow() != {marker!r}\n", ("test_slow",))
    code = "import time\ndef slow():\n    time.sleep(1.0)\n    return 1\n"
    seen: list[str] = []
    runner = threading.Thread(
        target=lambda: seen.append(run(mode, code, tests).outcomes[0].outcome)
    )
    runner.start()
    deadline = time.monotonic() + 30.0
    found: list[Path] = []
    while runner.is_alive() and time.monotonic() < deadline:
        for path in sandbox_tmp.rglob("*"):
            try:
                if path.is_file() and marker.encode() in path.read_bytes():
                    found.append(path)
            except OSError:
                pass  # gone between listing and reading
        for directory in (p for p in sandbox_tmp.iterdir() if p.is_dir()):
            assert directory.stat().st_mode & 0o077 == 0, oct(directory.stat().st_mode)
        time.sleep(0.05)
    runner.join(30.0)
    assert seen == ["passed"] and found == []
    assert_unharmed(sandbox_tmp)


def test_each_process_gets_a_block_of_unused_uids_that_its_namespace_maps():
    everything = "         0          0 4294967295\n"
    assert uid_block([everything, everything], 1) == 0x7F000000 + 64
    assert uid_block([everything, everything], 1025) == uid_block([everything, everything], 1)
    rootless = "0 1000 1\n1 100000 65536\n"  # root of a rootless container: 65536 ids
    assert uid_block([rootless, rootless], 1) == 65534 - 64
    assert uid_block([everything, "0 1000 1\n"], 1) is None


def _killed_run_in(directory: Path) -> Path:
    """What a run killed mid-sandbox by an older version left: its job, under a dead pid."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid no process has now
    job = directory / f"nvfp4-sandbox-{gone.pid}-x1y2" / "job"
    job.mkdir(parents=True)
    (job / "job.json").write_text(json.dumps({"solution": ADD, "tests": SECRET}))
    return job.parent


def test_a_killed_runs_directory_is_removed_but_a_live_ones_is_kept(sandbox_tmp):
    dead = _killed_run_in(sandbox_tmp)
    live = sandbox_tmp / f"nvfp4-sandbox-{os.getpid()}-a1b2"
    other = sandbox_tmp / "unrelated"
    live.mkdir()
    other.mkdir()
    assert remove_leftovers(sandbox_tmp) == [dead]
    assert sorted(p.name for p in sandbox_tmp.iterdir()) == sorted([live.name, other.name])


def test_the_next_run_removes_a_killed_runs_directory(sandbox_tmp, monkeypatch):
    fresh = sandbox_tmp.parent / "next-start"  # a directory this process has not cleaned yet
    fresh.mkdir()
    _killed_run_in(fresh)
    monkeypatch.setattr(tempfile, "tempdir", str(fresh))
    with contextlib.suppress(SandboxUnavailable):  # a root fallback refuses, after cleaning up
        run_hidden_tests(ADD, ADD_TESTS, limits=LIMITS)
    assert list(fresh.iterdir()) == []


def test_the_fallback_as_root_refuses_rather_than_run_as_root(sandbox_tmp, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("only root's fallback can refuse")
    if not fallback_refusal():
        pytest.skip("here the dropped uid can run the interpreter: the fallback contains it")
    ran = tmp_path / "model-code-ran"
    code = f"open({str(ran)!r}, 'w').write('x')\n" + ADD
    with pytest.raises(SandboxUnavailable, match=r"as root, model code not run: .*cannot read"):
        run_hidden_tests(code, ADD_TESTS, limits=LIMITS, use_bwrap=False)
    assert not ran.exists()
    assert_unharmed(sandbox_tmp)


async def test_a_refusing_sandbox_leaves_the_verified_score_empty(sandbox_tmp):
    if os.geteuid() != 0 or not fallback_refusal():
        pytest.skip("only root's fallback refuses, and only where it cannot reach the interpreter")
    coding = load_suite(BUILTIN_SUITES / "coding.toml")
    answer = "```python\ndef merge_intervals(intervals):\n    return intervals\n```"
    score, detail = await score_verified_async(
        coding, coding.prompts[0], answer, None, use_bwrap=False
    )
    assert score is None
    assert detail.startswith("scorer_error:SandboxUnavailable: no bubblewrap; as root, model code")


_AS_USER = """
import json, sys
from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.checks import HiddenTests
from nvfp4_tui.config.suites import load_suite
from nvfp4_tui.scoring.sandbox import run_hidden_tests
tests = HiddenTests("def test_a():\\n    assert f()\\n", ("test_a",))
for code in ("def f():\\n    return True\\n", "def f():\\n    return open('/etc/shadow').read()\\n"):
    r = run_hidden_tests(code, tests, use_bwrap=True)
    print(json.dumps([r.kind, r.passed, r.outcomes[0].reason]))
"""


def _interpreter_for(uid: int, env: dict[str, str]) -> str | None:
    """An interpreter of our version that ``uid`` can run with this checkout and its packages."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, shutil.which(version), f"/usr/bin/{version}"):
        if candidate is None:
            continue
        check = [candidate, "-c", "import nvfp4_tui.scoring.sandbox"]
        try:
            done = subprocess.run(check, user=uid, group=uid, extra_groups=[], env=env, cwd="/",
                                  capture_output=True, timeout=60)  # fmt: skip
        except OSError:  # not even executable by that uid
            continue
        if done.returncode == 0:
            return candidate
    return None


def test_a_normal_user_gets_the_same_sandbox():
    if os.geteuid() != 0:
        pytest.skip("already a normal user: the other tests ran this path")
    needs_bwrap()
    nobody = 65534
    packages = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    env = {"PYTHONPATH": os.pathsep.join([str(REPO), *packages]), "PATH": "/usr/bin:/bin"}
    python = _interpreter_for(nobody, env)
    if python is None:
        pytest.skip(f"no {sys.version.split()[0][:4]} interpreter uid {nobody} can run is here")
    done = subprocess.run([python, "-c", _AS_USER], user=nobody, group=nobody, extra_groups=[],
                          env=env, cwd="/", capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    good, bad = (json.loads(line) for line in done.stdout.splitlines())
    assert good == ["bwrap", 1, ""]
    assert bad[:2] == ["bwrap", 0] and bad[2].startswith("FileNotFoundError"), bad

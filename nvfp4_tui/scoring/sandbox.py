"""The code sandbox: hidden tests run against model-written code in a subprocess, never in ours.

Each run gets a fresh temporary directory holding the job (code, tests, limits) and a copy of
``sandbox_harness.py``, which runs the tests one forked child per test (see its docstring for
what each child may do). The subprocess starts with an empty environment, in its own session,
with stdin closed, and is killed with its whole process group at a wall-clock deadline.

Two kinds of sandbox, and what the row says about each (``SandboxRun.label``):

- ``bwrap`` (bubblewrap, where installed and working): a read-only view of the file system
  (``--ro-bind / /``) with a private ``/tmp`` of bounded size, home directories hidden (the
  interpreter's own directories are bound back), new user, pid, network, ipc and uts namespaces
  (``--unshare-all``: the only network is an empty loopback), uid and gid 65534, every
  capability dropped, ``--die-with-parent`` and ``--new-session``.
- ``rlimit-only`` (no bwrap, or forced): the same harness, limits and seccomp filter, run as the
  benchmark's own user in the temporary directory. What it cannot stop: writing wherever that
  user may write, reading that user's files (and other processes' environments in /proc), and,
  where the seccomp filter is unavailable (not Linux x86-64 or arm64), opening network
  connections and starting processes beyond RLIMIT_NPROC (which Linux does not apply to root).
  The row's detail says ``sandbox:rlimit-only`` so a user knows the sandbox was weaker.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, get_args

from nvfp4_tui.config.checks import HiddenTests, parse_python

SandboxKind = Literal["bwrap", "rlimit-only"]
Outcome = Literal["passed", "failed", "timeout", "crashed", "not_run"]
HARNESS_PATH = Path(__file__).with_name("sandbox_harness.py")
_NOBODY = "65534"
_HIDDEN_HOMES = ("/root", "/home")
_JOB_DIR = "/tmp/job"  # where the job directory appears inside bwrap
_SCRATCH_DIR = "/tmp/scratch"
_PROBE_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class SandboxLimits:
    """What one hidden-test run may use; the CPU and memory limits apply to each test."""

    test_timeout_s: float = 5.0  # wall clock per test
    cpu_s: int = 5  # CPU seconds per test
    memory_mib: int = 1024  # address space per process
    file_size_mib: int = 16  # largest file it may write
    max_processes: int = 64  # RLIMIT_NPROC (threads count too)
    max_open_files: int = 256
    tmp_mib: int = 64  # size of bwrap's private /tmp
    startup_s: float = 20.0  # starting the sandbox and the interpreter, on top of the tests


@dataclass(frozen=True)
class TestOutcome:
    name: str
    outcome: Outcome
    reason: str = ""


@dataclass(frozen=True)
class SandboxRun:
    kind: SandboxKind
    seccomp: bool  # the no-processes, no-sockets filter was active in every test
    outcomes: tuple[TestOutcome, ...]
    note: str = ""  # why the sandbox is rlimit-only, or what went wrong around the tests
    limits: SandboxLimits = field(default_factory=SandboxLimits)

    @property
    def passed(self) -> int:
        return sum(o.outcome == "passed" for o in self.outcomes)

    @property
    def label(self) -> str:
        """``sandbox:bwrap`` or ``sandbox:rlimit-only``, plus ``seccomp:off`` when it was off."""
        return f"sandbox:{self.kind}" + ("" if self.seccomp else "|seccomp:off")


def _bwrap_args(job_dir: Path, limits: SandboxLimits) -> list[str]:
    bwrap = shutil.which("bwrap") or "bwrap"
    args = [
        bwrap,
        "--die-with-parent",
        "--new-session",
        "--unshare-all",
        "--unshare-user",
        "--uid",
        _NOBODY,
        "--gid",
        _NOBODY,
        "--cap-drop",
        "ALL",
        "--clearenv",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]
    args += ["--size", str(limits.tmp_mib << 20)] if _bwrap_has_size() else []
    interpreter_dirs = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix)}
    interpreter_dirs.add(Path(sys.executable).resolve().parent)
    # A venv may live under /tmp (CI clones do): its unresolved path is what gets executed.
    interpreter_dirs.update({Path(sys.prefix).absolute(), Path(sys.executable).absolute().parent})
    args += ["--tmpfs", "/tmp"]
    for kept in sorted(d for d in interpreter_dirs if d.is_relative_to("/tmp")):
        args += ["--ro-bind", str(kept), str(kept)]
    for home in map(Path, _HIDDEN_HOMES):
        if home.is_dir():
            args += ["--tmpfs", str(home)]
            for kept in sorted(d for d in interpreter_dirs if d.is_relative_to(home)):
                args += ["--ro-bind", str(kept), str(kept)]
            args += ["--remount-ro", str(home)]  # hidden, and no unbounded place to write
    args += ["--ro-bind", str(job_dir), _JOB_DIR, "--dir", _SCRATCH_DIR, "--chdir", _SCRATCH_DIR]
    return args


@functools.cache
def _bwrap_has_size() -> bool:
    """Whether this bwrap takes ``--size`` (0.7 and later) to bound a tmpfs."""
    try:
        done = subprocess.run(
            [shutil.which("bwrap") or "bwrap", "--help"],
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return "--size" in done.stdout + done.stderr


@functools.cache
def bwrap_status() -> tuple[bool, str]:
    """Whether bubblewrap can run the interpreter here, and if not, why (probed once)."""
    if shutil.which("bwrap") is None:
        return False, "bwrap not installed"
    with tempfile.TemporaryDirectory(prefix="nvfp4-sandbox-probe-") as tmp:
        command = [*_bwrap_args(Path(tmp), SandboxLimits()), sys.executable, "-I", "-c", "pass"]
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=_PROBE_TIMEOUT_S,
                env={},
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError) as e:
            return False, f"bwrap failed: {e}"
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return False, "bwrap failed: " + (lines[-1] if lines else f"exit {done.returncode}")
    return True, ""


def sandbox_kind(use_bwrap: bool | None = None) -> tuple[SandboxKind, str]:
    """The sandbox a run gets, and why it is weaker when it is. ``use_bwrap``: None = when it
    works, False = never (the rlimit-only fallback), True = required (raises if unusable)."""
    if use_bwrap is False:
        return "rlimit-only", "fallback forced"
    works, why = bwrap_status()
    if works:
        return "bwrap", ""
    if use_bwrap:
        raise RuntimeError(f"bubblewrap required but unusable: {why}")
    return "rlimit-only", why


def _preload(tests: HiddenTests) -> list[str]:
    """Top-level modules the hidden tests import, loaded once by the harness before forking."""
    names = {"asyncio"}
    for node in ast.walk(parse_python(tests.source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    names.discard("solution")
    return sorted(names)


def _write_job(job_dir: Path, code: str, tests: HiddenTests, limits: SandboxLimits) -> None:
    job = {
        "solution": code,
        "tests": tests.source,
        "names": list(tests.names),
        "preload": _preload(tests),
        "seccomp": True,
        "limits": {
            **asdict(limits),
            "memory_bytes": limits.memory_mib << 20,
            "file_size_bytes": limits.file_size_mib << 20,
        },
    }
    (job_dir / "job.json").write_text(json.dumps(job), encoding="utf-8")
    shutil.copyfile(HARNESS_PATH, job_dir / "harness.py")


def _parse(stdout: str, tests: HiddenTests) -> tuple[bool, dict[str, TestOutcome]]:
    seccomp, found = False, {}
    for line in stdout.splitlines():
        try:
            body = json.loads(line)
        except ValueError:
            continue
        if not isinstance(body, dict):
            continue
        if body.get("harness") == "ready":
            seccomp = bool(body.get("seccomp"))
        elif body.get("test") in tests.names and body.get("outcome") in get_args(Outcome):
            name = body["test"]
            found[name] = TestOutcome(name, body["outcome"], str(body.get("reason", "")))
    return seccomp, found


def run_hidden_tests(
    code: str,
    tests: HiddenTests,
    *,
    limits: SandboxLimits | None = None,
    use_bwrap: bool | None = None,
) -> SandboxRun:
    """Run ``tests`` against ``code`` in a sandbox subprocess; blocks until done or killed.

    Call it from a worker thread (``verify.score_verified_async`` does): it waits on a
    subprocess for up to ``limits.startup_s`` plus one test timeout per test.
    """
    limits = limits or SandboxLimits()
    kind, why = sandbox_kind(use_bwrap)
    budget_s = limits.startup_s + len(tests.names) * (limits.test_timeout_s + 1.0)
    with tempfile.TemporaryDirectory(prefix="nvfp4-sandbox-") as tmp:
        job_dir = Path(tmp) / "job"
        scratch = Path(tmp) / "scratch"
        job_dir.mkdir()
        scratch.mkdir()
        _write_job(job_dir, code, tests, limits)
        if kind == "bwrap":
            command = [*_bwrap_args(job_dir, limits), sys.executable, "-I", "-B"]
            command += [f"{_JOB_DIR}/harness.py", f"{_JOB_DIR}/job.json"]
        else:
            command = [sys.executable, "-I", "-B", str(job_dir / "harness.py")]
            command.append(str(job_dir / "job.json"))
        stdout, stderr, note = _run(command, scratch, budget_s)
    seccomp, found = _parse(stdout, tests)
    if len(found) < len(tests.names) and not note:
        lines = stderr.strip().splitlines()
        note = "harness stopped: " + (lines[-1][:160] if lines else "no output")
    outcomes = tuple(
        found.get(name) or TestOutcome(name, "not_run", note or "no result") for name in tests.names
    )
    return SandboxRun(kind, seccomp, outcomes, "; ".join(n for n in (why, note) if n), limits)


def _run(command: list[str], cwd: Path, budget_s: float) -> tuple[str, str, str]:
    """Run the sandbox; on the deadline kill its process group. Returns stdout, stderr, note."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env={},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=budget_s)
        note = ""
    except subprocess.TimeoutExpired:
        _kill_group(process.pid)
        stdout, stderr = process.communicate()
        note = f"sandbox killed after {budget_s:g} s"
    return stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"), note


def _kill_group(pid: int) -> None:
    # bwrap's sandbox dies with it (--die-with-parent, and its pid namespace goes); the
    # harness kills each test's own group at the test's deadline.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)

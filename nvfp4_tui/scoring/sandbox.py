"""The code sandbox: hidden tests run against model-written code in a subprocess, never in ours.

Each run starts ``sandbox_harness.py`` (its text given to ``python -I -B -c``) and hands it the
job (code, tests, limits) on its stdin, so no file on disk ever holds the model's code or the
hidden tests. The harness runs the tests one forked child per test (see its docstring for what
each child may do). The subprocess starts with an empty environment, in its own session, and is
killed with its whole process group at a wall-clock deadline.

Model code never runs as root. Run as root (as on many GPU boxes), each sandbox gets a uid and
gid of its own that no account uses (``sandbox_uid``: from ``SANDBOX_UIDS_FROM``, a block of 64
per process), and the harness drops to it before it reads the job; so root's 0600 files are
unreadable and RLIMIT_NPROC, which Linux does not apply to root, counts that sandbox alone. Run
as a normal user, the sandbox runs as that user.

Two kinds of sandbox, and what the row says about each (``SandboxRun.label``):

- ``bwrap`` (bubblewrap, where installed and working): the file system view of
  ``sandbox_view`` (the shared libraries and the interpreter, read-only; ``/tmp`` and
  ``/dev/shm`` as tmpfs of ``tmp_mib`` and ``shm_mib``; nothing else of the host), and new pid,
  network, ipc and uts namespaces (the only network is an empty loopback),
  ``--die-with-parent`` and ``--new-session``.
- ``rlimit-only`` (no bwrap, or forced): the same harness, limits and seccomp filter, in a
  private temporary directory. What it cannot stop: reading what its user may read and writing
  where it may write (a normal user's own files, world-writable places, other processes' of the
  same user in /proc), and, where the seccomp filter is unavailable (not Linux x86-64 or arm64),
  opening network connections. Run as a normal user, its process limit counts all of that
  user's processes. Run as root where the dropped uid cannot reach the interpreter (one under
  /root), it refuses to run anything: ``SandboxUnavailable``, and the answer gets no verified
  score rather than one measured as root. The row's detail says ``sandbox:rlimit-only``.

A run killed mid-sandbox (SIGKILL) can leave its ``nvfp4-sandbox-PID-*`` directory (only the
fallback makes one); the next run removes those whose process is gone.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import itertools
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, get_args

from nvfp4_tui.config.checks import HiddenTests, parse_python
from nvfp4_tui.scoring.sandbox_view import bwrap_args

SandboxKind = Literal["bwrap", "rlimit-only"]
Outcome = Literal["passed", "failed", "timeout", "crashed", "not_run"]
HARNESS_PATH = Path(__file__).with_name("sandbox_harness.py")
BRIDGE_PATH = Path(__file__).with_name("sandbox_bridge.py")
SANDBOX_UIDS_FROM = 0x7F000000  # 2130706432: far above any account, below the signed limit
_UIDS_PER_PROCESS = 64
_PROCESS_BLOCKS = 1024  # uid blocks, chosen by pid, so concurrent benchmarks rarely share one
_LEFTOVER = re.compile(r"nvfp4-sandbox-(?:(\d+)-)?")
_PROBE_TIMEOUT_S = 15.0
_STARTED = time.time()  # leftovers older than this process, named without a pid, are a dead run's


class SandboxUnavailable(RuntimeError):
    """No sandbox can contain model code here; it was not run."""


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
    shm_mib: int = 16  # size of bwrap's private /dev/shm
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


@functools.cache
def bwrap_status() -> tuple[bool, str]:
    """Whether bubblewrap can run the harness here, and if not, why (probed once)."""
    if shutil.which("bwrap") is None:
        return False, "bwrap not installed"
    refused = _probe("bwrap")
    return (False, f"bwrap failed: {refused}") if refused else (True, "")


@functools.cache
def fallback_refusal() -> str:
    """Why the rlimit-only fallback will not run model code as root here; "" when it will."""
    return _probe("rlimit-only") if os.geteuid() == 0 else ""


def _probe(kind: SandboxKind) -> str:
    """Start the harness with no tests; "" when it came up, else what stopped it."""
    empty = HiddenTests("", ())
    try:
        job = _job("", empty, "", (), SandboxLimits())
        stdout, stderr, note = _start(kind, job, SandboxLimits(), _PROBE_TIMEOUT_S)
    except OSError as e:
        return str(e)
    try:
        _parse(stdout, empty)
    except SandboxUnavailable as e:
        return str(e)
    if '"harness": "ready"' in stdout:
        return ""
    errors = stderr.strip().splitlines()
    return (errors[-1] if errors else note or "no output")[:160]


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


def _preload(tests: HiddenTests, stub: str) -> list[str]:
    """Top-level modules the hidden tests and the stub import, loaded once before forking."""
    names = {"asyncio"}
    for node in ast.walk(parse_python(tests.source + "\n" + stub)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    names.discard("solution")
    return sorted(names)


def wanted_names(tests: HiddenTests, stub: str, defines: tuple[str, ...]) -> list[str]:
    """The names the tests take from the answer's program: ``defines``, and every name the
    tests read that neither they, the stub (trusted: it runs beside the tests) nor the
    built-ins bind. So the answer cannot stand in for ``len`` or for a stub's helper."""
    read, bound = _read_and_bound(tests.source)
    bound |= _read_and_bound(stub)[1] | set(dir(builtins))
    return sorted(set(defines) | (read - bound))


def _read_and_bound(source: str) -> tuple[set[str], set[str]]:
    """The names ``source`` reads, and those it binds anywhere (a def, an argument, an import)."""
    read: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(parse_python(source)):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return read, bound


def _job(
    code: str, tests: HiddenTests, stub: str, defines: tuple[str, ...], limits: SandboxLimits
) -> bytes:
    job = {
        "solution": code,
        "tests": tests.source,
        "stub": stub,
        "wanted": wanted_names(tests, stub, defines),
        "bridge": _text(BRIDGE_PATH),
        "names": list(tests.names),
        "preload": _preload(tests, stub),
        "seccomp": True,
        "limits": {
            **asdict(limits),
            "memory_bytes": limits.memory_mib << 20,
            "file_size_bytes": limits.file_size_mib << 20,
        },
    }
    return json.dumps(job).encode()


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
        elif body.get("harness") == "refused":
            raise SandboxUnavailable(f"model code not run: {body.get('reason')}")
        elif body.get("test") in tests.names and body.get("outcome") in get_args(Outcome):
            name = body["test"]
            found[name] = TestOutcome(name, body["outcome"], str(body.get("reason", "")))
    return seccomp, found


def run_hidden_tests(
    code: str,
    tests: HiddenTests,
    *,
    stub: str = "",
    defines: tuple[str, ...] = (),
    limits: SandboxLimits | None = None,
    use_bwrap: bool | None = None,
) -> SandboxRun:
    """Run ``tests`` against ``code`` in a sandbox subprocess; blocks until done or killed.

    The tests run in a process of their own, beside ``stub`` (trusted code they may use, such as
    a HumanEval problem's helpers); from ``code`` they get only the names ``wanted_names``
    gives, each reached through ``sandbox_bridge``.

    Call it from a worker thread (``verify.score_verified_async`` does): it waits on a
    subprocess for up to ``limits.startup_s`` plus one test timeout per test. Raises
    ``SandboxUnavailable`` where no sandbox can contain the code (see the module docstring).
    """
    limits = limits or SandboxLimits()
    kind, why = sandbox_kind(use_bwrap)
    _remove_leftovers_once(Path(tempfile.gettempdir()))
    if kind == "rlimit-only" and (refused := fallback_refusal()):
        raise SandboxUnavailable(f"no bubblewrap; as root, {refused}")
    budget_s = limits.startup_s + len(tests.names) * (limits.test_timeout_s + 1.0)
    job = _job(code, tests, stub, defines, limits)
    stdout, stderr, note = _start(kind, job, limits, budget_s)
    seccomp, found = _parse(stdout, tests)
    if len(found) < len(tests.names) and not note:
        lines = stderr.strip().splitlines()
        note = "harness stopped: " + (lines[-1][:160] if lines else "no output")
    outcomes = tuple(
        found.get(name) or TestOutcome(name, "not_run", note or "no result") for name in tests.names
    )
    return SandboxRun(kind, seccomp, outcomes, "; ".join(n for n in (why, note) if n), limits)


_RUNS = itertools.count()
_busy_slots: set[int] = set()
_cleaned: set[Path] = set()  # temporary directories already rid of leftovers
_lock = threading.Lock()  # guards the two sets above


@contextlib.contextmanager
def sandbox_uid() -> Iterator[int | None]:
    """The uid (and gid) this sandbox drops to: one of its own while it runs, as root; else None."""
    if os.geteuid() != 0:
        yield None
        return
    maps = [Path(f"/proc/self/{m}_map").read_text() for m in ("uid", "gid")]
    first = uid_block(maps, os.getpid())
    if first is None:
        raise SandboxUnavailable("no unused uid and gid is mapped in this user namespace")
    with _lock:
        slot = next((s for s in range(_UIDS_PER_PROCESS) if s not in _busy_slots), None)
        if slot is None:
            raise SandboxUnavailable(f"more than {_UIDS_PER_PROCESS} sandboxes at once")
        _busy_slots.add(slot)
    try:
        yield first + slot
    finally:
        with _lock:
            _busy_slots.discard(slot)


def uid_block(maps: list[str], pid: int) -> int | None:
    """The first of this process's 64 sandbox uids, given its ``/proc/self/{uid,gid}_map``.

    Root of a rootless container maps only some 65536 ids: there the block just below nobody
    (65534), shared by every process of that container; None when not even that is mapped.
    """
    mapped = [
        [
            (int(first), int(first) + int(count))
            for first, _, count in map(str.split, text.splitlines())
        ]
        for text in maps
    ]
    wanted = SANDBOX_UIDS_FROM + (pid % _PROCESS_BLOCKS) * _UIDS_PER_PROCESS
    for first in (wanted, 65534 - _UIDS_PER_PROCESS):
        last = first + _UIDS_PER_PROCESS
        if all(any(lo <= first and last <= hi for lo, hi in ranges) for ranges in mapped):
            return first
    return None


def _start(
    kind: SandboxKind, job: bytes, limits: SandboxLimits, budget_s: float
) -> tuple[str, str, str]:
    """One harness run of ``kind`` under its own uid; stdout, stderr and a note on a kill."""
    tag = f"nvfp4-sandbox-{os.getpid()}-{next(_RUNS)}"
    with sandbox_uid() as uid, contextlib.ExitStack() as cleanup:
        harness = [sys.executable, "-I", "-B", "-c", _text(HARNESS_PATH), tag]
        harness += [] if uid is None else [str(uid), str(uid)]
        if kind == "bwrap":
            sizes = {"tmp_bytes": limits.tmp_mib << 20, "shm_bytes": limits.shm_mib << 20}
            command, cwd = bwrap_args(as_root=uid is not None, **sizes) + harness, Path("/")
        else:  # a directory only its uid may enter, gone on every way out of this block
            cwd = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix=f"{tag}-"))) / "w"
            cwd.mkdir(mode=0o700)
            if uid is not None:
                os.chown(cwd, uid, uid)
            command = harness
        return _run(command, cwd, job, budget_s)


@functools.cache
def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _remove_leftovers_once(directory: Path) -> None:
    with _lock:
        if directory in _cleaned:
            return
        _cleaned.add(directory)
    remove_leftovers(directory)


def remove_leftovers(directory: Path) -> list[Path]:
    """Remove the sandbox directories a killed run left in ``directory``; returns those removed.

    Only our own user's, and only a dead run's: named with a pid that is gone, or (named before
    pids were) last changed before this process started.
    """
    removed: list[Path] = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return removed
    for entry in entries:
        named = _LEFTOVER.match(entry.name)
        try:
            info = entry.lstat()
        except OSError:
            continue
        if not named or not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            continue
        pid = named.group(1)
        if _alive(int(pid)) if pid else info.st_mtime >= _STARTED:
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        pass  # another user's live process
    return True


def _run(command: list[str], cwd: Path, job: bytes, budget_s: float) -> tuple[str, str, str]:
    """Run the sandbox; on the deadline kill its process group. Returns stdout, stderr, note."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env={},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(job, timeout=budget_s)
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

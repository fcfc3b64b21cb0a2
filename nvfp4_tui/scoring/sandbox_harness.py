"""The test runner that runs inside the code sandbox: one forked child per hidden test.

Run by ``sandbox.run_hidden_tests`` as ``python -I -B -c <this file's text> TAG [UID GID]`` with
the job (code, tests, limits) as JSON on its stdin: no file holds the model's code or the hidden
tests, and the interpreter need not be able to read this package. TAG names the run in ``ps``.
It imports nothing outside the standard library, so it works under any interpreter that the
sandbox can see. It prints one JSON line per hidden test to its stdout, in the job's order, after
a first ``{"harness": ...}`` line.

Started as root, it is given UID and GID: before it reads its stdin it gives up root for them for
good (no supplementary groups, real, effective and saved ids all changed, and a way back checked
to be refused), then checks that the standard library can still be read. When either fails it
prints ``{"harness": "refused", "reason": ...}`` and runs nothing: model code never runs as root.

The harness process itself never runs the model's code. For each test it forks a child that,
before touching that code: moves into its own process group; points its stdout and stderr at a
capture pipe and closes every other descriptor but its verdict pipe (so the harness's stdout, the
only channel back to the benchmark, is out of its reach); sets its CPU, memory, file-size,
process and open-file limits; and, on Linux x86-64 and arm64, installs a seccomp filter that
refuses new processes (threads are allowed), sockets (socketpair is allowed, asyncio needs it),
io_uring, ptrace, signals to other processes, new namespaces and mounts (a user namespace of its
own could mount an unbounded tmpfs), memfd_create and SysV shared memory (memory outside every
size limit). Only then does it execute the code as module
``solution``, the hidden tests in a namespace that sees all of the solution's names, and the one
test function (``async def`` tests run under ``asyncio.run``). The harness is non-dumpable, so a
child cannot read its memory or descriptors through /proc.

Residual risk, accepted: the child writes its own verdict, and code written to attack this
harness could find the verdict pipe among its own descriptors and report its own test as passed.
It cannot reach another test's verdict, the harness's stdout, or any other answer's score, and
output that merely looks like a result line (printed text, an early ``exit(0)``) counts as a
failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import inspect
import json
import os
import platform
import resource
import select
import signal
import struct
import sys
import time
import traceback
import types
from typing import Any

_OUTPUT_KEEP_BYTES = 4096
_REASON_CHARS = 160

# seccomp BPF, from linux/filter.h, linux/seccomp.h and linux/audit.h.
_LD_ABS_W = 0x20
_JEQ, _JGE, _JSET = 0x15, 0x35, 0x45
_RET = 0x06
_ALLOW, _ERRNO, _KILL = 0x7FFF0000, 0x00050000, 0x80000000
_CLONE_THREAD = 0x00010000
_X32_BIT = 0x40000000
# Per architecture: the audit arch id and the syscalls refused (name -> number).
_SYSCALLS: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "fork": 57,
            "vfork": 58,
            "clone": 56,
            "clone3": 435,
            "socket": 41,
            "io_uring_setup": 425,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "kill": 62,
            "tkill": 200,
            "tgkill": 234,
            "pidfd_send_signal": 424,
            "unshare": 272,
            "setns": 308,
            "mount": 165,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsmount": 432,
            "memfd_create": 319,
            "shmget": 29,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "clone": 220,
            "clone3": 435,
            "socket": 198,
            "io_uring_setup": 425,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "kill": 129,
            "tkill": 130,
            "tgkill": 131,
            "pidfd_send_signal": 424,
            "unshare": 97,
            "setns": 268,
            "mount": 40,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsmount": 432,
            "memfd_create": 279,
            "shmget": 194,
        },
    ),
}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def seccomp_program() -> bytes | None:
    """The filter for this machine's architecture, or None where there is none."""
    arch = _SYSCALLS.get(platform.machine())
    if arch is None:
        return None
    audit_arch, numbers = arch
    refuse = _ERRNO | errno.EPERM
    ops = [_op(_LD_ABS_W, 4), _op(_JEQ, audit_arch, 1, 0), _op(_RET, _KILL), _op(_LD_ABS_W, 0)]
    if audit_arch == _SYSCALLS["x86_64"][0]:
        ops += [_op(_JGE, _X32_BIT, 0, 1), _op(_RET, refuse)]  # the x32 ABI's numbers
    for name, number in numbers.items():
        if name == "clone":  # a thread (CLONE_THREAD) is allowed, a process is not
            ops += [
                _op(_JEQ, number, 0, 4),
                _op(_LD_ABS_W, 16),  # low 32 bits of the first argument: the flags
                _op(_JSET, _CLONE_THREAD, 0, 1),
                _op(_RET, _ALLOW),
                _op(_RET, _ERRNO | errno.EAGAIN),
            ]
        elif name == "clone3":  # flags sit behind a pointer; ENOSYS makes libc use clone
            ops += [_op(_JEQ, number, 0, 1), _op(_RET, _ERRNO | errno.ENOSYS)]
        else:
            ops += [_op(_JEQ, number, 0, 1), _op(_RET, refuse)]
    ops.append(_op(_RET, _ALLOW))
    return b"".join(ops)


def install_seccomp() -> bool:
    program = seccomp_program()
    if program is None:
        return False

    class Fprog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(program)
    fprog = Fprog(len(program) // 8, ctypes.addressof(buffer))
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
        return False
    return libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) == 0


def _limit(which: int, soft: int, hard: int | None = None) -> None:
    try:
        resource.setrlimit(which, (soft, soft if hard is None else hard))
    except (ValueError, OSError):
        # Never raise a limit above its hard maximum; lowering it is always allowed.
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:
            resource.setrlimit(which, (min(soft, current_hard), current_hard))


def _non_dumpable() -> None:
    # Not Linux (no prctl): /proc does not expose descriptors there anyway.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4


def _reason(error: BaseException, tests_source: str) -> str:
    if isinstance(error, AssertionError) and not str(error):
        lines = tests_source.splitlines()
        for frame in reversed(traceback.extract_tb(error.__traceback__)):
            if frame.filename == "hidden_tests.py" and frame.lineno and frame.lineno <= len(lines):
                return "assert failed: " + lines[frame.lineno - 1].strip()
        return "assert failed"
    text = f"{type(error).__name__}: {error}".replace("\n", " ")
    return text[:_REASON_CHARS]


def _run_test(job: dict[str, Any], name: str) -> dict[str, str]:
    module = types.ModuleType("solution")
    module.__file__ = os.path.abspath("solution.py")
    sys.modules["solution"] = module
    try:
        exec(compile(job["solution"], "solution.py", "exec"), module.__dict__)
    except BaseException as error:
        return {"outcome": "failed", "reason": "solution: " + _reason(error, "")}
    namespace = dict(module.__dict__, __name__="hidden_tests")
    try:
        exec(compile(job["tests"], "hidden_tests.py", "exec"), namespace)
        result = namespace[name]()
        if inspect.iscoroutine(result):
            asyncio.run(result)
    except BaseException as error:
        return {"outcome": "failed", "reason": _reason(error, job["tests"])}
    return {"outcome": "passed", "reason": ""}


def _child(job: dict[str, Any], name: str, verdict_w: int, output_w: int) -> None:
    """Runs in the forked child; never returns."""
    try:
        os.setpgid(0, 0)
        os.dup2(output_w, 1)
        os.dup2(output_w, 2)
        os.closerange(3, verdict_w)
        os.closerange(verdict_w + 1, 1 << 16)
        limits = job["limits"]
        _limit(resource.RLIMIT_CPU, limits["cpu_s"], limits["cpu_s"] + 1)
        _limit(resource.RLIMIT_AS, limits["memory_bytes"])
        _limit(resource.RLIMIT_NPROC, limits["max_processes"])
        _limit(resource.RLIMIT_NOFILE, limits["max_open_files"])
        if job["seccomp"] and not install_seccomp():
            raise OSError("seccomp filter refused")
        verdict = _run_test(job, name)
    except BaseException as error:
        verdict = {"outcome": "failed", "reason": "harness: " + _reason(error, "")}
    try:
        os.write(verdict_w, json.dumps(verdict).encode())
    finally:
        os._exit(0)


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number == signal.SIGXCPU or number == signal.SIGKILL:
            return f"killed by {signal.Signals(number).name} (cpu limit)"
        return f"killed by {signal.Signals(number).name}"
    return f"exited with code {os.WEXITSTATUS(status)} before the test finished"


def run_one(job: dict[str, Any], name: str) -> dict[str, str]:
    verdict_r, verdict_w = os.pipe()
    output_r, output_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(verdict_r)
        os.close(output_r)
        _child(job, name, verdict_w, output_w)
    os.close(verdict_w)
    os.close(output_w)
    deadline = time.monotonic() + job["limits"]["test_timeout_s"]
    verdict, output, open_fds = b"", b"", {verdict_r, output_r}
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select(list(open_fds), [], [], left)
        for fd in ready:
            data = os.read(fd, 65536)
            if not data:
                open_fds.discard(fd)
            elif fd == verdict_r:
                verdict += data[: 65536 - len(verdict)]
            elif len(output) < _OUTPUT_KEEP_BYTES:
                output += data  # drained either way, so a chatty test never blocks
    timed_out = bool(open_fds)
    for target in (-pid, pid):  # its group, then itself (in case it left the group)
        with contextlib.suppress(ProcessLookupError):
            os.kill(target, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    os.close(verdict_r)
    os.close(output_r)
    if timed_out and not verdict:
        seconds = job["limits"]["test_timeout_s"]
        return {"outcome": "timeout", "reason": f"no result within {seconds:g} s"}
    try:
        result = json.loads(verdict)
        if result.get("outcome") in ("passed", "failed"):
            return {"outcome": result["outcome"], "reason": str(result.get("reason", ""))}
    except (ValueError, AttributeError):
        pass
    return {"outcome": "crashed", "reason": _ended(status)}


def seccomp_works() -> bool:
    """Whether a child can install the filter here, and it then refuses a fork."""
    if seccomp_program() is None:
        return False
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            if install_seccomp():
                try:
                    os._exit(os.fork() and 2)  # pragma: no cover - the filter failed
                except OSError:
                    code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def drop_privileges(uid: int, gid: int) -> None:
    """Give up root for ``uid``/``gid`` for good; raises when that did not happen in full."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) or os.getgroups():
        raise PermissionError(f"still holding other ids after dropping to uid {uid}")
    try:
        os.setuid(0)
    except PermissionError:
        pass
    else:
        raise PermissionError(f"uid {uid} could become root again")
    library = os.path.dirname(os.__file__)
    if not os.access(library, os.R_OK | os.X_OK):
        raise PermissionError(f"uid {uid} cannot read the standard library at {library}")


def main(argv: list[str]) -> int:
    if len(argv) == 4:
        try:
            drop_privileges(int(argv[2]), int(argv[3]))
        except (OSError, ValueError) as error:
            print(json.dumps({"harness": "refused", "reason": _reason(error, "")}), flush=True)
            return 2
    job = json.loads(sys.stdin.buffer.read())
    empty = os.open(os.devnull, os.O_RDONLY)
    os.dup2(empty, 0)  # the tests read an empty stdin, not the job
    os.close(empty)
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_FSIZE, job["limits"]["file_size_bytes"])
    _non_dumpable()
    for module in job.get("preload", ()):  # what the hidden tests import: trusted, load once
        __import__(module)
    job["seccomp"] = job["seccomp"] and seccomp_works()
    print(json.dumps({"harness": "ready", "seccomp": job["seccomp"]}), flush=True)
    for name in job["names"]:
        print(json.dumps({"test": name, **run_one(job, name)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

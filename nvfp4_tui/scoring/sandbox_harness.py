"""The test runner that runs inside the code sandbox: two forked children per hidden test.

Run by ``sandbox.run_hidden_tests`` as ``python -I -B -c <this file's text> TAG [UID GID]`` with
the job (code, tests, limits, the bridge's text) as JSON on its stdin: no file holds the model's
code or the hidden tests, and the interpreter need not be able to read this package. TAG names
the run in ``ps``. It imports nothing outside the standard library (the bridge neither), so it
works under any interpreter that the sandbox can see. It prints one JSON line per hidden test to
its stdout, in the job's order, after a first ``{"harness": ...}`` line.

Started as root, it is given UID and GID: before it reads its stdin it gives up root for them for
good (no supplementary groups, real, effective and saved ids all changed, and a way back checked
to be refused), then checks that the standard library can still be read. When either fails it
prints ``{"harness": "refused", "reason": ...}`` and runs nothing: model code never runs as root.

The harness process itself runs neither the model's code nor the tests. For each test it forks
two children joined by a pair of pipes (``sandbox_bridge``): the *answer's* process, which runs
the model's program and answers calls, and the *tests'* process, which runs the hidden test and
alone holds the verdict pipe; the harness reads the verdict from there and nowhere else. Before
any code of the test's runs, each child: moves into its own process group; points its stdout and
stderr at a capture pipe (drained, never read as a result) and closes every other descriptor but
its ends of the wire (and, the tests' process, the verdict pipe); sets its CPU, memory,
file-size, process and open-file limits; and, on Linux x86-64 and arm64, installs a seccomp
filter that refuses new processes (threads are allowed), sockets (socketpair is allowed, asyncio
needs it), io_uring, ptrace, signals to other processes, new namespaces and mounts (a user
namespace of its own could mount an unbounded tmpfs), memfd_create and SysV shared memory
(memory outside every size limit). The harness is non-dumpable, and so are the children it
forks: the answer's process cannot read the tests' process's memory or descriptors through
/proc.

So whatever the model's code does (writes a verdict to every descriptor, prints one, exits
early, signals its parent, returns an object that equals everything) the verdict is what the
hidden test's own asserts decided. A test whose answer's process ended first is ``crashed`` with
how it ended; one whose wire broke otherwise is ``failed``. The wall-clock deadline (one per
test) covers both processes; each has the CPU and memory limits of its own.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import platform
import resource
import select
import signal
import struct
import sys
import time
import types
from typing import Any

_ENDING_S = 0.5  # how long an answer that closed its end of the wire may take to exit
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


def _one_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".replace("\n", " ")[:_REASON_CHARS]


def _keep_only(fds: set[int]) -> None:
    """Close every descriptor above 2 but ``fds``."""
    low = 3
    for fd in sorted(fds):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def _confine(job: dict[str, Any], output_w: int, keep: set[int]) -> None:
    """What a forked child does before any code of the test's runs: see the module docstring."""
    os.setpgid(0, 0)
    os.dup2(output_w, 1)
    os.dup2(output_w, 2)
    _keep_only(keep)
    limits = job["limits"]
    _limit(resource.RLIMIT_CPU, limits["cpu_s"], limits["cpu_s"] + 1)
    _limit(resource.RLIMIT_AS, limits["memory_bytes"])
    _limit(resource.RLIMIT_NPROC, limits["max_processes"])
    _limit(resource.RLIMIT_NOFILE, limits["max_open_files"])
    if job["seccomp"] and not install_seccomp():
        raise OSError("seccomp filter refused")


def _answer_child(job: dict[str, Any], bridge: Any, wire: tuple[int, int], output_w: int) -> None:
    """The answer's process: runs the model's program and serves calls; never returns."""
    try:
        _confine(job, output_w, set(wire))
        bridge.serve_answer(job["solution"], *wire)
    finally:
        os._exit(0)


def _tests_child(
    job: dict[str, Any],
    name: str,
    bridge: Any,
    wire: tuple[int, int],
    verdict_w: int,
    output_w: int,
) -> None:
    """The tests' process: runs the hidden test and writes its verdict; never returns."""
    try:
        _confine(job, output_w, {*wire, verdict_w})
        verdict = bridge.run_test(job, name, *wire)
    except BaseException as error:
        verdict = {"outcome": "failed", "reason": "harness: " + _one_line(error)}
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


def _ended_alone(pid: int) -> int | None:
    """The status of a child that ended without us, waiting briefly for one that is ending."""
    deadline = time.monotonic() + _ENDING_S
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done or time.monotonic() > deadline:
            return status if done else None
        time.sleep(0.01)


def _end(pid: int) -> int:
    for target in (-pid, pid):  # its group, then itself (in case it left the group)
        with contextlib.suppress(ProcessLookupError):
            os.kill(target, signal.SIGKILL)
    return os.waitpid(pid, 0)[1]


def run_one(job: dict[str, Any], bridge: Any, name: str) -> dict[str, str]:
    to_answer_r, to_answer_w = os.pipe()
    to_tests_r, to_tests_w = os.pipe()
    verdict_r, verdict_w = os.pipe()
    output_r, output_w = os.pipe()
    answer = os.fork()
    if answer == 0:
        _answer_child(job, bridge, (to_answer_r, to_tests_w), output_w)
    tests = os.fork()
    if tests == 0:
        _tests_child(job, name, bridge, (to_tests_r, to_answer_w), verdict_w, output_w)
    for fd in (to_answer_r, to_answer_w, to_tests_r, to_tests_w, verdict_w, output_w):
        os.close(fd)
    deadline = time.monotonic() + job["limits"]["test_timeout_s"]
    verdict, open_fds = b"", {verdict_r, output_r}
    while verdict_r in open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select(list(open_fds), [], [], left)
        for fd in ready:
            data = os.read(fd, 65536)  # the output is drained, so a chatty test never blocks
            if not data:
                open_fds.discard(fd)
            elif fd == verdict_r:
                verdict += data[: 65536 - len(verdict)]
    timed_out = verdict_r in open_fds
    tests_status = _end(tests)
    answer_status = _ended_alone(answer) if not timed_out else None
    if answer_status is None:
        _end(answer)
    os.close(verdict_r)
    os.close(output_r)
    if timed_out and not verdict:
        seconds = job["limits"]["test_timeout_s"]
        return {"outcome": "timeout", "reason": f"no result within {seconds:g} s"}
    try:
        result = json.loads(verdict)
        outcome, reason = result["outcome"], str(result.get("reason", ""))
    except (ValueError, KeyError, TypeError):
        return {"outcome": "crashed", "reason": "tests: " + _ended(tests_status)}
    if result.get("lost") == bridge.ENDED and answer_status is not None:
        return {"outcome": "crashed", "reason": _ended(answer_status)}
    if outcome == "failed" and result.get("lost"):
        return {"outcome": "failed", "reason": "answer: " + reason}
    return {"outcome": "passed" if outcome == "passed" else "failed", "reason": reason}


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
            print(json.dumps({"harness": "refused", "reason": _one_line(error)}), flush=True)
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
    bridge = types.ModuleType("sandbox_bridge")  # trusted: our text, run once before any fork
    sys.modules[bridge.__name__] = bridge
    exec(compile(job["bridge"], "sandbox_bridge.py", "exec"), bridge.__dict__)
    for name in job["names"]:
        print(json.dumps({"test": name, **run_one(job, bridge, name)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

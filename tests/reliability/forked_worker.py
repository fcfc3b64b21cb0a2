"""Run workers forked from a process that has already imported them, so many kills stay cheap.

Twenty SIGKILLs of twenty freshly started workers would spend most of their time importing
polars and aiohttp. ``WorkerForker`` starts ``python -m tests.reliability.forked_worker`` once;
it imports the worker, then forks one real worker (``nvfp4_tui.bench.worker.main``) per request.
Each request travels over a Unix socket with the write end of a pipe (SCM_RIGHTS) that becomes
the worker's event stream; the reply is the worker's pid, which the test kills as it likes.
Workers are reaped only when the forker closes (it kills any still running first), so a pid
the test holds can never be reused by another process in the meantime.

The forker has imported polars, whose import starts two jemalloc threads and an idle cleaner;
jemalloc's fork handlers keep its locks consistent, and the children fork before any polars work.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys

from nvfp4_tui.bench import worker

MESSAGE_MAX_BYTES = 1 << 16


def _child(commands: socket.socket, spec_json: str, events_fd: int) -> None:
    commands.close()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(events_fd, 1)
    os.dup2(devnull, 2)
    code = 1
    try:
        code = worker.main([spec_json])
    finally:
        os._exit(code)  # never return into the forking loop


def serve(commands: socket.socket) -> None:
    """Fork a worker per request until the socket closes; then end and reap every one."""
    children: list[int] = []
    try:
        while True:
            message, fds, _flags, _address = socket.recv_fds(commands, MESSAGE_MAX_BYTES, 1)
            if not message:
                return
            pid = os.fork()
            if pid == 0:
                _child(commands, message.decode(), fds[0])
            children.append(pid)
            os.close(fds[0])
            commands.send(str(pid).encode())
    finally:
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # a zombie ignores it; a live one is ours to end
            os.waitpid(pid, 0)


class WorkerForker:
    """The forking process; ``start(spec_json)`` returns (pid, read end of its event pipe)."""

    def __init__(self) -> None:
        self._commands, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.forked_worker", str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
        )
        theirs.close()

    def start(self, spec_json: str) -> tuple[int, int]:
        read_fd, write_fd = os.pipe()
        try:
            socket.send_fds(self._commands, [spec_json.encode()], [write_fd])
        finally:
            os.close(write_fd)
        return int(self._commands.recv(64)), read_fd

    def close(self) -> None:
        self._commands.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))

"""The simulated fleet in a child process, so its token clock never shares a GIL with the UI.

``SimProcess`` runs ``python -m nvfp4_tui.sim PROFILE --json`` and waits, bounded, for its
ready line. The child watches its stdin and stops when it closes, so a parent that dies
without calling ``stop`` leaves no orphan server behind.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO

DEFAULT_READY_TIMEOUT_S = 20.0
DEFAULT_STOP_TIMEOUT_S = 5.0


class SimProcessError(RuntimeError):
    """The simulator process did not come up; the message carries its own words."""


class SimProcess:
    """A running ``python -m nvfp4_tui.sim``; started on construction, stopped by ``stop``."""

    def __init__(
        self,
        profile_path: Path | str,
        *,
        time_scale: float = 1.0,
        port_base: int = 0,
        ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S,
        python: str = sys.executable,
    ) -> None:
        self.urls: dict[str, str] = {}
        self.down: set[str] = set()
        # Kept until stop(): the child may write to it for as long as it runs.
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        command = [
            python,
            "-m",
            "nvfp4_tui.sim",
            str(profile_path),
            "--json",
            "--stop-on-eof",
            "--time-scale",
            repr(float(time_scale)),
            "--port-base",
            str(port_base),
        ]
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,  # terminal Ctrl-C goes to the parent, which stops us
        )
        try:
            self._wait_ready(ready_timeout_s)
        except BaseException:
            self.stop()
            raise

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.poll()

    def _wait_ready(self, timeout_s: float) -> None:
        assert self._process.stdout is not None
        stdout = self._process.stdout
        deadline = time.monotonic() + timeout_s
        buffer = b""
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SimProcessError(f"simulator not ready after {timeout_s:g} s")
                if not selector.select(left):
                    continue
                data = os.read(stdout.fileno(), 65536)
                if not data:
                    raise SimProcessError(self._failure())
                buffer += data
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if self._take(line):
                        return

    def _take(self, line: bytes) -> bool:
        """Record one ready-protocol line; True at ``{"ready": true}``."""
        try:
            record = json.loads(line)
        except ValueError:
            raise SimProcessError(f"simulator printed {line[:200]!r}, expected JSON") from None
        if record.get("ready") is True:
            return True
        self.urls[record["id"]] = record["url"]
        if record.get("down"):
            self.down.add(record["id"])
        return False

    def _failure(self) -> str:
        code = self._process.wait(timeout=DEFAULT_STOP_TIMEOUT_S)
        self._stderr.seek(0)
        words = self._stderr.read().decode(errors="replace").strip()
        last = words.splitlines()[-1] if words else "no message"
        return f"simulator exited with code {code} before it was ready: {last}"

    def stop(self, timeout_s: float = DEFAULT_STOP_TIMEOUT_S) -> int:
        """SIGTERM, wait up to ``timeout_s``, then SIGKILL; returns the exit code."""
        process = self._process
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()
        return process.returncode

    def __enter__(self) -> SimProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

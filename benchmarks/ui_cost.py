"""UI cost: CPU of the Textual UI process alone, under a live demo load and idle.

``nvfp4-tui demo`` runs under a pseudo-terminal (160 x 48) exactly as a person starts it: the UI
process starts the simulator and the run's worker as child processes. Each process's CPU time is
read from /proc/PID/stat over a window, so the UI's share is measured apart from the worker (the
client) and the simulator. Two sessions: the demo fleet at concurrency 4 (7 endpoints x 4 streams),
and a short run that finishes, leaving the UI open with nothing arriving (idle). The tokens that
arrived during the load window are counted from the snapshot the run wrote.

Usage: ``python benchmarks/ui_cost.py [--quick]``.
"""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness
import polars as pl
from harness import Target, fmt

from nvfp4_tui.store.reader import open_snapshot

NAME = "ui_cost"
COLUMNS, ROWS = 160, 48
TARGET_LOAD_PCT = 10.0
TARGET_IDLE_PCT = 2.0
START_TIMEOUT_S = 60.0
QUIT_TIMEOUT_S = 30.0
POLL_S = 0.2
SIM_MODULE = "nvfp4_tui.sim"
WORKER_MODULE = "nvfp4_tui.bench.worker"


@dataclass(frozen=True)
class Settings:
    load_concurrency: int
    warmup_s: float  # after the worker starts, before the load window opens
    load_window_s: float
    idle_window_s: float
    idle_run_timeout_s: float  # the short run must finish within this
    idle_time_scale: float  # the short run's simulator clock; what follows it is the same
    sample_s: float


QUICK = Settings(
    load_concurrency=4,
    warmup_s=6.0,
    load_window_s=15.0,
    idle_window_s=8.0,
    idle_run_timeout_s=60.0,
    idle_time_scale=10.0,
    sample_s=1.0,
)
FULL = Settings(
    load_concurrency=4,
    warmup_s=10.0,
    load_window_s=30.0,
    idle_window_s=30.0,
    idle_run_timeout_s=120.0,
    idle_time_scale=10.0,
    sample_s=1.0,
)


def _command(args: list[str]) -> list[str]:
    script = Path(sys.executable).with_name("nvfp4-tui")
    if script.exists():
        return [str(script), *args]
    return [
        sys.executable,
        "-c",
        "import sys; from nvfp4_tui.cli import main; sys.exit(main())",
        *args,
    ]


def _make_controlling_tty() -> None:
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class TerminalSession:
    """One command on a fresh pseudo-terminal; its output is read and dropped as it comes."""

    def __init__(self, args: list[str], cwd: Path, markers: tuple[bytes, ...] = ()) -> None:
        # When each marker first reached the terminal, in seconds after the command started.
        self.first_seen: dict[bytes, float] = {}
        self._markers = markers
        self.started = time.perf_counter()
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(ROWS)}
        env.pop("NO_COLOR", None)
        self.process = subprocess.Popen(
            _command(args),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            preexec_fn=_make_controlling_tty,  # the child must own its terminal
            close_fds=True,
        )
        os.close(slave)
        self.master = master
        self.output_bytes = 0
        self._tail = b""
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # the terminal closed: the app exited
                return
            if not data:
                return
            self.output_bytes += len(data)
            for marker in self._markers:
                if marker not in self.first_seen and marker in self._tail[-len(marker) :] + data:
                    self.first_seen[marker] = time.perf_counter() - self.started
            self._tail = (self._tail + data)[-4096:]

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def last_output(self) -> str:
        return self._tail.decode(errors="replace")

    def children(self) -> dict[str, int]:
        """The simulator and worker processes the UI started, by role."""
        found: dict[str, int] = {}
        for pid in harness.child_pids(self.pid):
            line = harness.command_line(pid)
            if SIM_MODULE + " " in line or line.endswith(SIM_MODULE):
                found["sim"] = pid
            elif WORKER_MODULE in line:
                found["worker"] = pid
        return found

    def wait_for(self, roles: set[str], timeout_s: float) -> dict[str, int]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                screen = self.last_output()[-400:]
                raise RuntimeError(f"the UI exited early (code {code}): {screen!r}")
            found = self.children()
            if roles <= set(found):
                return found
            time.sleep(POLL_S)
        raise RuntimeError(f"no {sorted(roles)} child of the UI after {timeout_s:g} s")

    def quit(self) -> int:
        """``q`` (and ``y`` if a run is still going), then a signal if it will not go."""
        deadline = time.monotonic() + QUIT_TIMEOUT_S
        self.type(b"q")
        time.sleep(0.5)
        if self.process.poll() is None:
            self.type(b"y")
        while self.process.poll() is None and time.monotonic() < deadline:
            time.sleep(POLL_S)
        if self.process.poll() is None:
            os.killpg(self.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.pid, signal.SIGKILL)
                self.process.wait()
        self._reader.join(timeout=2)
        os.close(self.master)
        return self.process.returncode


def _sample_cpu(pids: dict[str, int], window_s: float, sample_s: float) -> dict[str, Any]:
    """CPU % of a core per process over the window, and the UI's per-second series."""
    start = {role: harness.cpu_seconds(pid) for role, pid in pids.items()}
    started = time.perf_counter()
    series: list[float] = []
    last_ui, last_t = start["ui"], started
    while (now := time.perf_counter()) - started < window_s:
        time.sleep(min(sample_s, window_s - (now - started)))
        ui, t = harness.cpu_seconds(pids["ui"]), time.perf_counter()
        series.append(100 * (ui - last_ui) / (t - last_t))
        last_ui, last_t = ui, t
    wall_s = time.perf_counter() - started
    used = {role: harness.cpu_seconds(pid) - start[role] for role, pid in pids.items()}
    return {
        "window_s": wall_s,
        "cpu_pct": {role: 100 * seconds / wall_s for role, seconds in used.items()},
        "ui_cpu_pct_series": series,
        "window_started_unix": time.time() - wall_s,
        "window_ended_unix": time.time(),
    }


def _tokens_in_window(out_root: Path, start_unix: float, end_unix: float) -> dict[str, Any]:
    """Tokens of the requests that finished inside the window, from the run's snapshot."""
    runs = [p for p in out_root.iterdir() if p.is_dir()]
    if len(runs) != 1:
        return {"tokens_per_s": None, "requests": None}
    requests = open_snapshot(runs[0]).requests()
    finished = requests.filter(
        ((pl.col("t") + pl.col("queue_s") + pl.col("e2e_s")) >= start_unix)
        & ((pl.col("t") + pl.col("queue_s") + pl.col("e2e_s")) < end_unix)
        & (pl.col("status") != "error")
    )
    tokens = finished.get_column("tokens_out").fill_null(0).sum()
    return {"tokens_per_s": tokens / (end_unix - start_unix), "requests": finished.height}


def _load_session(settings: Settings, workdir: Path) -> dict[str, Any]:
    out_root = workdir / "load"
    session = TerminalSession(
        [
            "demo",
            "--concurrency",
            str(settings.load_concurrency),
            "--duration",
            "3600",
            "--out",
            str(out_root),
        ],
        workdir,
    )
    try:
        pids = session.wait_for({"sim", "worker"}, START_TIMEOUT_S)
        time.sleep(settings.warmup_s)
        pids = {"ui": session.pid, **session.children()}
        if "worker" not in pids:
            raise RuntimeError("the run's worker exited during the warm-up")
        sampled = _sample_cpu(pids, settings.load_window_s, settings.sample_s)
    finally:
        code = session.quit()
    tokens = _tokens_in_window(
        out_root, sampled["window_started_unix"], sampled["window_ended_unix"]
    )
    return {**sampled, **tokens, "ui_exit_code": code, "terminal_bytes": session.output_bytes}


def _idle_session(settings: Settings, workdir: Path) -> dict[str, Any]:
    """A run small enough to finish, then the UI with nothing arriving."""
    session = TerminalSession(
        [
            "demo",
            "--suites",
            "tool_call",
            "--concurrency",
            "16",
            "--requests",
            "1",
            "--time-scale",
            repr(settings.idle_time_scale),
            "--out",
            str(workdir / "idle"),
        ],
        workdir,
    )
    try:
        session.wait_for({"worker"}, START_TIMEOUT_S)
        deadline = time.monotonic() + settings.idle_run_timeout_s
        while "worker" in session.children():
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the short run did not finish in {settings.idle_run_timeout_s:g} s"
                )
            time.sleep(POLL_S)
        time.sleep(1.0)  # the last batch of events drawn
        pids = {"ui": session.pid, **session.children()}
        sampled = _sample_cpu(pids, settings.idle_window_s, settings.sample_s)
    finally:
        code = session.quit()
    return {**sampled, "ui_exit_code": code}


def run(settings: Settings) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="nvfp4-ui-cost-") as tmp:
        workdir = Path(tmp)
        load = _load_session(settings, workdir)
        idle = _idle_session(settings, workdir)
    return {"terminal": f"{COLUMNS}x{ROWS}", "load": load, "idle": idle}


def targets(numbers: dict[str, Any]) -> list[Target]:
    load = numbers["load"]["cpu_pct"]["ui"]
    idle = numbers["idle"]["cpu_pct"]["ui"]
    return [
        Target(
            "UI under load",
            f"< {TARGET_LOAD_PCT:g}% of a core at c=4",
            f"{load:.1f}%",
            load < TARGET_LOAD_PCT,
        ),
        Target(
            "UI idle", f"< {TARGET_IDLE_PCT:g}% of a core", f"{idle:.1f}%", idle < TARGET_IDLE_PCT
        ),
    ]


def report(numbers: dict[str, Any]) -> list[str]:
    rows = []
    for name, key in (("demo c=4 (7 x 4 streams)", "load"), ("idle (run finished)", "idle")):
        part = numbers[key]
        cpu = part["cpu_pct"]
        series = part["ui_cpu_pct_series"]
        rows.append(
            [
                name,
                f"{part['window_s']:.0f}",
                f"{cpu['ui']:.1f}",
                f"{max(series):.1f}" if series else "—",
                fmt(cpu.get("worker"), ".1f"),
                fmt(cpu.get("sim"), ".1f"),
                fmt(part.get("tokens_per_s"), ",.0f"),
            ]
        )
    return [
        harness.table(
            f"UI cost: CPU % of one core per process ({numbers['terminal']} pseudo-terminal)",
            ["session", "window s", "UI %", "UI max 1 s %", "worker %", "sim %", "tok/s arrived"],
            rows,
        )
    ]


NOTES = [
    "CPU % is user + system time of each process alone (/proc/PID/stat) over the window, as a "
    "share of one core; the UI writes to a pseudo-terminal whose output this script reads and "
    "drops, so no terminal emulator's cost is included.",
    "tok/s arrived counts the tokens of requests that finished inside the window, from the "
    "snapshot the run wrote (the UI sees them as RequestFinished and TokenProgress events).",
    "Idle is the UI left open after a short run finished: its worker has exited, nothing arrives.",
]


def main(argv: list[str] | None = None) -> int:
    args = harness.parser(__doc__.splitlines()[0]).parse_args(argv)
    settings = QUICK if args.quick else FULL
    return harness.measure_and_publish(
        NAME,
        args,
        settings,
        run=run,
        targets=targets,
        report=report,
        notes=NOTES,
    )


if __name__ == "__main__":
    sys.exit(main())

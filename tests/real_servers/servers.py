"""Real servers for the real-server stage: how each is started, waited for and stopped.

Each runs from a venv of its own (``.ci/real_servers`` installs them; the ``NVFP4_REAL_*_PYTHON``
variables name their interpreters) on 127.0.0.1, on a port the OS picked, with no hub access.
A server is ready when its health path answers 200, and is stopped by its pid (SIGTERM, then
SIGKILL of its process group: vLLM's engine runs in child processes).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

START_TIMEOUT_S = 900.0  # vLLM on 2 busy cores: 100-300 s of imports; several start at once
# A test's limit, its server's start included (pytest-timeout counts fixtures in).
TEST_TIMEOUT_S = START_TIMEOUT_S + 600.0
POLL_S = 1.0
STOP_WAIT_S = 30.0
LOG_TAIL_CHARS = 3000
SERVED_NAME = "tiny"
MAX_MODEL_LEN = 2048
PYTHON_VARIABLES = {
    "vllm": "NVFP4_REAL_VLLM_PYTHON",
    "transformers": "NVFP4_REAL_TRANSFORMERS_PYTHON",
}
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}


VENVS = Path(__file__).resolve().parents[2] / ".ci" / "real-servers"  # where the stage puts them


def server_python(kind: str) -> Path | None:
    """The interpreter of the ``kind`` server's venv: the one its variable names, else the
    stage's, when it is there."""
    value = os.environ.get(PYTHON_VARIABLES[kind])
    python = Path(value) if value else VENVS / kind / "bin" / "python"
    return python if python.exists() else None


def free_port() -> int:
    """A port the OS picks on 127.0.0.1 (free now; the server binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class ServerSpec:
    """How to start one server: its command after the interpreter, its environment, its health."""

    name: str
    python: Path
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    health_path: str = "/health"


def vllm_spec(
    python: Path, model: Path, *, tool_parser: bool, kv_blocks: int | None = None
) -> ServerSpec:
    """vLLM's OpenAI server: its console script fails in the CPU build (it looks up a `vllm`
    distribution), so the module; eager mode skips torch.compile's minutes of warm-up.
    ``kv_blocks`` sets its KV cache to that many blocks (of 128 tokens in the CPU build)."""
    args = [
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model),
        "--served-model-name",
        SERVED_NAME,
        "--max-model-len",
        str(MAX_MODEL_LEN),
        "--dtype",
        "bfloat16",
        "--enforce-eager",
    ]
    if tool_parser:
        args += ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
    if kv_blocks is not None:
        args += ["--num-gpu-blocks-override", str(kv_blocks)]
    env = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}
    return ServerSpec("vllm", python, tuple(args), env)


def transformers_spec(python: Path, model: Path) -> ServerSpec:
    """`transformers serve`, which loads the model named in each request: the model dir's path
    is then the model name (see ``model_name``)."""
    args = ["-m", "transformers.cli.transformers", "serve", str(model)]
    return ServerSpec("transformers", python, tuple(args), health_path="/health")


@dataclass
class RunningServer:
    spec: ServerSpec
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    started_at: float
    ready_s: float | None = None  # seconds from start to healthy

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return text[-LOG_TAIL_CHARS:]

    def alive(self) -> bool:
        return self.process.poll() is None

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + self.spec.health_path, timeout=5) as reply:
                return bool(reply.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Until its health path answers 200; fails with its log's tail if it exits or hangs."""
        deadline = self.started_at + timeout_s
        while time.monotonic() < deadline:
            if not self.alive():
                raise AssertionError(
                    f"{self.spec.name} exited ({self.process.returncode}) before it was ready:"
                    f"\n{self.log_tail()}"
                )
            if self.healthy():
                if self.ready_s is None:
                    self.ready_s = time.monotonic() - self.started_at
                return
            time.sleep(POLL_S)
        raise AssertionError(
            f"{self.spec.name} not healthy within {timeout_s:g} s:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        """SIGTERM to its pid, then SIGKILL to its process group (children included)."""
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(STOP_WAIT_S)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)  # its own group: start_new_session below
        self.process.wait(STOP_WAIT_S)


def start(
    spec: ServerSpec, log_dir: Path, port: int | None = None, cpus: set[int] | None = None
) -> RunningServer:
    """Start ``spec`` on 127.0.0.1 (port: the OS's pick) with its output in ``log_dir``, held to
    ``cpus`` when given (its children inherit them)."""
    port = port or free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{spec.name}-{port}.log"
    env = {**os.environ, **OFFLINE, **spec.env}
    env.pop("VIRTUAL_ENV", None)
    command = [str(spec.python), *spec.args, "--host", "127.0.0.1", "--port", str(port)]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            preexec_fn=None if cpus is None else lambda: os.sched_setaffinity(0, cpus),
        )
    return RunningServer(spec, port, process, log_path, time.monotonic())

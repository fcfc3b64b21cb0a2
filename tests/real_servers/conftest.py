"""The real servers of the stage, started once per session, all at once (their start-up is
minutes of imports on 2 cores, so they overlap), each waited for by the tests that use it.

Marked `real` (left out of the default run): `bash .ci/real_servers` installs the servers into
venvs under `.ci/` and runs `pytest -m real` with their interpreters named.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.real_servers import servers, tiny_model

BENCHMARKS_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCHMARKS_DIR) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS_DIR))  # real_server's pairing of rows with the wire

MODEL_BUILD_TIMEOUT_S = 600.0
SERVERS = ("vllm", "vllm_fragile", "vllm_small_kv", "transformers_server")
# Blocks of 128 tokens (the CPU build's block size; 16 on a GPU): the model's whole context
# (2048) and a little more, so two prompts of 1K tokens run at once and a third waits (vLLM
# refuses a cache under one context).
SMALL_KV_BLOCKS = 20


def _python(kind: str) -> Path:
    python = servers.server_python(kind)
    if python is None or not python.exists():
        variable = servers.PYTHON_VARIABLES[kind]
        pytest.fail(f"{variable} names no interpreter: run `bash .ci/real_servers`")
    return python


@pytest.fixture(scope="session")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny models, built by vLLM's venv (it has torch, transformers and tokenizers)."""
    root = tmp_path_factory.mktemp("models")
    builder = Path(tiny_model.__file__)
    subprocess.run(
        [str(_python("vllm")), str(builder), str(root)],
        check=True,
        timeout=MODEL_BUILD_TIMEOUT_S,
        env={**servers.OFFLINE, "PATH": "/usr/bin:/bin"},
    )
    return root


@pytest.fixture(scope="session")
def fleet(
    request: pytest.FixtureRequest, models: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, servers.RunningServer]]:
    """Every server some collected test uses, started now, stopped at the session's end."""
    wanted = {name for item in request.session.items for name in item.fixturenames} & set(SERVERS)
    logs = tmp_path_factory.mktemp("server-logs")
    head64 = tiny_model.model_dir(models, 64)
    specs = {
        "vllm": lambda: servers.vllm_spec(_python("vllm"), head64, tool_parser=True),
        "vllm_fragile": lambda: servers.vllm_spec(
            _python("vllm"), tiny_model.model_dir(models, 16), tool_parser=False
        ),
        "vllm_small_kv": lambda: servers.vllm_spec(
            _python("vllm"), head64, tool_parser=False, kv_blocks=SMALL_KV_BLOCKS
        ),
        "transformers_server": lambda: servers.transformers_spec(_python("transformers"), head64),
    }
    started = {name: servers.start(specs[name](), logs) for name in SERVERS if name in wanted}
    try:
        yield started
    finally:
        for server in started.values():
            server.stop()


def _ready(fleet: dict[str, servers.RunningServer], name: str) -> servers.RunningServer:
    server = fleet[name]
    server.wait_ready()
    return server


@pytest.fixture(scope="module")
def vllm(fleet: dict[str, servers.RunningServer]) -> servers.RunningServer:
    """vLLM with the head-size-64 model and the tool parser: the server that works."""
    return _ready(fleet, "vllm")


@pytest.fixture(scope="module")
def vllm_fragile(fleet: dict[str, servers.RunningServer]) -> servers.RunningServer:
    """vLLM with the head-size-16 model and no tool parser: refuses tool choice, then dies on
    its first generation."""
    return _ready(fleet, "vllm_fragile")


@pytest.fixture(scope="module")
def vllm_small_kv(fleet: dict[str, servers.RunningServer]) -> servers.RunningServer:
    """vLLM with the head-size-64 model and a KV cache of ``SMALL_KV_BLOCKS`` blocks."""
    return _ready(fleet, "vllm_small_kv")


@pytest.fixture(scope="module")
def transformers_server(fleet: dict[str, servers.RunningServer]) -> servers.RunningServer:
    return _ready(fleet, "transformers_server")

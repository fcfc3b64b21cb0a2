"""The fleet as a separate process: SimProcess, and ``python -m nvfp4_tui.sim`` itself."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.sim.process import SimProcess, SimProcessError

ROOT = Path(__file__).resolve().parents[2]
DEMO = DEMO_PROFILE
DEMO_IDS = [
    "moe_qwen36",
    "moe_redhat",
    "moe_huihui",
    "dense_qwen35",
    "dense_qwopus",
    "dense_gemma31",
    "moe_jiunsong",
]
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url: str) -> bytes:
    with _NO_PROXY.open(url, timeout=5) as reply:
        return reply.read()


def _free_port_run(length: int) -> int:
    """A port p with p .. p+length-1 all free right now (bounded tries)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + length > 65535:
            continue
        held = []
        try:
            for port in range(base, base + length):
                s = socket.socket()
                held.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError("no run of free ports found")


def _dechunk(body: bytes) -> bytes:
    """The payload of an HTTP/1.1 chunked body."""
    out = b""
    while True:
        size_line, body = body.split(b"\r\n", 1)
        size = int(size_line, 16)
        if size == 0:
            return out
        out, body = out + body[:size], body[size + 2 :]


def _raw_sse(port: int) -> tuple[bytes, bytes]:
    """A chat completion read straight off a socket, as curl would: (head, payload)."""
    body = json.dumps(
        {
            "model": "current",
            "messages": [{"role": "user", "content": "Write a short essay on rivers."}],
            "max_tokens": 20,
            "stream": True,
        }
    ).encode()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, _dechunk(rest) if b"chunked" in head.lower() else rest


def test_sim_process_starts_serves_and_stops() -> None:
    with SimProcess(DEMO, time_scale=20.0) as sim:
        assert list(sim.urls) == DEMO_IDS and not sim.down
        assert len(set(sim.urls.values())) == 7
        models = json.loads(_get(sim.urls["moe_qwen36"] + "/v1/models"))
        assert models["data"][0]["id"] == "current"
        gpu = json.loads(_get(sim.urls["dense_gemma31"] + "/sim/gpu"))
        assert gpu["gpu"] == 5 and gpu["vram_used_mib"] == 94210
        assert sim.returncode is None
    assert sim.returncode == 0


def test_sim_process_reports_why_it_did_not_start(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[run]\nsuites = []\n")
    with pytest.raises(SimProcessError, match="exited with code 2"):
        SimProcess(bad)


def test_module_serves_the_demo_on_consecutive_ports_and_stops_on_sigterm() -> None:
    base = _free_port_run(7)
    child = subprocess.Popen(
        [sys.executable, "-m", "nvfp4_tui.sim", str(DEMO), "--port-base", str(base)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert child.stdout is not None
        lines = [child.stdout.readline() for _ in range(7)]
        assert [line.split()[0] for line in lines] == DEMO_IDS
        assert [line.split()[-1] for line in lines] == [
            f"http://127.0.0.1:{base + i}" for i in range(7)
        ]
        assert "Qwen3.6-35B-A3B" in lines[0]
        head, payload = _raw_sse(base + 3)
        assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
        assert payload.startswith(b"data: {") and payload.endswith(b"data: [DONE]\n\n")
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=10) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_json_mode_and_stop_when_stdin_closes() -> None:
    child = subprocess.Popen(
        [
            sys.executable,
            *("-m", "nvfp4_tui.sim", str(DEMO)),
            "--port-base",
            "0",
            "--json",
            "--stop-on-eof",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        records = [json.loads(child.stdout.readline()) for _ in range(8)]
        assert [r["id"] for r in records[:7]] == DEMO_IDS
        assert records[7] == {"ready": True}
        assert _get(records[0]["url"] + "/health") == b""
        started = time.monotonic()
        child.stdin.close()  # what a parent's death looks like from here
        assert child.wait(timeout=10) == 0 and time.monotonic() - started < 10
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()

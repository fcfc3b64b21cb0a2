"""`serve`'s sessions, against its real web server in this process: each served command is a
small script that speaks textual-serve's packet protocol, so a test sees what a browser tab's
process was told and whether it still runs."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
from aiohttp import web

from nvfp4_tui.launch.serve import MAX_COLUMNS, MAX_ROWS, allowed_hosts
from nvfp4_tui.launch.serve_server import GuardedServer

WAIT_S = 20.0  # bounds every wait on a loaded 2-core box

APP = r"""
import json, os, sys, time
from pathlib import Path

mode, pids = sys.argv[1], Path(sys.argv[2])
with pids.open("a") as f:
    f.write(f"{os.getpid()}\n")
out = sys.stdout.buffer
out.write(b"__GANGLION__\n")
out.flush()

def packet(kind, payload):
    out.write(kind + len(payload).to_bytes(4, "big") + payload)
    out.flush()

packet(b"D", json.dumps({"columns": os.environ["COLUMNS"], "rows": os.environ["ROWS"]}).encode())
deadline = time.monotonic() + 60
if mode == "echo":  # every meta packet sent back as data, until quit
    stdin = sys.stdin.buffer
    while time.monotonic() < deadline and (kind := stdin.read(1)):
        payload = stdin.read(int.from_bytes(stdin.read(4), "big"))
        if kind == b"M" and json.loads(payload).get("type") == "quit":
            break
        packet(b"D", payload)
else:  # frames as fast as they go, deaf to quit: blocked on its pipe once nobody reads
    frame = b"x" * (1 << 20)
    while time.monotonic() < deadline:
        packet(b"D", frame)
"""


@asynccontextmanager
async def served(tmp_path: Path, mode: str, max_sessions: int = 2) -> AsyncIterator[GuardedServer]:
    script = tmp_path / "app.py"
    script.write_text(APP)
    command = f"{sys.executable} {script} {mode} {tmp_path / 'pids'}"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = GuardedServer(
        command,
        hosts=allowed_hosts("127.0.0.1"),
        max_sessions=max_sessions,
        host="127.0.0.1",
        port=port,
    )
    runner = web.AppRunner(await server._make_app())
    await runner.setup()
    await web.SockSite(runner, listener).start()
    try:
        yield server
    finally:
        await runner.cleanup()


def own_origin(server: GuardedServer) -> str:
    return f"http://127.0.0.1:{server.port}"


def pids(tmp_path: Path) -> list[int]:
    path = tmp_path / "pids"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def test_no_size_a_browser_sends_grows_past_a_screen(tmp_path: Path) -> None:
    async with served(tmp_path, "echo") as server, aiohttp.ClientSession() as http:
        url = f"{own_origin(server)}/ws?width=20000&height=20000"
        async with http.ws_connect(url, origin=own_origin(server)) as ws:
            started = json.loads((await ws.receive(timeout=WAIT_S)).data)
            assert started == {"columns": str(MAX_COLUMNS), "rows": str(MAX_ROWS)}
            await ws.send_json(["resize", {"width": 20000, "height": 20000}])
            resized = json.loads((await ws.receive(timeout=WAIT_S)).data)
            assert (resized["width"], resized["height"]) == (MAX_COLUMNS, MAX_ROWS)
            await ws.send_json(["resize", {"width": -5, "height": "lots"}])
            resized = json.loads((await ws.receive(timeout=WAIT_S)).data)
            assert (resized["width"], resized["height"]) == (1, 24)


async def test_a_focus_or_blur_without_data_keeps_the_session(tmp_path: Path) -> None:
    """A browser's focus and blur messages are the kind alone; the session takes them and the
    keys after them (a click on the page came before every key, and once ended the session)."""
    async with served(tmp_path, "echo") as server, aiohttp.ClientSession() as http:
        url = f"{own_origin(server)}/ws?width=80&height=24"
        async with http.ws_connect(url, origin=own_origin(server)) as ws:
            await ws.receive(timeout=WAIT_S)  # the start packet
            for kind in ("focus", "blur"):
                await ws.send_json([kind])
                told = json.loads((await ws.receive(timeout=WAIT_S)).data)
                assert told["type"] == kind
            await ws.send_json(["resize", {"width": 90, "height": 30}])
            resized = json.loads((await ws.receive(timeout=WAIT_S)).data)
            assert (resized["width"], resized["height"]) == (90, 30)


async def _open_and_drop(server: GuardedServer) -> None:
    """A browser that opens a session, takes the start of a frame and is gone: no close frame,
    the connection cut."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET /ws?width=80&height=24 HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Origin: {own_origin(server)}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT_S)
    assert head.startswith(b"HTTP/1.1 101")
    await asyncio.wait_for(reader.readexactly(1 << 16), WAIT_S)  # a frame is on its way
    writer.transport.abort()


async def test_a_session_cut_mid_frame_ends_its_process(tmp_path: Path) -> None:
    async with served(tmp_path, "flood", max_sessions=2) as server:
        for _ in range(5):  # past the cap: each cut session's process must be gone
            await _open_and_drop(server)
            deadline = time.monotonic() + WAIT_S
            while server.sessions or any(alive(pid) for pid in pids(tmp_path)):
                assert time.monotonic() < deadline, "a cut session's process still runs"
                await asyncio.sleep(0.05)
    assert len(pids(tmp_path)) == 5


async def test_the_index_page_is_only_for_this_servers_hosts(tmp_path: Path) -> None:
    async with served(tmp_path, "echo") as server, aiohttp.ClientSession() as http:
        page = f"{own_origin(server)}/"
        async with http.get(page, headers={"Host": f"evil.example:{server.port}"}) as refused:
            assert refused.status == 403
            assert "app.py" not in await refused.text()  # the served command stays unsaid
        async with http.get(page, headers={"Host": f"localhost:{server.port}"}) as own:
            assert own.status == 200
            assert f"ws://localhost:{server.port}/ws" in await own.text()

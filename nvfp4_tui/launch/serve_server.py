"""The web server behind ``nvfp4-tui serve``: textual-serve's, with its sessions guarded.

Imported only when serving (textual-serve is an optional extra). Each browser session starts the
served command in a process of its own; this server makes sure that

- only a page of this server gets a session or the index page (``serve.is_own_page``);
- at most ``max_sessions`` processes exist at once: a session's process is ended when the
  session ends, also when it is blocked writing a frame nobody reads any more (a browser that
  closed mid-frame leaves it waiting on a full pipe, where a polite ``quit`` never reaches it);
- no message makes a process draw a screen larger than a screen can be.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from asyncio.subprocess import Process
from typing import Any

from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server

from nvfp4_tui.launch.serve import clamped_size, is_own_host, is_own_page

QUIT_WAIT_S = 3.0  # a polite quit, then the process group is killed
HEARTBEAT_S = 15.0


class SessionProcess(AppService):
    """One session's process, in a process group of its own so that ending it ends the served
    command itself and not only the shell that started it."""

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        self._process = process = await asyncio.create_subprocess_shell(
            self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def set_terminal_size(self, width: int, height: int) -> None:
        await super().set_terminal_size(*clamped_size(width, height))

    async def end(self) -> None:
        """Ask the process to quit; end its group if it has not within ``QUIT_WAIT_S``."""
        process = self._process
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop(), QUIT_WAIT_S)
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        # asyncio's wait() returns once every pipe is closed: stdin by us, and the output pipes
        # read to their end (a reader that stopped mid-frame left them paused, full).
        if process.stdin is not None:
            process.stdin.close()
        await asyncio.gather(_drained(process.stdout), _drained(process.stderr))
        await process.wait()
        if self._task is not None:  # its reader sees the pipe close
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._task, QUIT_WAIT_S)


class GuardedServer(Server):
    """textual-serve's server, with sessions only for its own pages and at most ``max_sessions``
    of them."""

    def __init__(
        self, command: str, *, hosts: frozenset[str], max_sessions: int, **options: Any
    ) -> None:
        super().__init__(command, **options)
        self.hosts = hosts
        self.max_sessions = max_sessions
        self.sessions = 0
        self.processes: set[SessionProcess] = set()  # the sessions' own, while they run

    async def handle_index(self, request: web.Request) -> Any:
        if not is_own_host(dict(request.headers), self.hosts, self.port):
            raise web.HTTPForbidden(text="not a host of this server\n")
        # The page's websocket goes back to the host the browser named, which for a wildcard
        # bind is not the bound address. The page is built before the next await: no other
        # request's host can come between.
        self.public_url = f"{request.scheme}://{request.host}"
        return await super().handle_index(request)

    async def handle_download(self, request: web.Request) -> web.StreamResponse:
        if not is_own_host(dict(request.headers), self.hosts, self.port):
            raise web.HTTPForbidden(text="not a host of this server\n")
        return await super().handle_download(request)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        if not is_own_page(dict(request.headers), self.hosts, self.port):
            raise web.HTTPForbidden(text="not a page of this server\n")
        if self.sessions >= self.max_sessions:
            raise web.HTTPServiceUnavailable(text=f"{self.max_sessions} sessions already open\n")
        self.sessions += 1
        try:
            return await self._session(request)
        finally:
            self.sessions -= 1

    async def _session(self, request: web.Request) -> web.WebSocketResponse:
        websocket = web.WebSocketResponse(heartbeat=HEARTBEAT_S)
        width, height = clamped_size(
            _number(request.query.get("width"), 80), _number(request.query.get("height"), 24)
        )
        await websocket.prepare(request)

        async def close() -> None:  # the app quit: so does its page
            await websocket.close()

        process = SessionProcess(
            self.command,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=close,
            download_manager=self.download_manager,
            debug=self.debug,
        )
        self.processes.add(process)
        try:
            await process.start(width, height)
            await self._take_messages(websocket, process)
        finally:
            await process.end()
            self.processes.discard(process)
            await websocket.close()
        return websocket

    @staticmethod
    async def _take_messages(websocket: web.WebSocketResponse, process: SessionProcess) -> None:
        """The browser's keys, sizes, focus and pings, until it goes; a message of any other
        shape ends the session."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                # A focus or blur message is the kind alone, a key or size brings its data.
                kind, *rest = message.json()
                data: Any = rest[0] if rest else None
                if kind == "stdin":
                    await process.send_bytes(str(data).encode("utf-8"))
                elif kind == "resize":
                    await process.set_terminal_size(
                        _number(data.get("width"), 80), _number(data.get("height"), 24)
                    )
                elif kind == "ping":
                    await websocket.send_json(["pong", data])
                elif kind == "blur":
                    await process.blur()
                elif kind == "focus":
                    await process.focus()
            except (ValueError, TypeError, AttributeError):
                return


async def _drained(pipe: asyncio.StreamReader | None) -> None:
    """A dead process's output pipe, read to its end and dropped."""
    while pipe is not None and await pipe.read(1 << 16):
        pass


def _number(value: object, default: int) -> int:
    """A size as the browser sent it (a number, or its text), or ``default``."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except ValueError:
        return default

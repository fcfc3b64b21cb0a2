"""A timestamping TCP proxy on 127.0.0.1 between a client and a server: the wire's own clock.

Each exchange on a connection (a request and the reply that follows it, on a kept-alive
connection one after another) records, in wall-clock seconds: when the request's first bytes
reached the proxy, when the first reply bytes that carry generated text (an SSE event with
content, reasoning or a tool call) left the server, and when its last byte did; and the token
counts of the last usage object the server sent. The client's
TTFT and E2E minus the tap's are what the client adds on its side of the socket.

The tap runs its own event loop in a thread, so a test or a benchmark can drive a client in
another process (``nvfp4-tui run``) through it; it forwards bytes as they come and never holds
more than one read of either direction.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from dataclasses import dataclass, field

READ_BYTES = 64 * 1024
# A delta that carries generated text: non-empty content or reasoning, or a tool call. The role
# chunk's `"content":""` does not match, as it does not count for TTFT.
_GENERATED = re.compile(
    rb'"delta":\s*\{[^{}]*?"(?:content|reasoning_content|reasoning)":\s*"[^"]'
    rb'|"delta":\s*\{[^{}]*?"tool_calls":\s*\['
)
_PROMPT_TOKENS = re.compile(rb'"prompt_tokens":\s*(\d+)')
_COMPLETION = re.compile(rb'"completion_tokens":\s*(\d+)')
GENERATED_LOOKBACK = 512  # bytes of the previous read kept, so a marker cut between reads matches
REQUEST_LINE_BYTES = 256
STOP_WAIT_S = 5.0


@dataclass
class Exchange:
    """One request and its reply as the wire saw them (wall-clock seconds)."""

    request_at: float
    request_line: str  # e.g. "POST /v1/chat/completions HTTP/1.1"
    first_generated_at: float | None = None
    last_byte_at: float | None = None
    reply_bytes: int = 0
    prompt_tokens: int | None = None  # the last usage in the reply, as the server counted
    completion_tokens: int | None = None
    _tail: bytes = field(default=b"", repr=False)

    @property
    def path(self) -> str:
        parts = self.request_line.split()
        return parts[1] if len(parts) > 1 else ""

    @property
    def ttft_s(self) -> float | None:
        """Request in to first generated text out: the server's TTFT as the wire saw it."""
        at = self.first_generated_at
        return None if at is None else at - self.request_at

    @property
    def e2e_s(self) -> float | None:
        at = self.last_byte_at
        return None if at is None else at - self.request_at

    def saw_reply(self, data: bytes, at: float) -> None:
        self.reply_bytes += len(data)
        # A chunked body's end marker can come in a read of its own after the last event; a
        # client that has the last event does not wait for it.
        if data.strip() != b"0":
            self.last_byte_at = at
        window = self._tail + data
        if self.first_generated_at is None and _GENERATED.search(window):
            self.first_generated_at = at
        # The last usage the server sent is its count for the whole reply.
        for pattern, name in (
            (_PROMPT_TOKENS, "prompt_tokens"),
            (_COMPLETION, "completion_tokens"),
        ):
            counts = pattern.findall(window)
            if counts:
                setattr(self, name, int(counts[-1]))
        self._tail = window[-GENERATED_LOOKBACK:]


class WireTap:
    """``with WireTap(port) as tap``: listens on ``tap.port`` and forwards to ``port``."""

    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1") -> None:
        self._upstream = (upstream_host, upstream_port)
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self.port = 0

    def __enter__(self) -> WireTap:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(
            STOP_WAIT_S
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc_info: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(STOP_WAIT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(STOP_WAIT_S)
        self._loop.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def exchanges(self, path: str | None = None) -> list[Exchange]:
        """Every exchange so far (``path``: those whose request went there), by request time."""
        with self._lock:
            seen = list(self._exchanges)
        chosen = [e for e in seen if path is None or e.path == path]
        return sorted(chosen, key=lambda e: e.request_at)

    def clear(self) -> None:
        with self._lock:
            self._exchanges.clear()

    async def _listen(self) -> asyncio.Server:
        return await asyncio.start_server(self._connection, "127.0.0.1", 0)

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _connection(
        self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter
    ) -> None:
        try:
            server_r, server_w = await asyncio.open_connection(*self._upstream)
        except OSError:
            client_w.close()
            return
        # The exchange in progress on this connection: a client write after reply bytes (or the
        # first write) opens the next one.
        current: list[Exchange] = []

        async def upstream() -> None:
            while data := await client_r.read(READ_BYTES):
                at = time.time()
                if not current or current[-1].reply_bytes:
                    line = data[:REQUEST_LINE_BYTES].split(b"\r\n", 1)[0]
                    exchange = Exchange(at, line.decode("latin-1"))
                    current.append(exchange)
                    with self._lock:
                        self._exchanges.append(exchange)
                server_w.write(data)
                await server_w.drain()
            server_w.close()

        async def downstream() -> None:
            while data := await server_r.read(READ_BYTES):
                at = time.time()
                client_w.write(data)
                if current:
                    current[-1].saw_reply(data, at)
                await client_w.drain()
            client_w.close()

        tasks = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
        try:
            await asyncio.gather(*tasks)
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            for task in tasks:
                task.cancel()
            server_w.close()
            client_w.close()

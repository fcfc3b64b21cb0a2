"""When the simulator's schedule starts and how punctually its timers fire.

A request's TTFT counts from when its last bytes reached the server's socket; the simulator's
event loop (``sim.timer``) fires timers without rounding their timeout up to whole milliseconds.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time

from nvfp4_tui.sim.schedule import expected_ttft_s
from nvfp4_tui.sim.timer import new_punctual_loop
from nvfp4_tui.sim.tokens import count_prompt_tokens
from tests.sim.conftest import FleetFactory
from tests.sim.simclient import chat_body, make_endpoint

SCALE = 10.0
SPEC = {"decode_tps": 40.0, "ttft_s": 1.2}  # a first token 120 ms after arrival, real time
PAUSE_S = 0.15  # between the request's head and the rest of its body
WAITS = 20
SHORT_WAIT_S = 0.0002


async def _first_data_at(reader: asyncio.StreamReader) -> float:
    """When the first SSE data line of the reply arrived."""
    while True:
        line = await asyncio.wait_for(reader.readline(), timeout=10)
        assert line, "the server closed the connection before streaming"
        if line.startswith(b"data: "):
            return time.perf_counter()


async def test_ttft_counts_from_when_the_whole_request_has_arrived(
    fleet_of: FleetFactory,
) -> None:
    endpoint = make_endpoint(**SPEC)
    fleet = await fleet_of(endpoint, time_scale=SCALE)
    port = int(fleet.urls["sim0"].rsplit(":", 1)[1])
    body = chat_body(max_tokens=4)
    payload = json.dumps(body).encode()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    ).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        half = len(payload) // 2
        writer.write(head + payload[:half])
        await writer.drain()
        await asyncio.sleep(PAUSE_S)
        writer.write(payload[half:])
        await writer.drain()
        completed_at = time.perf_counter()
        first_at = await _first_data_at(reader)
    finally:
        writer.close()
    expected_s = expected_ttft_s(endpoint.sim, count_prompt_tokens(body["messages"]), 1) / SCALE
    # From the last byte, not from the head (which the handler already had PAUSE_S earlier).
    assert expected_s <= first_at - completed_at < expected_s + PAUSE_S / 2


def test_timers_of_the_punctual_loop_are_not_rounded_to_milliseconds() -> None:
    async def lateness() -> list[float]:
        loop = asyncio.get_running_loop()
        late: list[float] = []
        for _ in range(WAITS):
            due = loop.time() + SHORT_WAIT_S
            fired: asyncio.Future[float] = loop.create_future()
            loop.call_at(due, lambda done=fired: done.set_result(loop.time()))
            late.append(await fired - due)
        return late

    with asyncio.Runner(loop_factory=new_punctual_loop) as runner:
        late = runner.run(lateness())
    assert min(late) >= 0.0  # never early
    # epoll_wait would round every 0.2 ms wait up to at least 1 ms; the best of 20 shows it did not.
    assert min(late) < 0.0005


def test_the_punctual_loop_wakes_for_io_before_its_timeout() -> None:
    async def echo() -> bytes:
        loop = asyncio.get_running_loop()
        left, right = socket.socketpair()
        left.setblocking(False)
        right.setblocking(False)
        try:
            loop.call_later(0.01, right.send, b"ping")
            # A timer far away makes the selector wait with a long timeout; data must end it.
            loop.call_later(30.0, lambda: None)
            return await asyncio.wait_for(loop.sock_recv(left, 4), timeout=5.0)
        finally:
            left.close()
            right.close()

    with asyncio.Runner(loop_factory=new_punctual_loop) as runner:
        assert runner.run(echo()) == b"ping"

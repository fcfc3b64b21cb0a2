"""Where the client's clock starts: when the request's bytes go to the socket, not when ``chat`` is
called; building the request and opening the connection are the client's time, not TTFT."""

from __future__ import annotations

import asyncio
import time

from nvfp4_tui.bench.client import ChatRequest, EndpointClient, Timeouts
from tests.bench.scripted_server import DONE, chunk, play, serve_client, usage

HELLO = ChatRequest(messages=({"role": "user", "content": "hi"},), max_tokens=8)
FIRST_TOKEN_S = 0.10
STREAM = [
    (0.0, chunk(role="assistant")),
    (FIRST_TOKEN_S, chunk("Hi")),
    (0.15, chunk(" there", finish="stop", usage=usage(1, 2))),
    (0.15, DONE),
]
BLOCK_S = 0.3  # longer than the whole scripted stream


async def test_time_before_the_request_is_written_is_not_in_ttft_or_e2e() -> None:
    async with serve_client(play(STREAM)) as (_, client):
        # Runs at the client's first suspension, while it opens its connection: the loop is
        # stuck after chat() began and before a byte of the request was written.
        asyncio.get_running_loop().call_soon(time.sleep, BLOCK_S)
        called_at = time.perf_counter()
        measurement = await client.chat(HELLO)
        whole_s = time.perf_counter() - called_at
    assert measurement.status == "ok"
    assert whole_s >= BLOCK_S + FIRST_TOKEN_S  # the block really happened inside chat()
    assert measurement.ttft_s is not None and measurement.e2e_s is not None
    assert FIRST_TOKEN_S <= measurement.ttft_s < FIRST_TOKEN_S + BLOCK_S / 2
    assert measurement.e2e_s < whole_s - BLOCK_S / 2
    # The blocked connection set-up is not lost: it is the request's setup_s.
    assert measurement.setup_s is not None and measurement.setup_s >= BLOCK_S


async def test_each_request_on_a_reused_connection_has_its_own_clock() -> None:
    async with serve_client(play(STREAM)) as (server, client):
        first = await client.chat(HELLO)
        await asyncio.sleep(BLOCK_S)  # idle between requests must not leak into the next one
        second = await client.chat(HELLO)
    assert len(server.log.bodies) == 2
    for measurement in (first, second):
        assert measurement.ttft_s is not None
        assert FIRST_TOKEN_S <= measurement.ttft_s < FIRST_TOKEN_S + BLOCK_S / 2
        assert measurement.setup_s is not None and measurement.setup_s < BLOCK_S / 2


async def test_a_request_that_never_reached_the_socket_is_timed_from_the_call() -> None:
    timeouts = Timeouts(connect_s=2.0, total_s=5.0)
    # Port 1 on loopback: nothing listens, the connection is refused before any write.
    async with EndpointClient("http://127.0.0.1:1", "m", concurrency=1, timeouts=timeouts) as c:
        asyncio.get_running_loop().call_soon(time.sleep, 0.05)
        measurement = await c.chat(HELLO)
    assert measurement.status == "error" and measurement.error_kind == "connect"
    assert measurement.ttft_s is None and measurement.setup_s is None
    assert measurement.e2e_s is not None and measurement.e2e_s >= 0.05

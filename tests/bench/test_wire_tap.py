"""The wire tap (tests.support.wire_tap) times what crosses the socket, exchange by exchange."""

from __future__ import annotations

from nvfp4_tui.bench.client import ChatRequest, EndpointClient, Timeouts
from tests.bench.scripted_server import DONE, chunk, play, serve, usage
from tests.support.wire_tap import WireTap

HELLO = ChatRequest(messages=({"role": "user", "content": "hi"},), max_tokens=8, temperature=0.0)
ROLE_AT_S, FIRST_TEXT_AT_S, END_AT_S = 0.10, 0.30, 0.40
STEPS = [
    (ROLE_AT_S, chunk(role="assistant", content="")),  # no generated text: not the first
    (FIRST_TEXT_AT_S, chunk("Hel")),
    (0.35, chunk("lo", finish="stop")),
    (END_AT_S, chunk(choices=False, usage=usage(5, 2)) + DONE),
]
SLACK_S = 0.05  # a late wake-up of the server's task under load


async def test_each_exchange_on_a_kept_alive_connection_has_its_own_times() -> None:
    async with serve(play(STEPS)) as server:
        with WireTap(server.port) as tap:
            async with EndpointClient(
                tap.url, "m", concurrency=1, timeouts=Timeouts(total_s=10)
            ) as client:
                measured = [await client.chat(HELLO), await client.chat(HELLO)]
            exchanges = tap.exchanges("/v1/chat/completions")
    assert len(exchanges) == 2  # one connection, reused: split at the second request
    for wire, row in zip(exchanges, measured, strict=True):
        assert wire.request_line.startswith("POST /v1/chat/completions")
        assert wire.ttft_s is not None and wire.e2e_s is not None
        assert FIRST_TEXT_AT_S <= wire.ttft_s <= FIRST_TEXT_AT_S + SLACK_S  # not the role chunk
        assert END_AT_S <= wire.e2e_s <= END_AT_S + SLACK_S
        assert row.ttft_s is not None and row.e2e_s is not None
        assert 0 <= row.ttft_s - wire.ttft_s < SLACK_S  # the client sees it after the wire
        assert wire.reply_bytes > 0
        assert (wire.prompt_tokens, wire.completion_tokens) == (5, 2)
    assert exchanges[0].last_byte_at is not None
    assert exchanges[1].request_at >= exchanges[0].last_byte_at

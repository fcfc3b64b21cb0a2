"""The OpenAI protocol as vLLM speaks it: the official client and a raw reader agree."""

from __future__ import annotations

import json
from itertools import pairwise

import aiohttp
from openai import AsyncOpenAI

from nvfp4_tui.sim.tokens import count_tokens
from tests.sim.conftest import FleetFactory
from tests.sim.simclient import MODEL, chat_body, make_endpoint, read_sse

SCALE = 50.0


async def test_official_client_and_raw_sse_see_the_same_text_and_usage(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(decode_tps=100.0), time_scale=SCALE)
    url = fleet.urls["sim0"]
    client = AsyncOpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
    prompt = "Write an essay about libraries and public trust."
    stream = await client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": prompt}],
        max_tokens=120,
        temperature=0.3,
        stream=True,
        stream_options={"include_usage": True},
    )
    text, finish, usage, roles = "", None, None, []
    async for chunk in stream:
        if chunk.choices:
            delta = chunk.choices[0].delta
            text += delta.content or ""
            roles += [delta.role] if delta.role else []
            finish = chunk.choices[0].finish_reason or finish
        if chunk.usage is not None:
            usage = chunk.usage
    await client.close()

    raw = await read_sse(session, url, chat_body(prompt, max_tokens=120, continuous=False))
    assert raw.status == 200 and raw.done and raw.error is None
    assert text == raw.deltas("content") and text
    assert roles == ["assistant"]
    assert finish == raw.finish_reason and finish in ("stop", "length")
    assert usage is not None
    assert usage.completion_tokens == raw.usage["completion_tokens"] == count_tokens(text)
    assert usage.prompt_tokens == raw.usage["prompt_tokens"]
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


async def test_stream_framing_follows_vllm(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(), time_scale=SCALE)
    raw = await read_sse(session, fleet.urls["sim0"], chat_body(max_tokens=40))
    chunks = raw.chunks
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[0]["usage"]["completion_tokens"] == 0
    with_choices = [c for c in chunks if c["choices"]]
    assert all(c["choices"][0]["finish_reason"] is None for c in with_choices[:-1])
    assert with_choices[-1]["choices"][0]["finish_reason"] in ("stop", "length")
    assert chunks[-1]["choices"] == [] and raw.lines[-1] == "[DONE]"
    assert {c["id"] for c in chunks} == {chunks[0]["id"]} and chunks[0]["object"] == (
        "chat.completion.chunk"
    )
    # continuous usage: each chunk's count grows by exactly the tokens it carries
    counts = [c["usage"]["completion_tokens"] for c in with_choices]
    carried = [count_tokens(c["choices"][0]["delta"].get("content") or "") for c in with_choices]
    assert [b - a for a, b in pairwise(counts)] == carried[1:]
    assert max(carried) >= 1 and counts[-1] == raw.usage["completion_tokens"]


async def test_some_chunks_carry_several_tokens(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(decode_tps=200.0), time_scale=SCALE)
    raw = await read_sse(session, fleet.urls["sim0"], chat_body(max_tokens=400))
    with_text = [c for c in raw.chunks if c["choices"] and c["choices"][0]["delta"].get("content")]
    tokens = [count_tokens(c["choices"][0]["delta"]["content"]) for c in with_text]
    assert 1 in tokens and max(tokens) > 1
    assert sum(tokens) == raw.usage["completion_tokens"]


async def test_non_streaming_answer_equals_the_streamed_one(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(reasoning=True), time_scale=SCALE)
    url = fleet.urls["sim0"]
    raw = await read_sse(session, url, chat_body(max_tokens=80))
    async with session.post(
        f"{url}/v1/chat/completions", json=chat_body(max_tokens=80, stream=False)
    ) as reply:
        body = await reply.json()
    message = body["choices"][0]["message"]
    assert body["object"] == "chat.completion"
    assert message["content"] == raw.deltas("content")
    assert message["reasoning_content"] == raw.deltas("reasoning_content")
    assert body["usage"] == raw.usage


async def test_max_completion_tokens_and_length_finish(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(), time_scale=SCALE)
    body = chat_body(max_tokens=None, max_completion_tokens=7)
    raw = await read_sse(session, fleet.urls["sim0"], body)
    assert raw.usage["completion_tokens"] == 7 and raw.finish_reason == "length"


async def test_ignore_eos_writes_to_the_limit_and_min_tokens_at_least_that_many(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(), time_scale=SCALE)
    url = fleet.urls["sim0"]
    # Unasked, the essay mostly stops short of the limit; vLLM's sampling parameters make it
    # go on.
    unasked = [
        await read_sse(session, url, {**chat_body(max_tokens=300), "seed": s}) for s in range(3)
    ]
    assert sum(raw.usage["completion_tokens"] < 290 for raw in unasked) >= 2
    for extra, low, high in [({"ignore_eos": True}, 300, 300), ({"min_tokens": 290}, 290, 300)]:
        for seed in range(3):
            body = {**chat_body(max_tokens=300), "seed": seed, **extra}
            raw = await read_sse(session, url, body)
            assert low <= raw.usage["completion_tokens"] <= high, (extra, raw.usage)


async def test_requests_vllm_rejects_are_rejected_the_same_way(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(), time_scale=SCALE)
    url = fleet.urls["sim0"]
    cases = [
        ({**chat_body(), "model": "other"}, 404, "NotFoundError"),
        ({**chat_body(), "n": 2}, 400, "BadRequestError"),
        ({**chat_body(stream=False), "stream_options": {"include_usage": True}}, 400, None),
        ({**chat_body(), "max_tokens": 200_000}, 400, None),
        ({**chat_body(), "temperature": 3}, 400, None),
        ({**chat_body(), "messages": []}, 400, None),
        ({**chat_body(max_tokens=8), "min_tokens": 9}, 400, None),
        ({**chat_body(), "min_tokens": -1}, 400, None),
        ({**chat_body(), "ignore_eos": "yes"}, 400, None),
    ]
    for body, status, kind in cases:
        async with session.post(f"{url}/v1/chat/completions", json=body) as reply:
            error = (await reply.json())["error"]
        assert reply.status == status, body
        assert error["code"] == status and error["param"] is None
        assert error["type"] == (kind or "BadRequestError") and error["message"]
    async with session.post(f"{url}/v1/chat/completions", data=b"{not json") as reply:
        assert reply.status == 400


async def test_models_and_health(fleet_of: FleetFactory, session: aiohttp.ClientSession) -> None:
    fleet = await fleet_of(make_endpoint())
    url = fleet.urls["sim0"]
    async with session.get(f"{url}/v1/models") as reply:
        models = await reply.json()
    assert models["object"] == "list"
    assert [(m["id"], m["max_model_len"]) for m in models["data"]] == [(MODEL, 131_072)]
    async with session.get(f"{url}/health") as reply:
        assert reply.status == 200 and await reply.read() == b""


async def test_same_seed_same_request_same_stream(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    first = await fleet_of(make_endpoint(seed=3), time_scale=SCALE)
    second = await fleet_of(make_endpoint(seed=3), time_scale=SCALE)
    a = await read_sse(session, first.urls["sim0"], chat_body(max_tokens=60))
    b = await read_sse(session, second.urls["sim0"], chat_body(max_tokens=60))

    def pieces(stream):
        return [json.dumps(c["choices"][0]["delta"]) for c in stream.chunks if c["choices"]]

    assert pieces(a) == pieces(b)

"""Tool-call and reasoning streams as vLLM sends them, and the 400 of a server without tools."""

from __future__ import annotations

import json

import aiohttp
from openai import AsyncOpenAI

from tests.sim.conftest import FleetFactory
from tests.sim.simclient import MODEL, chat_body, make_endpoint, read_sse

SCALE = 50.0
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city", "unit"],
        },
    },
}
PROMPT = "What is the weather in Lisbon right now, in celsius?"


async def test_tool_call_deltas_stream_id_name_then_arguments(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(tools=True), time_scale=SCALE)
    stream = await read_sse(session, fleet.urls["sim0"], chat_body(PROMPT, tools=[WEATHER]))
    deltas = [c["choices"][0]["delta"] for c in stream.chunks if c["choices"]]
    calls = [d["tool_calls"][0] for d in deltas if d.get("tool_calls")]
    head, rest = calls[0], calls[1:]
    assert head["id"].startswith("chatcmpl-tool-") and head["type"] == "function"
    assert head["function"] == {"name": "get_weather"} and head["index"] == 0
    assert len(rest) > 1 and all(set(c) == {"index", "function"} for c in rest)
    arguments = json.loads("".join(c["function"]["arguments"] for c in rest))
    assert arguments == {"city": "Lisbon", "unit": "celsius"}
    assert stream.finish_reason == "tool_calls" and stream.done


async def test_official_client_assembles_the_tool_call(fleet_of: FleetFactory) -> None:
    fleet = await fleet_of(make_endpoint(tools=True), time_scale=SCALE)
    client = AsyncOpenAI(base_url=fleet.urls["sim0"] + "/v1", api_key="x", max_retries=0)
    reply = await client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": PROMPT}], tools=[WEATHER]
    )
    await client.close()
    call = reply.choices[0].message.tool_calls[0]
    assert reply.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments)["city"] == "Lisbon"


async def test_model_without_tools_answers_400_like_vllm(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(tools=False), time_scale=SCALE)
    url = fleet.urls["sim0"]
    async with session.post(
        f"{url}/v1/chat/completions", json=chat_body(PROMPT, tools=[WEATHER])
    ) as reply:
        assert reply.status == 400
        body = (await reply.json())["error"]
    assert set(body) == {"message", "type", "param", "code"}
    assert body["type"] == "BadRequestError" and body["code"] == 400
    assert "--enable-auto-tool-choice" in body["message"]
    # tool_choice "none" needs no parser: a plain answer
    plain = await read_sse(session, url, chat_body(PROMPT, tools=[WEATHER], tool_choice="none"))
    assert plain.done and plain.deltas("content")


async def test_reasoning_streams_before_the_answer_and_is_counted(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(reasoning=True), time_scale=SCALE)
    stream = await read_sse(session, fleet.urls["sim0"], chat_body(max_tokens=300))
    kinds = []
    for chunk in stream.chunks:
        if chunk["choices"]:
            delta = chunk["choices"][0]["delta"]
            kinds += ["r"] if delta.get("reasoning_content") else []
            kinds += ["c"] if delta.get("content") else []
    assert kinds[0] == "r" and "c" in kinds
    assert "".join(kinds).count("rc") == 1 and "cr" not in "".join(kinds)  # think, then answer
    usage = stream.usage
    reasoning_tokens = usage["completion_tokens_details"]["reasoning_tokens"]
    assert 0 < reasoning_tokens < usage["completion_tokens"]
    assert usage["completion_tokens"] == stream.chunks[-2]["usage"]["completion_tokens"]


async def test_thinking_can_be_switched_off_per_request(
    fleet_of: FleetFactory, session: aiohttp.ClientSession
) -> None:
    fleet = await fleet_of(make_endpoint(reasoning=True), time_scale=SCALE)
    body = chat_body(max_tokens=80, chat_template_kwargs={"enable_thinking": False})
    stream = await read_sse(session, fleet.urls["sim0"], body)
    assert stream.deltas("reasoning_content") == ""
    assert stream.usage["completion_tokens_details"]["reasoning_tokens"] == 0

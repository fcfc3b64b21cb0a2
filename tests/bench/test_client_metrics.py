"""Client metrics against scripted servers: TTFT, TTFA, ITL, E2E, token counts, stream endings.

The client reads a clock in lockstep with the script (``script_clocked``): each figure is the
script's own timing, exactly, however busy the machine is."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from typing import Any

import pytest

from nvfp4_tui.bench.client import ChatRequest, Measurement
from nvfp4_tui.bench.client.measurement import itl_samples
from nvfp4_tui.bench.progress import TokenMeter
from nvfp4_tui.core.events import RequestFinished
from tests.bench.scripted_server import (
    ABORT,
    DONE,
    chunk,
    play,
    script_clocked,
    serve_client,
    usage,
)

HELLO = ChatRequest(messages=({"role": "user", "content": "hi"},), max_tokens=64, temperature=0.0)


def close(measured: float | None, expected: float) -> bool:
    return measured == pytest.approx(expected)


async def run_one(
    steps: list[tuple[float, Any]], request: ChatRequest = HELLO
) -> tuple[Measurement, dict[str, Any]]:
    with script_clocked() as clock:
        async with serve_client(play(steps, clock=clock)) as (server, client):
            measurement = await client.chat(request)
    return measurement, server.log.bodies[-1]


def test_measurement_fields_are_request_finished_less_its_context() -> None:
    context = {
        "t",
        "endpoint_id",
        "suite",
        "prompt_id",
        "concurrency",
        "phase_index",
        "request_index",
        "score_heuristic",
        "score_heuristic_detail",
        "score_verified",
        "score_verified_detail",
        "score_judge",
        "score_judge_detail",
        "late_s",
        "trimmed",
        "attempt",
        "tokens_in_asked",
        "tokens_out_asked",
        "turn",
    }
    row_fields = [f.name for f in fields(RequestFinished) if f.name not in context]
    assert [f.name for f in fields(Measurement)] == row_fields
    measurement = Measurement(status="error", queue_s=0.0, error_kind="connect")
    row = RequestFinished(
        t=0.0,
        endpoint_id="e",
        suite="s",
        prompt_id="p",
        concurrency=1,
        phase_index=0,
        request_index=0,
        **asdict(measurement),
    )
    assert row.error_kind == "connect"


async def test_timings_of_a_plain_stream_with_a_role_only_first_chunk() -> None:
    steps = [
        (0.10, chunk(role="assistant", content="")),
        (0.25, chunk("Hel")),
        (0.33, chunk("lo")),
        (0.41, chunk(" wor")),
        (0.49, chunk("ld")),
        (0.57, chunk("!", finish="stop")),
        (0.57, chunk(choices=False, usage=usage(12, 5))),
        (0.57, DONE),
    ]
    m, body = await run_one(steps)
    assert m.status == "ok" and m.error_kind is None
    assert close(m.ttft_s, 0.25) and close(m.ttfa_s, 0.25)
    assert close(m.itl_p50_s, 0.08) and close(m.itl_max_s, 0.08)
    assert m.itl_p50_s <= m.itl_p95_s <= m.itl_p99_s <= m.itl_max_s
    assert not m.itl_per_token
    assert close(m.e2e_s, 0.57)
    assert (m.tokens_in, m.tokens_out, m.tokens_estimated, m.chunks) == (12, 5, False, 5)
    assert close(m.decode_tps, 4 / 0.32)
    assert close(m.e2e_tps, 5 / 0.57)
    # No per-chunk counts: the second token came with the second chunk.
    assert close(m.ttst_s, 0.33) and close(m.tpot_s, 0.32 / 4) and close(m.prefill_tps, 12 / 0.25)
    assert m.answer_text == "Hello world!" and m.reasoning_text == ""
    assert m.finish_reason == "stop" and m.tool_calls_json is None
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert (body["model"], body["max_tokens"], body["temperature"]) == ("m", 64, 0.0)
    assert "tools" not in body


async def test_reasoning_before_answer_sets_ttft_and_ttfa_apart() -> None:
    for key in ("reasoning_content", "reasoning"):
        steps = [
            (0.0, chunk(role="assistant")),
            (0.10, chunk(reasoning="Let me", reasoning_key=key)),
            (0.15, chunk(reasoning=" think.", reasoning_key=key)),
            (0.40, chunk("42", finish="stop", usage=usage(3, 9, reasoning=7))),
            (0.40, DONE),
        ]
        m, _ = await run_one(steps)
        assert close(m.ttft_s, 0.10) and close(m.ttfa_s, 0.40), key
        assert m.reasoning_text == "Let me think." and m.answer_text == "42"
        assert (m.tokens_out, m.reasoning_tokens) == (9, 7)


async def test_tool_call_deltas_are_reassembled_by_index() -> None:
    steps = [
        (0.0, chunk(role="assistant")),
        (
            0.10,
            chunk(
                tool_calls=[
                    {
                        "index": 0,
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": ""},
                    }
                ]
            ),
        ),
        (0.15, chunk(tool_calls=[{"index": 0, "function": {"arguments": '{"city": '}}])),
        (0.20, chunk(tool_calls=[{"index": 0, "function": {"arguments": '"Paris"}'}}])),
        (
            0.25,
            chunk(
                tool_calls=[
                    {"index": 1, "id": "call_b", "function": {"name": "now", "arguments": "{}"}}
                ]
            ),
        ),
        (0.25, chunk(finish="tool_calls", usage=usage(40, 20))),
        (0.25, DONE),
    ]
    tools = ({"type": "function", "function": {"name": "get_weather", "parameters": {}}},)
    request = ChatRequest(messages=HELLO.messages, tools=tools, extra_body={"top_k": 5})
    m, body = await run_one(steps, request)
    assert m.status == "ok" and m.finish_reason == "tool_calls"
    assert close(m.ttft_s, 0.10) and m.ttfa_s is None and m.answer_text == ""
    assert json.loads(m.tool_calls_json) == [
        {"id": "call_a", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"id": "call_b", "name": "now", "arguments": "{}"},
    ]
    assert body["tools"] == list(tools) and body["top_k"] == 5
    assert "max_tokens" not in body and "temperature" not in body


async def test_extra_body_cannot_turn_streaming_off() -> None:
    steps = [(0.0, chunk("a", finish="stop")), (0.0, DONE)]
    request = ChatRequest(messages=HELLO.messages, extra_body={"stream": False, "seed": 1})
    m, body = await run_one(steps, request)
    assert m.status == "ok" and body["stream"] is True and body["seed"] == 1


async def test_close_after_finish_reason_without_done_is_complete() -> None:
    steps = [
        (0.05, chunk("a")),
        (0.10, chunk("b", finish="stop", usage=usage(4, 2))),
        (0.30, b": closing soon\n\n"),
    ]
    m, _ = await run_one(steps)
    assert m.status == "ok" and m.tokens_out == 2 and not m.tokens_estimated
    assert close(m.e2e_s, 0.30)  # the end of the stream, not the finish chunk


async def test_usage_after_the_finish_chunk_without_done() -> None:
    steps = [
        (0.05, chunk("a")),
        (0.10, chunk("b", finish="length")),
        (0.15, chunk(choices=False, usage=usage(4, 2))),
    ]
    m, _ = await run_one(steps)
    assert m.status == "incomplete" and m.finish_reason == "length"
    assert (m.tokens_in, m.tokens_out, m.tokens_estimated) == (4, 2, False)


async def test_last_event_without_blank_line_before_close() -> None:
    steps = [(0.05, chunk("a")), (0.10, chunk("b", finish="stop").rstrip(b"\n"))]
    m, _ = await run_one(steps)
    assert m.status == "ok" and m.answer_text == "ab"


async def test_crlf_stream_with_comments() -> None:
    events = [chunk(role="assistant"), chunk("x"), b": ping\n\n", chunk("y", finish="stop"), DONE]
    steps = [(0.02 * i, event.replace(b"\n", b"\r\n")) for i, event in enumerate(events)]
    m, _ = await run_one(steps)
    assert m.status == "ok" and m.answer_text == "xy" and m.chunks == 2


async def test_without_usage_tokens_are_estimated_from_chunks() -> None:
    steps = [(0.05 * i, chunk(str(i))) for i in range(1, 5)]
    steps += [(0.25, chunk(finish="stop")), (0.25, DONE)]
    m, _ = await run_one(steps)
    assert m.status == "ok"
    assert (m.tokens_out, m.tokens_estimated, m.tokens_in, m.chunks) == (4, True, None, 4)
    assert not m.itl_per_token


async def test_continuous_usage_splits_multi_token_chunks_into_per_token_gaps() -> None:
    # cumulative completion tokens per chunk: 1, 3 (+2), 4 (+1), 7 (+3), 7 (+0), 8 (+1)
    cumulative = [(0.15, 1), (0.30, 3), (0.45, 4), (0.60, 7), (0.675, 7), (0.75, 8)]
    steps = [(0.0, chunk(role="assistant", usage=usage(5, 0)))]
    steps += [(at, chunk("t", usage=usage(5, total))) for at, total in cumulative]
    steps += [(0.75, chunk(finish="stop", usage=usage(5, 8))), (0.75, DONE)]
    meter = TokenMeter()
    async with serve_client(play(steps)) as (_, client):
        m = await client.chat(HELLO, progress=meter)
    assert m.itl_per_token and m.tokens_out == 8 and m.chunks == 6
    assert meter.tokens == 8
    assert m.ttft_s is not None and m.ttst_s is not None and m.ttft_s < m.ttst_s
    # The gaps of that schedule, free of when a loaded box got round to reading each chunk:
    # 0.15/3 x3, 0.075 x2, 0.15, and 0.15 carried over the chunk that added no token.
    times = [at for at, _ in cumulative]
    samples, per_token = itl_samples(times, [total for _, total in cumulative])
    assert per_token
    assert sorted(samples) == pytest.approx([0.05] * 3 + [0.075] * 2 + [0.15] * 2)


HEAD_TOKENS = 9  # a tool-call head: markup, id and name, released by the parser at once
ANSWER_TOKENS = 21


def tool_call_steps(*, per_chunk_usage: bool) -> list[tuple[float, Any]]:
    """A head chunk of 9 tokens at 0.20 s, then one argument token every 0.05 s."""

    def counted(total: int) -> dict[str, Any] | None:
        return usage(30, total) if per_chunk_usage else None

    head = {"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather"}}
    steps = [(0.0, chunk(role="assistant", usage=counted(0)))]
    steps.append((0.20, chunk(tool_calls=[head], usage=counted(HEAD_TOKENS))))
    for total in range(HEAD_TOKENS + 1, ANSWER_TOKENS + 1):
        at = 0.20 + 0.05 * (total - HEAD_TOKENS)
        argument = {"index": 0, "function": {"arguments": "x"}}
        steps.append((at, chunk(tool_calls=[argument], usage=counted(total))))
    end = 0.20 + 0.05 * (ANSWER_TOKENS - HEAD_TOKENS)
    steps += [(end, chunk(finish="tool_calls", usage=usage(30, ANSWER_TOKENS))), (end, DONE)]
    return steps


async def test_decode_leaves_out_the_tokens_a_multi_token_first_chunk_carried() -> None:
    m, _ = await run_one(tool_call_steps(per_chunk_usage=True))
    assert m.status == "ok" and m.itl_per_token
    assert (m.first_chunk_tokens, m.tokens_out, m.chunks) == (HEAD_TOKENS, ANSWER_TOKENS, 13)
    window_s = m.e2e_s - m.ttft_s
    assert m.decode_tps == (ANSWER_TOKENS - HEAD_TOKENS) / window_s
    assert close(m.decode_tps, 20.0)  # the scripted one token per 0.05 s
    assert m.ttst_s == m.ttft_s  # the head brought the second token with the first


async def test_decode_assumes_one_token_in_the_first_chunk_without_per_chunk_usage() -> None:
    m, _ = await run_one(tool_call_steps(per_chunk_usage=False))
    assert m.status == "ok" and not m.itl_per_token and not m.tokens_estimated
    assert (m.first_chunk_tokens, m.tokens_out) == (None, ANSWER_TOKENS)
    assert m.decode_tps == (ANSWER_TOKENS - 1) / (m.e2e_s - m.ttft_s)


async def test_first_chunk_tokens_count_from_the_role_chunks_usage() -> None:
    # Tokens counted on the role chunk were decoded before TTFT too: cumulative usage keeps them.
    steps = [
        (0.0, chunk(role="assistant", usage=usage(5, 2))),
        (0.10, chunk("a", usage=usage(5, 4))),
        (0.20, chunk("b", usage=usage(5, 6))),
        (0.30, chunk("c", finish="stop", usage=usage(5, 8))),
        (0.30, DONE),
    ]
    m, _ = await run_one(steps)
    assert (m.first_chunk_tokens, m.tokens_out) == (4, 8)
    assert m.decode_tps == 4 / (m.e2e_s - m.ttft_s)


async def test_no_decode_rate_when_the_first_chunk_carried_every_token() -> None:
    head = {"index": 0, "id": "call_a", "function": {"name": "now", "arguments": "{}"}}
    steps = [
        (0.05, chunk(tool_calls=[head], usage=usage(30, 6))),
        (0.10, chunk(finish="tool_calls", usage=usage(30, 6))),
        (0.10, DONE),
    ]
    m, _ = await run_one(steps)
    assert m.status == "ok" and m.first_chunk_tokens == 6 and m.tokens_out == 6
    assert m.e2e_s > m.ttft_s and m.decode_tps is None


async def test_estimated_tokens_take_one_token_per_chunk_for_decode() -> None:
    # Usage on the first chunk only, none at the end: the row counts chunks, one token each.
    steps = [(0.05, chunk("a", usage=usage(5, 3)))]
    steps += [(0.05 + 0.05 * i, chunk(str(i))) for i in range(1, 4)]
    steps += [(0.20, chunk(finish="stop", usage={"prompt_tokens": 5})), (0.20, DONE)]
    m, _ = await run_one(steps)
    assert m.tokens_estimated and (m.tokens_out, m.first_chunk_tokens) == (4, 3)
    assert m.decode_tps == 3 / (m.e2e_s - m.ttft_s)


async def test_empty_chunks_after_the_first_text_count_as_tokens_but_not_in_timings() -> None:
    # llama.cpp without usage: a token ending inside a UTF-8 character comes as empty content.
    steps = [
        (0.0, chunk(role="assistant", content="")),
        (0.05, chunk("")),  # before any text: not counted (a role-like preamble)
        (0.10, chunk("a")),
        (0.15, chunk("")),
        (0.20, chunk("")),
        (0.25, chunk("é")),
        (0.30, chunk(finish="stop")),
        (0.30, DONE),
    ]
    m, _ = await run_one(steps)
    assert m.status == "ok" and m.tokens_estimated and (m.tokens_out, m.chunks) == (4, 2)
    assert close(m.ttft_s, 0.10) and m.ttft_s == m.ttfa_s
    assert m.itl_p50_s is not None and close(m.itl_p50_s, 0.15)  # "a" to "é", one gap
    assert m.decode_tps == 3 / (m.e2e_s - m.ttft_s)


async def test_done_without_any_finish_reason_ends_the_stream_truncated() -> None:
    # [DONE] ends the read, but no chunk said the answer was finished: an error, text kept.
    m, _ = await run_one([(0.05, chunk("a")), (0.05, DONE), (5.0, ABORT)])
    assert m.status == "error" and m.error_kind == "truncated" and m.finish_reason is None
    assert m.answer_text == "a" and m.e2e_s is not None and m.e2e_s < 5.0  # ended at [DONE]


async def test_done_then_reset_keeps_a_finished_measurement() -> None:
    steps = [(0.05, chunk("a", finish="stop")), (0.05, DONE), (0.10, ABORT)]
    m, _ = await run_one(steps)
    assert m.status == "ok" and close(m.e2e_s, 0.05)


def test_itl_samples_inter_chunk_when_any_chunk_lacks_usage() -> None:
    samples, per_token = itl_samples([0.0, 0.1, 0.3], [1, None, 5])
    assert not per_token
    assert [round(s, 9) for s in samples] == [0.1, 0.2]

"""The LLM judge against a tiny local OpenAI-compatible server that returns verdicts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from nvfp4_tui.scoring.judge import (
    ANSWER_MAX_CHARS,
    JUDGE_SYSTEM,
    JudgeConfig,
    JudgeError,
    judge_answer,
    judge_messages,
    parse_verdict,
)

RUBRIC = "10: every step right and explained; 0: wrong or missing."
Reply = Callable[[dict[str, Any]], web.StreamResponse]


def chat_reply(content: str) -> Reply:
    def reply(_body: dict[str, Any]) -> web.StreamResponse:
        return web.json_response(
            {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
        )

    return reply


class JudgeServer:
    """Answers /v1/chat/completions with the reply set for the test; keeps what it was sent."""

    def __init__(self) -> None:
        self.reply: Reply = chat_reply('{"score": 7, "reason": "fine"}')
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.bodies.append(await request.json())
        self.headers.append(dict(request.headers))
        return self.reply(self.bodies[-1])


@pytest.fixture
async def judge() -> AsyncIterator[tuple[JudgeServer, str, aiohttp.ClientSession]]:
    server = JudgeServer()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", server.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    async with aiohttp.ClientSession() as session:
        yield server, f"http://127.0.0.1:{port}", session
    await runner.cleanup()


def config(url: str, **kwargs: Any) -> JudgeConfig:
    return JudgeConfig(url=url, model="judge", rubrics={"math": RUBRIC}, **kwargs)


async def test_a_verdict_becomes_a_score_and_the_request_carries_rubric_prompt_answer(judge):
    server, url, session = judge
    score, detail = await judge_answer(
        session, config(url, api_key="k3y"), "math", "What is 2+2?", "4"
    )
    assert (score, detail) == (0.7, "judge:7/10|fine")
    (body,) = server.bodies
    assert body["model"] == "judge" and body["stream"] is False and body["temperature"] == 0.0
    assert body["messages"][0] == {"role": "system", "content": JUDGE_SYSTEM}
    user = body["messages"][1]["content"]
    assert RUBRIC in user and "What is 2+2?" in user and user.endswith("## Answer\n4")
    assert server.headers[0]["Authorization"] == "Bearer k3y"


async def test_a_suite_without_a_rubric_is_not_judged(judge):
    server, url, session = judge
    assert await judge_answer(session, config(url), "english", "p", "a") == (None, None)
    assert server.bodies == []


@pytest.mark.parametrize(
    ("reply", "detail"),
    [
        (lambda _b: web.Response(status=503), "judge_error:http_503"),
        (chat_reply("I cannot grade this."), "judge_error:reply: no score in the judge's reply"),
        (chat_reply('{"score": 12}'), "judge_error:reply: score 12 is outside 0-10"),
        (
            lambda _b: web.json_response({"choices": []}),
            "judge_error:reply: list index out of range",
        ),
        (
            lambda _b: web.Response(text="<html>"),
            "judge_error:reply: Expecting value: line 1 column 1 (char 0)",
        ),
    ],
)
async def test_a_failing_judge_gives_no_score_and_says_why(judge, reply, detail):
    server, url, session = judge
    server.reply = reply
    assert await judge_answer(session, config(url), "math", "p", "a") == (None, detail)


async def test_an_unreachable_judge(judge):
    _server, _url, session = judge
    closed = JudgeConfig(url="http://127.0.0.1:9", model="m", rubrics={"math": RUBRIC})
    score, detail = await judge_answer(session, closed, "math", "p", "a")
    assert score is None and detail.startswith("judge_error:connect")


def test_verdicts_are_read_from_json_fences_think_text_or_a_score_line():
    assert parse_verdict('```json\n{"score": 9, "reason": "clear"}\n```') == (0.9, "clear")
    assert parse_verdict('<think>{"score": 1}</think>{"reason": "x", "score": 4}') == (0.4, "x")
    assert parse_verdict("Score: 8/10 - good") == (0.8, "")
    assert parse_verdict("**Score**: 3 / 5") == (0.6, "")
    with pytest.raises(JudgeError):
        parse_verdict('{"grade": "A"}')


def test_long_answers_are_cut_and_the_judge_is_told():
    user = judge_messages(RUBRIC, "p", "x" * (ANSWER_MAX_CHARS + 10))[1]["content"]
    answer = user.split("## Answer\n", 1)[1]
    assert answer == "x" * ANSWER_MAX_CHARS + "\n[... answer cut for length]"


def test_the_chat_url_accepts_a_base_with_or_without_v1():
    assert JudgeConfig("http://h:1", "m").chat_url == "http://h:1/v1/chat/completions"
    assert JudgeConfig("http://h:1/v1/", "m").chat_url == "http://h:1/v1/chat/completions"

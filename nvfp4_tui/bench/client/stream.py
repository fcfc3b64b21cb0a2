"""Stream assembly: what one response stream has delivered, chunk by chunk, and the attempt it
was part of. ``Stream.take`` runs once per SSE event on the loop that times the stream, so it does
one JSON decode and a few dict lookups; everything else is computed after the stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

from nvfp4_tui.bench.client.errors import Failure, chunk_excerpt, error_text

# Every chunk is parsed on the loop that times the stream: orjson decodes a typical 250-byte
# chunk in 1-3 us against 3-10 us for the standard library (benchmarks/client_ceiling.py), and
# rejects bad UTF-8 with a ValueError like json does.
_loads = orjson.loads


class ToolCall:
    """One tool call as its deltas arrive: id, name and the pieces of its arguments."""

    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id: str | None = None
        self.name: str | None = None
        self.arguments: list[str] = []

    def take(self, delta: dict[str, Any]) -> None:
        if delta.get("id"):
            self.id = delta["id"]
        function = delta.get("function")
        if function:
            if function.get("name"):
                self.name = function["name"]
            arguments = function.get("arguments")
            if arguments:
                # A few servers send the arguments as an object instead of streamed JSON text.
                text = arguments if isinstance(arguments, str) else json.dumps(arguments)
                self.arguments.append(text)


class Stream:
    """What one response stream has delivered so far; ``take`` runs once per SSE event."""

    __slots__ = (
        "answer",
        "completion_tokens",
        "done_at",
        "finish_reason",
        "gen_times",
        "gen_tokens",
        "reasoning",
        "tools",
        "ttfa_at",
        "usage",
    )

    def __init__(self) -> None:
        self.answer: list[str] = []
        self.reasoning: list[str] = []
        self.tools: dict[Any, ToolCall] = {}
        self.gen_times: list[float] = []  # arrival of each chunk that carried generated text
        self.gen_tokens: list[Any] = []  # that chunk's cumulative usage.completion_tokens, or None
        self.ttfa_at: float | None = None
        self.usage: dict[str, Any] | None = None  # the last usage object seen
        self.completion_tokens: Any = None
        self.finish_reason: str | None = None
        self.done_at: float | None = None  # when ``data: [DONE]`` arrived

    def take(self, payload: bytes, now: float) -> None:
        if payload == b"[DONE]":
            self.done_at = now
            return
        try:
            chunk = _loads(payload)
        except ValueError:
            raise Failure("protocol", f"malformed JSON chunk: {chunk_excerpt(payload)}") from None
        try:
            choices = chunk.get("choices")
            usage = chunk.get("usage")
            tokens = None
            if usage:
                tokens = usage.get("completion_tokens")
                self.usage = usage
                self.completion_tokens = tokens
            if choices:
                choice = choices[0]
                delta = choice.get("delta")
                if delta:
                    content = delta.get("content")
                    # vLLM has sent both names with the same text; count it once.
                    reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                    tool_calls = delta.get("tool_calls")
                    if content or reasoning or tool_calls:
                        self.gen_times.append(now)
                        self.gen_tokens.append(tokens)
                        if content:
                            self.answer.append(content)
                            if self.ttfa_at is None:
                                self.ttfa_at = now
                        if reasoning:
                            self.reasoning.append(reasoning)
                        if tool_calls:
                            self._take_tool_calls(tool_calls)
                reason = choice.get("finish_reason")
                if reason:
                    self.finish_reason = reason
            elif not usage:
                problem = chunk.get("error") or (chunk if chunk.get("object") == "error" else None)
                if problem:
                    raise Failure("protocol", f"server error in stream: {error_text(problem)}")
        except (AttributeError, TypeError, IndexError, KeyError):
            raise Failure("protocol", f"unexpected chunk: {chunk_excerpt(payload)}") from None

    def _take_tool_calls(self, deltas: list[dict[str, Any]]) -> None:
        for position, delta in enumerate(deltas):
            index = delta.get("index", position)
            call = self.tools.get(index)
            if call is None:
                call = self.tools[index] = ToolCall()
            call.take(delta)

    def tokens_so_far(self) -> int:
        """Server-counted tokens when usage streams per chunk, else generated chunks."""
        tokens = self.completion_tokens
        return tokens if type(tokens) is int else len(self.gen_times)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One send of a request: what its stream delivered, when, and how it ended."""

    stream: Stream
    sent_at: float
    ended_at: float
    http_status: int | None
    failure: Failure | None
    retry_after_s: float | None = None  # what a 429/503 asked for in Retry-After
    setup_s: float | None = None  # from calling aiohttp to the bytes reaching the socket

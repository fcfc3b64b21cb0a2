"""Stream assembly: what one response stream has delivered, chunk by chunk, and the attempt it
was part of. ``Stream.take`` runs once per SSE event on the loop that times the stream, so it does
one JSON decode and a few dict lookups; everything else is computed after the stream.

A stream holds at most what ``ReplyLimits`` allows: past ``max_chunks`` events or
``max_answer_bytes`` of text, ``take`` raises ``too_large`` before keeping the chunk that crossed,
so the row keeps everything up to the cut. ``usage_doubt`` says when the server's token count
contradicts what the stream carried.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

from nvfp4_tui.bench.client.errors import Failure, chunk_excerpt, error_text
from nvfp4_tui.config.profile import ReplyLimits
from nvfp4_tui.core.outside_text import NO_SECRETS, Secrets

# Every chunk is parsed on the loop that times the stream: orjson decodes a typical 250-byte
# chunk in 1-3 us against 3-10 us for the standard library (benchmarks/client_ceiling.py), and
# rejects bad UTF-8 with a ValueError like json does.
_loads = orjson.loads
# A token decodes to at least a byte of text (a byte-fallback token to exactly one), bar special
# tokens a server strips: a count past this many per byte, plus a few specials, is not a count.
TOKENS_PER_TEXT_BYTE = 4
SPECIAL_TOKENS_SLACK = 64
TOOL_CALL_BYTES = 64  # what starting a tool call costs against max_answer_bytes, beside its text
INT64_MAX = (1 << 63) - 1  # what the snapshot's columns hold


class ToolCall:
    """One tool call as its deltas arrive: id, name and the pieces of its arguments."""

    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id: str | None = None
        self.name: str | None = None
        self.arguments: list[str] = []

    def take(self, delta: dict[str, Any], arguments: str | None) -> None:
        """Fold in one delta, whose argument text ``arguments_text`` read."""
        if delta.get("id"):
            self.id = delta["id"]
        function = delta.get("function")
        if function and function.get("name"):
            self.name = function["name"]
        if arguments:
            self.arguments.append(arguments)


def arguments_text(delta: dict[str, Any]) -> str | None:
    """A tool-call delta's piece of argument text, if it has one."""
    function = delta.get("function")
    arguments = function.get("arguments") if function else None
    if not arguments:
        return None
    # A few servers send the arguments as an object instead of streamed JSON text.
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


class Stream:
    """What one response stream has delivered so far; ``take`` runs once per SSE event."""

    __slots__ = (
        "answer",
        "completion_tokens",
        "done_at",
        "empty_token_chunks",
        "events",
        "finish_reason",
        "gen_times",
        "gen_tokens",
        "limits",
        "max_tokens",
        "reasoning",
        "secrets",
        "text_bytes",
        "tools",
        "ttfa_at",
        "usage",
    )

    def __init__(
        self,
        limits: ReplyLimits | None = None,
        max_tokens: int | None = None,
        secrets: Secrets = NO_SECRETS,
    ) -> None:
        self.limits = limits or ReplyLimits()
        self.max_tokens = max_tokens  # what the request asked for at most
        self.secrets = secrets  # scrubbed from the chunks a failure quotes
        self.events = 0  # SSE events taken, [DONE] and usage-only ones included
        self.text_bytes = 0  # answer, reasoning and tool-call text so far, as UTF-8
        self.answer: list[str] = []
        self.reasoning: list[str] = []
        self.tools: dict[Any, ToolCall] = {}
        self.gen_times: list[float] = []  # arrival of each chunk that carried generated text
        self.gen_tokens: list[Any] = []  # that chunk's cumulative usage.completion_tokens, or None
        # Chunks after the first generated one whose text is empty: each still brings a token
        # (one that ends inside a UTF-8 character, its bytes held back). Counted for estimates,
        # never timed: TTFT and ITL are about text.
        self.empty_token_chunks = 0
        self.ttfa_at: float | None = None
        self.usage: dict[str, Any] | None = None  # the last usage object seen
        self.completion_tokens: Any = None
        self.finish_reason: str | None = None
        self.done_at: float | None = None  # when ``data: [DONE]`` arrived

    def take(self, payload: bytes, now: float) -> None:
        self.events += 1
        if self.events > self.limits.max_chunks:
            limit = self.limits.max_chunks
            raise Failure("too_large", f"reply over {limit} SSE events (run.max_chunks)")
        if payload == b"[DONE]":
            self.done_at = now
            return
        try:
            chunk = _loads(payload)
        except ValueError:
            raise Failure(
                "protocol", f"malformed JSON chunk: {chunk_excerpt(payload, self.secrets)}"
            ) from None
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
                        room = self.limits.max_answer_bytes - self.text_bytes
                        size = (text_bytes(content) if content else 0) + (
                            text_bytes(reasoning) if reasoning else 0
                        )
                        if size > room:
                            raise self._answer_too_large()
                        if tool_calls:
                            size += self._take_tool_calls(tool_calls, room - size)
                        self.text_bytes += size
                        self.gen_times.append(now)
                        self.gen_tokens.append(tokens)
                        if content:
                            self.answer.append(content)
                            if self.ttfa_at is None:
                                self.ttfa_at = now
                        if reasoning:
                            self.reasoning.append(reasoning)
                    elif self.gen_times and _empty_text(delta):
                        self.empty_token_chunks += 1
                reason = choice.get("finish_reason")
                if reason:
                    self.finish_reason = reason
            elif not usage:
                problem = chunk.get("error") or (chunk if chunk.get("object") == "error" else None)
                if problem:
                    raise Failure(
                        "protocol", f"server error in stream: {error_text(problem, self.secrets)}"
                    )
        except (AttributeError, TypeError, IndexError, KeyError):
            raise Failure(
                "protocol", f"unexpected chunk: {chunk_excerpt(payload, self.secrets)}"
            ) from None

    def _take_tool_calls(self, deltas: list[dict[str, Any]], room: int) -> int:
        """Fold in a chunk's tool-call deltas; returns the bytes they cost, at most ``room``."""
        added = 0
        for position, delta in enumerate(deltas):
            index = delta.get("index", position)
            call = self.tools.get(index)
            arguments = arguments_text(delta)
            cost = (0 if call is not None else TOOL_CALL_BYTES) + (
                text_bytes(arguments) if arguments else 0
            )
            if added + cost > room:
                raise self._answer_too_large()
            added += cost
            if call is None:
                call = self.tools[index] = ToolCall()
            call.take(delta, arguments)
        return added

    def _answer_too_large(self) -> Failure:
        limit = self.limits.max_answer_bytes
        return Failure("too_large", f"answer text over {limit} bytes (run.max_answer_bytes)")

    def tokens_so_far(self) -> int:
        """Server-counted tokens when usage streams per chunk and the count is believable,
        else the estimate."""
        tokens = self.completion_tokens
        if type(tokens) is int and self.usage_doubt(tokens) is None:
            return tokens
        return self.estimated_tokens()

    def estimated_tokens(self) -> int:
        """A token per chunk that carried one: every generated chunk, and the empty ones after
        the first."""
        return len(self.gen_times) + self.empty_token_chunks

    def usage_doubt(self, tokens: int, reasoning_tokens: int | None = None) -> str | None:
        """Why ``tokens`` completion tokens cannot be this stream's, or None when they can be.

        More than max_tokens, or more tokens than the text carried could hold. Reasoning tokens
        the server counted but did not stream (a hidden chain of thought) are left out of the
        text check.
        """
        if tokens > INT64_MAX:
            return f"usage reports {tokens} completion tokens, past any count"
        if self.max_tokens is not None and tokens > self.max_tokens:
            return f"usage reports {tokens} completion tokens, over max_tokens {self.max_tokens}"
        hidden = reasoning_tokens if reasoning_tokens and not self.reasoning else 0
        visible = tokens - min(hidden, tokens)
        if visible > TOKENS_PER_TEXT_BYTE * self.text_bytes + SPECIAL_TOKENS_SLACK:
            return (
                f"usage reports {tokens} completion tokens for {self.text_bytes} bytes of text "
                f"in {len(self.gen_times)} chunks"
            )
        return None


def _empty_text(delta: dict[str, Any]) -> bool:
    """Whether ``delta`` is a token's chunk whose text is empty, not a role chunk."""
    if "role" in delta:
        return False
    return any(delta.get(key) == "" for key in ("content", "reasoning_content", "reasoning"))


def text_bytes(text: Any) -> int:
    """The UTF-8 size of a delta's text; a non-string delta is kept as its JSON."""
    if isinstance(text, str):
        return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return len(json.dumps(text))


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

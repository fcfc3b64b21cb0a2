"""The bytes a vLLM OpenAI server sends: SSE chunks, full responses and error bodies.

Chunks are built from a pre-serialized head and tail around a ``json.dumps`` of the text, so a
token costs one small string encode rather than a whole-object serialization.
"""

from __future__ import annotations

import json
from typing import Any

from nvfp4_tui.sim.answers import Answer, Piece

DONE = b"data: [DONE]\n\n"

ERROR_TYPES = {
    400: "BadRequestError",
    404: "NotFoundError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
    500: "InternalServerError",
    503: "ServiceUnavailableError",
}


def error_body(status: int, message: str) -> dict[str, Any]:
    """vLLM 0.32's error JSON, as its HTTP errors and its stream's error event both carry it."""
    error = {
        "message": message,
        "type": ERROR_TYPES.get(status, "BadRequestError"),
        "param": None,
        "code": status,
    }
    return {"error": error}


def error_json(status: int, message: str) -> str:
    """``error_body`` written as vLLM writes it (compact)."""
    return _dumps(error_body(status, message))


def stream_error(status: int, message: str) -> bytes:
    """An error object as an SSE event inside a 200 stream, as vLLM sends one."""
    return f"data: {error_json(status, message)}\n\n".encode()


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def usage_body(prompt_tokens: int, completion_tokens: int, reasoning_tokens: int | None) -> dict:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "completion_tokens": completion_tokens,
    }
    if reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return usage


class ChunkEncoder:
    """SSE frames of one streamed answer, in vLLM's chunk shape."""

    def __init__(
        self,
        completion_id: str,
        created: int,
        model: str,
        prompt_tokens: int,
        *,
        continuous_usage: bool,
        reasoning_model: bool,
        usage_in_finish: bool = False,
    ) -> None:
        self._head = (
            f'data: {{"id":"{completion_id}","object":"chat.completion.chunk",'
            f'"created":{created},"model":{_dumps(model)},"choices":'
        )
        self._prompt_tokens = prompt_tokens
        self._continuous = continuous_usage
        self._reasoning_model = reasoning_model
        self._usage_in_finish = usage_in_finish  # usage beside finish_reason, as some servers do

    def _usage_tail(self, completion_tokens: int, finishing: bool) -> str:
        if not (self._continuous or (finishing and self._usage_in_finish)):
            return "}\n\n"
        p = self._prompt_tokens
        return (
            f',"usage":{{"prompt_tokens":{p},"total_tokens":{p + completion_tokens},'
            f'"completion_tokens":{completion_tokens}}}}}\n\n'
        )

    def _choice(self, delta: str, finish_reason: str | None, completion_tokens: int) -> bytes:
        finish = "null}]" if finish_reason is None else f'"{finish_reason}","stop_reason":null}}]'
        return (
            f'{self._head}[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{finish}'
            + self._usage_tail(completion_tokens, finish_reason is not None)
        ).encode()

    def role(self) -> bytes:
        return self._choice('{"role":"assistant","content":""}', None, 0)

    def piece(
        self, piece: Piece, answer: Answer, completion_tokens: int, finish_reason: str | None
    ) -> bytes:
        """The chunk carrying ``piece``; ``completion_tokens`` counts tokens up to and with it."""
        if piece.kind == "content":
            delta = f'{{"content":{_dumps(piece.text)}}}'
        elif piece.kind == "reasoning":
            delta = f'{{"reasoning_content":{_dumps(piece.text)}}}'
        elif piece.kind == "tool_head":
            call = answer.tool_calls[piece.tool_index]
            delta = (
                f'{{"tool_calls":[{{"index":{piece.tool_index},"id":"{call.id}",'
                f'"type":"function","function":{{"name":{_dumps(call.name)}}}}}]}}'
            )
        else:
            delta = (
                f'{{"tool_calls":[{{"index":{piece.tool_index},'
                f'"function":{{"arguments":{_dumps(piece.text)}}}}}]}}'
            )
        return self._choice(delta, finish_reason, completion_tokens)

    def malformed(self, piece: Piece) -> bytes:
        """A chunk cut off mid-object: what a broken proxy or server bug produces."""
        return f'{self._head}[{{"index":0,"delta":{{"content":{_dumps(piece.text)}\n\n'.encode()

    def usage(self, answer: Answer) -> bytes:
        reasoning = answer.reasoning_tokens if self._reasoning_model else None
        usage = usage_body(self._prompt_tokens, answer.completion_tokens, reasoning)
        return f'{self._head}[],"usage":{_dumps(usage)}}}\n\n'.encode()


def full_response(
    completion_id: str, created: int, model: str, prompt_tokens: int, answer: Answer,
    reasoning_model: bool,
) -> dict[str, Any]:  # fmt: skip
    """The non-streaming chat.completion body."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": answer.content if not answer.tool_calls else (answer.content or None),
        "reasoning_content": answer.reasoning or None,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in answer.tool_calls
        ],
    }
    reasoning = answer.reasoning_tokens if reasoning_model else None
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": answer.finish_reason,
                "stop_reason": None,
            }
        ],
        "usage": usage_body(prompt_tokens, answer.completion_tokens, reasoning),
        "prompt_logprobs": None,
    }

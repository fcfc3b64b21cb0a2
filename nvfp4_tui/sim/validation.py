"""Chat completion requests checked as vLLM checks them, with its error statuses and JSON."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from nvfp4_tui.sim.answers import ChatRequest
from nvfp4_tui.sim.wire import error_json

RETRY_AFTER_S = 1
# Sampling fields of vLLM's own, beyond OpenAI's: what transformers serve refuses.
VLLM_SAMPLING_FIELDS = frozenset(
    {"ignore_eos", "min_tokens", "top_k", "min_p", "repetition_penalty", "skip_special_tokens"}
)


class BadRequest(Exception):
    """A request the server refuses, with the HTTP status vLLM answers it with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def refuse_vllm_sampling_fields(body: Any) -> web.Response | None:
    """transformers serve's answer to a body holding any of vLLM's sampling fields: HTTP 422
    with FastAPI's ``detail``, not an OpenAI error object."""
    unexpected = sorted(VLLM_SAMPLING_FIELDS & set(body)) if isinstance(body, dict) else []
    if not unexpected:
        return None
    detail = "Unexpected fields in the request: {" + ", ".join(map(repr, unexpected)) + "}"
    return web.json_response({"detail": detail}, status=422)


def error_response(status: int, message: str) -> web.Response:
    headers = {"Retry-After": str(RETRY_AFTER_S)} if status == 429 else None
    return web.Response(
        text=error_json(status, message),
        status=status,
        headers=headers,
        content_type="application/json",
    )


def parse_request(body: Any, model: str, tools_enabled: bool) -> tuple[ChatRequest, dict]:
    """Validate a chat request as vLLM does; returns it and its stream options."""
    if not isinstance(body, dict):
        raise BadRequest(400, "Expected a JSON object as the request body.")
    if body.get("model") != model:
        raise BadRequest(404, f"The model `{body.get('model')}` does not exist.")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest(400, "`messages` must be a non-empty list.")
    if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
        raise BadRequest(400, "Each message must be an object with a string `role`.")
    if body.get("n", 1) != 1:
        raise BadRequest(400, "Only n=1 is supported by this server.")
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
    ):
        raise BadRequest(400, "max_tokens must be at least 1, got " + json.dumps(max_tokens))
    min_tokens = body.get("min_tokens", 0)
    if isinstance(min_tokens, bool) or not isinstance(min_tokens, int) or min_tokens < 0:
        raise BadRequest(
            400, "min_tokens must be greater than or equal to 0, got " + json.dumps(min_tokens)
        )
    if max_tokens is not None and min_tokens > max_tokens:
        raise BadRequest(
            400,
            f"min_tokens must be less than or equal to max_tokens={max_tokens}, got {min_tokens}.",
        )
    ignore_eos = body.get("ignore_eos", False)
    if not isinstance(ignore_eos, bool):
        raise BadRequest(400, "ignore_eos must be a boolean.")
    temperature = body.get("temperature", 1.0)
    if temperature is None:
        temperature = 1.0
    if isinstance(temperature, bool) or not isinstance(temperature, int | float):
        raise BadRequest(400, "temperature must be a number.")
    if not 0 <= temperature <= 2:
        raise BadRequest(400, f"temperature must be in [0, 2], got {temperature}.")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise BadRequest(400, "seed must be an integer.")
    stream_options = body.get("stream_options")
    if stream_options is not None and not body.get("stream"):
        raise BadRequest(400, "Stream options can only be defined when `stream=True`.")
    if stream_options is not None and not isinstance(stream_options, dict):
        raise BadRequest(400, "stream_options must be an object.")
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise BadRequest(400, "tools must be a list.")
    tool_choice = body.get("tool_choice")
    if tools and tool_choice != "none" and not tools_enabled:
        raise BadRequest(
            400,
            '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser '
            "to be set",
        )
    template_kwargs = body.get("chat_template_kwargs")
    thinking = True
    if isinstance(template_kwargs, dict) and template_kwargs.get("enable_thinking") is False:
        thinking = False
    request = ChatRequest(
        messages=messages,
        max_tokens=max_tokens,
        temperature=float(temperature),
        seed=seed,
        tools=tools or None,
        tool_choice=tool_choice,
        thinking=thinking,
        min_tokens=max_tokens if ignore_eos and max_tokens is not None else min_tokens,
    )
    return request, stream_options or {}


def check_context(prompt_tokens: int, max_tokens: int | None, max_model_len: int) -> None:
    """Refuse a request whose prompt and completion cannot fit the context, as vLLM does."""
    wanted = prompt_tokens + (max_tokens or 0)
    if wanted > max_model_len:
        raise BadRequest(
            400,
            f"This model's maximum context length is {max_model_len} tokens. However, you "
            f"requested {wanted} tokens ({prompt_tokens} in the messages, {max_tokens or 0} in "
            "the completion). Please reduce the length of the messages or completion.",
        )

"""Helpers for the simulator's tests: endpoint factories and a raw SSE client."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from typing import Any

import aiohttp

from nvfp4_tui.config.profile import Endpoint, FaultSpec, SimSpec
from nvfp4_tui.config.telemetry_choice import Telemetry

MODEL = "current"
ESSAY_PROMPT = "Write a short essay about trust in institutions and the printing press."


def make_spec(**overrides: Any) -> SimSpec:
    base = SimSpec(decode_tps=80.0, ttft_s=0.2, vram_used_mib=90_000.0, seed=7)
    return replace(base, **overrides)


def make_endpoint(endpoint_id: str = "sim0", gpu: int = 0, **spec: Any) -> Endpoint:
    return Endpoint(
        id=endpoint_id,
        label=f"Simulated {endpoint_id}",
        url="http://127.0.0.1:1",
        model=MODEL,
        gpu=gpu,
        model_class="moe",
        telemetry=Telemetry("sim"),
        sim=make_spec(**spec),
    )


def chat_body(
    prompt: str = ESSAY_PROMPT,
    *,
    max_tokens: int | None = 60,
    stream: bool = True,
    continuous: bool = True,
    system: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    messages = [{"role": "user", "content": prompt}]
    if system is not None:
        messages.insert(0, {"role": "system", "content": system})
    body: dict[str, Any] = {
        "model": MODEL,
        "messages": messages,
        "stream": stream,
        "temperature": 0.3,
        **extra,
    }
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if stream:
        body["stream_options"] = {"include_usage": True, "continuous_usage_stats": continuous}
    return body


@dataclass
class RawStream:
    """One streamed reply read off the socket: every data line, its arrival time, parsed."""

    status: int
    sent_at: float
    lines: list[str] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    error: BaseException | None = None

    @property
    def chunks(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines if line != "[DONE]"]

    @property
    def done(self) -> bool:
        return bool(self.lines) and self.lines[-1] == "[DONE]"

    def deltas(self, key: str) -> str:
        return "".join(
            c["choices"][0]["delta"].get(key) or "" for c in self.chunks if c.get("choices")
        )

    @property
    def usage(self) -> dict[str, Any]:
        return next(c["usage"] for c in reversed(self.chunks) if not c.get("choices"))

    @property
    def finish_reason(self) -> str | None:
        reasons = [c["choices"][0]["finish_reason"] for c in self.chunks if c.get("choices")]
        return next((r for r in reasons if r), None)

    def generated(self) -> list[tuple[float, int]]:
        """(arrival time, cumulative completion tokens) of each chunk that carries output."""
        out = []
        for at, line in zip(self.times, self.lines, strict=True):
            if line == "[DONE]":
                continue
            chunk = json.loads(line)
            if not chunk.get("choices"):
                continue
            delta = chunk["choices"][0]["delta"]
            if delta.get("content") or delta.get("reasoning_content") or delta.get("tool_calls"):
                out.append((at, chunk["usage"]["completion_tokens"]))
        return out

    @property
    def ttft_s(self) -> float:
        return self.generated()[0][0] - self.sent_at


async def read_sse(
    session: aiohttp.ClientSession, url: str, body: dict[str, Any], timeout_s: float = 30.0
) -> RawStream:
    """POST and read the SSE reply line by line; a transport error is kept, not raised."""
    sent = time.perf_counter()
    async with session.post(
        f"{url}/v1/chat/completions",
        json=body,
        timeout=aiohttp.ClientTimeout(total=timeout_s),
    ) as reply:
        stream = RawStream(status=reply.status, sent_at=sent)
        if reply.status != 200:
            stream.lines.append(await reply.text())
            stream.times.append(time.perf_counter())
            return stream
        try:
            async for raw in reply.content:
                line = raw.decode().rstrip("\n")
                if line.startswith("data: "):
                    stream.lines.append(line[6:])
                    stream.times.append(time.perf_counter())
        except (aiohttp.ClientError, ConnectionError) as e:
            stream.error = e
        return stream


def faults(**kwargs: Any) -> FaultSpec:
    return FaultSpec(**kwargs)

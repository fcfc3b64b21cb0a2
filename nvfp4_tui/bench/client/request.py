"""What a caller asks the client for: one chat completion to stream, and the limits it runs under."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to stream; only standard fields are sent unless ``extra_body`` is set."""

    messages: tuple[dict[str, Any], ...]
    max_tokens: int | None = None
    temperature: float | None = None
    tools: tuple[dict[str, Any], ...] | None = None
    extra_body: dict[str, Any] | None = None


@dataclass(frozen=True)
class Timeouts:
    """Limits of one request in seconds; ``total_s`` is the profile's ``run.timeout_s``."""

    connect_s: float = 10.0
    first_byte_s: float = 120.0  # a long prompt's prefill behind a full batch takes a while
    idle_s: float = 60.0  # between two reads of the stream
    total_s: float = 300.0
    health_s: float = 10.0  # both health probes together

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if not value > 0:
                raise ValueError(f"Timeouts.{field.name} must be > 0 seconds, got {value!r}")

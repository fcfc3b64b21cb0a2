"""What went wrong with a request, in a word (``ErrorKind``) and a short line for people.

Messages are bounded excerpts. What the server sent passes ``core.outside_text`` (keys and escapes
out) before it is cut, so a key that straddles the cut leaves nothing of itself.
Whether a failed request may be resent is decided from its HTTP status, not its message.
"""

from __future__ import annotations

import math
import time
from email.utils import parsedate_to_datetime
from typing import Any

import aiohttp

from nvfp4_tui.core.events import ErrorKind
from nvfp4_tui.core.outside_text import Secrets, outside_line

BODY_EXCERPT_BYTES = 2048
BODY_EXCERPT_CHARS = 200
CHUNK_EXCERPT_CHARS = 80
RETRYABLE_STATUSES = frozenset({429, 503})  # the answers a client may resend after


class Failure(Exception):
    """Why an attempt ended early; what the stream delivered before it is kept."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message


def retryable(http_status: int | None) -> bool:
    """Whether a reply's HTTP status is one a client may resend after (429, 503)."""
    return http_status in RETRYABLE_STATUSES


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header in seconds: delay-seconds (decimals accepted) or an HTTP date."""
    if not value:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def http_kind(status: int) -> ErrorKind:
    """An error status's kind; 1xx and 3xx on a request are no answer at all: ``protocol``."""
    if status >= 500:
        return "http_5xx"
    return "http_4xx" if status >= 400 else "protocol"


async def body_excerpt(response: aiohttp.ClientResponse, secrets: Secrets) -> str:
    raw = b""
    try:
        while len(raw) < BODY_EXCERPT_BYTES:
            piece = await response.content.read(BODY_EXCERPT_BYTES - len(raw))
            if not piece:
                break
            raw += piece
    except (aiohttp.ClientError, OSError):
        pass  # the status already says what went wrong; the body is a courtesy
    return (
        outside_line(raw.decode("utf-8", "replace"), BODY_EXCERPT_CHARS, secrets) or "(empty body)"
    )


def classify(error: BaseException, secrets: Secrets) -> tuple[ErrorKind, str]:
    if isinstance(error, aiohttp.ClientConnectorCertificateError):
        reason = getattr(error.certificate_error, "verify_message", None) or "not trusted"
        return "connect", (
            f"TLS certificate of {error.host}:{error.port} rejected ({reason}); "
            "set verify_tls = false on the endpoint to skip the check"
        )
    if isinstance(error, aiohttp.ClientConnectorDNSError):
        return "connect", f"cannot resolve host {error.host}"
    if isinstance(error, aiohttp.ClientConnectorError):
        cause = error.os_error
        if isinstance(cause, ConnectionRefusedError):
            reason = "connection refused"
        else:
            reason = cause.strerror or str(cause) or type(cause).__name__
        return "connect", f"{reason} ({error.host}:{error.port})"
    if isinstance(error, aiohttp.InvalidURL):
        return "connect", f"invalid URL {error.url}"
    if isinstance(error, aiohttp.ClientResponseError):
        message = outside_line(error.message, BODY_EXCERPT_CHARS, secrets)
        return "protocol", f"bad HTTP response: {message}"
    if isinstance(
        error, (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, ConnectionError)
    ):
        return "reset", f"connection lost: {describe(error, secrets)}"
    return "protocol", describe(error, secrets)


def describe(error: BaseException, secrets: Secrets) -> str:
    return outside_line(str(error), BODY_EXCERPT_CHARS, secrets) or type(error).__name__


def error_text(problem: Any, secrets: Secrets) -> str:
    message = problem.get("message") if isinstance(problem, dict) else None
    return outside_line(str(message or problem), BODY_EXCERPT_CHARS, secrets)


def chunk_excerpt(payload: bytes, secrets: Secrets) -> str:
    # Room for a key past the excerpt's end: it is taken out whole before the cut.
    text = payload[: CHUNK_EXCERPT_CHARS * 8].decode("utf-8", "replace")
    return repr(outside_line(text, CHUNK_EXCERPT_CHARS, secrets))

"""How a synthetic prompt asks for its output length, and what is done when a server refuses.

vLLM writes exactly ``max_tokens`` tokens under its own sampling fields ``ignore_eos`` and
``min_tokens``; transformers serve answers HTTP 422 "Unexpected fields in the request" to any
field it does not know. The first refusal is recorded as a probe (``ProbeFinished`` with
``purpose = "length_fields"``, the server's message kept) and the request is sent again without
them, as every later one to that endpoint is: its answers are then as long as the model makes
them, and the lengths table counts those that came back short.
"""

from __future__ import annotations

from typing import Any

from nvfp4_tui.bench.client import Measurement
from nvfp4_tui.core.events import ProbeFinished
from nvfp4_tui.core.figures.lengths import LENGTH_FIELDS_REFUSED

LENGTH_FIELDS = ("ignore_eos", "min_tokens")
_REFUSING_STATUSES = (400, 422)


def exact_length(max_tokens: int) -> dict[str, Any]:
    """The fields that make vLLM write ``max_tokens`` tokens (``min_tokens`` alone for a server
    that takes it without ``ignore_eos``)."""
    return {"ignore_eos": True, "min_tokens": max_tokens}


def refuses_length_fields(measurement: Measurement) -> bool:
    """Whether the server refused the request for one of the length fields it held."""
    message = measurement.error_message or ""
    return (
        measurement.status == "error"
        and measurement.http_status in _REFUSING_STATUSES
        and any(name in message for name in LENGTH_FIELDS)
    )


def refusal_probe(t: float, endpoint_id: str, measurement: Measurement) -> ProbeFinished:
    """The refused request, kept apart from the rows: sent again without the fields, it is not
    the prompt's answer, and the server counted no tokens for it."""
    return ProbeFinished(
        t=t,
        endpoint_id=endpoint_id,
        purpose=LENGTH_FIELDS_REFUSED,
        status=measurement.status,
        http_status=measurement.http_status,
        error_kind=measurement.error_kind,
        error_message=measurement.error_message,
    )

"""The streaming measurement client: one chat completion request to one endpoint -> one
Measurement (DESIGN.md "Metric definitions").

``endpoint`` holds the client, ``request`` what it is asked, ``trace`` the send clock, ``stream``
the assembly of a response stream, ``budget`` how fast one stream may make the client work,
``measurement`` the numbers computed from it, ``errors`` the classification of what went wrong. This module is its public entry point.
"""

from nvfp4_tui.bench.client.endpoint import EndpointClient
from nvfp4_tui.bench.client.errors import retry_after_seconds, retryable
from nvfp4_tui.bench.client.measurement import Measurement
from nvfp4_tui.bench.client.request import ChatRequest, Timeouts

__all__ = [
    "ChatRequest",
    "EndpointClient",
    "Measurement",
    "Timeouts",
    "retry_after_seconds",
    "retryable",
]

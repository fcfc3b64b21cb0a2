"""Where an endpoint's GPU samples come from: the profile's ``telemetry`` string, parsed once.

``nvml`` (this host's GPUs), ``none``, ``sim`` (the simulator's GPUs), or a kind read from a
URL: ``dcgm:URL`` (a DCGM exporter's /metrics) and ``prometheus:URL`` (a Prometheus server that
scrapes the fleet). Which sources each kind gives is ``telemetry.sampler``'s table; a new kind
is a name here, its parser's case, and its entry there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, cast

from nvfp4_tui.config.tomlcheck import spelt_out

TelemetryKind = Literal["nvml", "none", "sim", "dcgm", "prometheus"]
HOST_KINDS: tuple[TelemetryKind, ...] = ("nvml", "none", "sim")
# The kinds read from a URL, each with the URL an error message shows as its example.
URL_EXAMPLES: dict[TelemetryKind, str] = {
    "dcgm": "http://host:9400/metrics",
    "prometheus": "http://host:9090",
}
URL_KINDS: tuple[TelemetryKind, ...] = tuple(URL_EXAMPLES)
EXPECTED = spelt_out((*HOST_KINDS, *(f"{kind}:{url}" for kind, url in URL_EXAMPLES.items())))


@dataclass(frozen=True)
class Telemetry:
    kind: TelemetryKind
    url: str | None = None  # the exporter's or server's, for a kind read from a URL

    def __str__(self) -> str:
        return self.kind if self.url is None else f"{self.kind}:{self.url}"


ON_THIS_HOST = Telemetry("nvml")  # an endpoint's, unless its profile or the run says otherwise


def parse_telemetry(raw: object, is_url: Callable[[str], bool]) -> Telemetry | None:
    """The telemetry ``raw`` names, or None when it names none (``EXPECTED`` says what may)."""
    if not isinstance(raw, str):
        return None
    if raw in HOST_KINDS:
        return Telemetry(cast(TelemetryKind, raw))
    kind, colon, url = raw.partition(":")
    if colon and kind in URL_KINDS and is_url(url):
        return Telemetry(cast(TelemetryKind, kind), url)
    return None

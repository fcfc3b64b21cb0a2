"""GPU and server telemetry read from a Prometheus server that already scrapes the fleet.

``telemetry = "prometheus:http://prom:9090"`` on an endpoint: nothing is installed on the GPU
nodes; two instant queries (``GET /api/v1/query``) per sampling round read the current values
Prometheus holds:

- ``DCGM_QUERY``: the dcgm-exporter series (utilisation, framebuffer, power, temperature,
  clocks). A series is an endpoint's card when its node label (``Hostname``, else ``node`` or
  ``kubernetes_node``, else the host of ``instance``) is the endpoint's ``node`` and its ``gpu``
  label is the endpoint's GPU index, or its ``UUID`` the endpoint's GPU UUID.
- ``VLLM_QUERY``: vLLM's gauges (requests running and waiting, KV cache usage, preemptions). A
  series is an endpoint's server when its ``instance`` is the endpoint URL's ``host:port``, or
  names the endpoint's node and port.

Prometheus answers ``{"status": "success", "data": {"resultType": "vector", "result": [...]}}``,
each result ``{"metric": {labels}, "value": [unix_time, "value"]}``; or ``{"status": "error",
"errorType": ..., "error": ...}`` with an HTTP 4xx/5xx. Blocking like the DCGM source: the
sampler calls it from its thread. Label values are outside text: they pass ``outside_line`` before
they become a sample's name or UUID.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nvfp4_tui.config.profile import Endpoint
from nvfp4_tui.core.events import GpuSample, ServerSample
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.telemetry.prometheus import MAX_METRICS_BYTES
from nvfp4_tui.telemetry.reply_deadline import REPLY_DEADLINE_S, read_within

DCGM_FIELDS = (
    "GPU_UTIL",
    "MEM_COPY_UTIL",
    "FB_USED",
    "FB_FREE",
    "FB_TOTAL",
    "FB_RESERVED",
    "POWER_USAGE",
    "ENFORCED_POWER_LIMIT",
    "GPU_TEMP",
    "SM_CLOCK",
    "MEM_CLOCK",
)
DCGM_QUERY = '{__name__=~"DCGM_FI_DEV_(' + "|".join(DCGM_FIELDS) + ')"}'
VLLM_GAUGES = (
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "vllm:gpu_cache_usage_perc",  # vLLM V0; V1 renamed it
    "vllm:kv_cache_usage_perc",
    "vllm:num_preemptions_total",
)
VLLM_QUERY = '{__name__=~"' + "|".join(VLLM_GAUGES) + '"}'
_NODE_LABELS = ("Hostname", "node", "kubernetes_node")
MAX_LABEL_CHARS = 200


class PrometheusUnavailable(Exception):
    """The query API could not be read; ``str()`` is one line naming the server."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuses every 3xx: the query goes to the configured server only, and a redirect reaches
    ``query`` as an HTTPError that names where it pointed."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# Otherwise urllib's defaults (proxies from the environment included); redirects alone go.
_OPENER = urllib.request.build_opener(_NoRedirect)
# The errors a reply's decoding or shape can raise: a deeply nested body recurses past the
# interpreter's limit, a value of an unexpected type fails where it is used.
_REPLY_ERRORS = (RecursionError, ValueError, TypeError, KeyError, IndexError, AttributeError)


@dataclass(frozen=True, slots=True)
class Series:
    """One result of an instant vector query: its name, its labels and its current value."""

    name: str
    labels: Mapping[str, str]
    value: float


def parse_vector(body: Any, where: str) -> list[Series]:
    """The series of a ``/api/v1/query`` reply; PrometheusUnavailable for an error reply or a
    body that is not an instant vector (``where`` names the server in the message)."""
    if not isinstance(body, dict):
        raise PrometheusUnavailable(f"{where}: the reply is not a JSON object")
    if body.get("status") != "success":
        kind = outside_line(str(body.get("errorType", "error")), MAX_LABEL_CHARS)
        error = outside_line(str(body.get("error", "no reason given")), MAX_LABEL_CHARS)
        raise PrometheusUnavailable(f"{where}: {kind}: {error}")
    data = body.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "vector":
        raise PrometheusUnavailable(f"{where}: expected an instant vector result")
    results = data.get("result") or []
    if not isinstance(results, list):
        raise PrometheusUnavailable(f"{where}: expected a list of results")
    series = []
    for result in results:
        try:
            labels = {str(k): str(v) for k, v in result["metric"].items()}
            value = float(result["value"][1])  # Prometheus sends numbers as strings ("NaN" too)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            continue
        if math.isfinite(value):
            series.append(Series(labels.get("__name__", ""), labels, value))
    return series


def _decode(data: bytes, where: str, not_json: str = "the reply is not JSON") -> list[Series]:
    """The series of a reply's bytes; PrometheusUnavailable for any body that is not JSON (with
    ``not_json`` as its reason) or not the shape ``parse_vector`` expects, however it fails."""
    try:
        body = json.loads(data)
    except RecursionError:
        raise PrometheusUnavailable(f"{where}: the reply is nested too deeply to read") from None
    except ValueError:  # UnicodeDecodeError included
        raise PrometheusUnavailable(f"{where}: {not_json}") from None
    try:
        return parse_vector(body, where)
    except PrometheusUnavailable:
        raise
    except _REPLY_ERRORS:
        raise PrometheusUnavailable(
            f"{where}: the reply is not an instant query's result"
        ) from None


def node_of(labels: Mapping[str, str]) -> str | None:
    """The host a series describes: an exporter's own label, else its scrape target's host."""
    for key in _NODE_LABELS:
        if labels.get(key):
            return labels[key]
    instance = labels.get("instance")
    return urllib.parse.urlsplit(f"//{instance}").hostname if instance else None


def _target(endpoint: Endpoint) -> tuple[str, int | None]:
    url = urllib.parse.urlsplit(endpoint.url)
    return (url.hostname or "", url.port or (443 if url.scheme == "https" else 80))


def is_endpoints_server(labels: Mapping[str, str], endpoint: Endpoint) -> bool:
    instance = labels.get("instance")
    if not instance:
        return False
    scraped = urllib.parse.urlsplit(f"//{instance}")
    host, port = _target(endpoint)
    return scraped.port == port and scraped.hostname in (host, endpoint.node)


def is_endpoints_gpu(labels: Mapping[str, str], endpoint: Endpoint) -> bool:
    if node_of(labels) != endpoint.node:
        return False
    if isinstance(endpoint.gpu, int):
        return labels.get("gpu") == str(endpoint.gpu)
    return endpoint.gpu is not None and labels.get("UUID") == endpoint.gpu


def gpu_samples(
    series: Iterable[Series], endpoints: Sequence[Endpoint], t: float
) -> list[GpuSample]:
    """One GpuSample per endpoint whose card the DCGM series describe (see the module)."""
    fields: dict[str, dict[str, float]] = {}
    labels_of: dict[str, Mapping[str, str]] = {}
    for one in series:
        for endpoint in endpoints:
            if is_endpoints_gpu(one.labels, endpoint):
                # The first series wins: Kubernetes pod labels can repeat a GPU's value.
                fields.setdefault(endpoint.id, {}).setdefault(
                    one.name.removeprefix("DCGM_FI_DEV_"), one.value
                )
                labels_of.setdefault(endpoint.id, one.labels)
    samples = []
    for endpoint in endpoints:
        values = fields.get(endpoint.id)
        if values is None:
            continue
        labels = labels_of[endpoint.id]
        index = endpoint.gpu if isinstance(endpoint.gpu, int) else _index(labels.get("gpu"))
        if index is None:
            continue
        used, free = values.get("FB_USED"), values.get("FB_FREE")
        total = values.get("FB_TOTAL")
        if total is None and used is not None and free is not None:
            total = used + free + values.get("FB_RESERVED", 0.0)
        samples.append(
            GpuSample(
                t=t,
                gpu=index,
                name=_label(labels, "modelName"),
                uuid=_label(labels, "UUID"),
                vram_used_mib=used,
                vram_total_mib=total,
                util_gpu_pct=values.get("GPU_UTIL"),
                util_mem_pct=values.get("MEM_COPY_UTIL"),
                power_w=values.get("POWER_USAGE"),
                power_limit_w=values.get("ENFORCED_POWER_LIMIT"),
                temperature_c=values.get("GPU_TEMP"),
                sm_clock_mhz=values.get("SM_CLOCK"),
                mem_clock_mhz=values.get("MEM_CLOCK"),
                source="prometheus",
                host=endpoint.node or None,
            )
        )
    return samples


def server_samples(
    series: Iterable[Series], endpoints: Sequence[Endpoint], t: float
) -> list[ServerSample]:
    """One ServerSample per endpoint whose vLLM gauges the series carry: counts summed over
    its engines, the KV cache's usage their mean."""
    seen: dict[str, dict[str, list[float]]] = {}
    for one in series:
        for endpoint in endpoints:
            if is_endpoints_server(one.labels, endpoint):
                seen.setdefault(endpoint.id, {}).setdefault(one.name, []).append(one.value)
    samples = []
    for endpoint in endpoints:
        if endpoint.id not in seen:
            continue
        found = seen[endpoint.id]
        values = {name: sum(vs) for name, vs in found.items()}
        usage = found.get("vllm:kv_cache_usage_perc") or found.get("vllm:gpu_cache_usage_perc")
        kv = None if usage is None else sum(usage) / len(usage)
        samples.append(
            ServerSample(
                t=t,
                endpoint_id=endpoint.id,
                requests_running=values.get("vllm:num_requests_running"),
                requests_waiting=values.get("vllm:num_requests_waiting"),
                kv_cache_pct=None if kv is None else 100.0 * kv,
                preemptions_total=values.get("vllm:num_preemptions_total"),
            )
        )
    return samples


def uuid_indices(series: Iterable[Series], endpoints: Sequence[Endpoint]) -> dict[str, int]:
    """The ``gpu`` label of the card each UUID-naming endpoint is found as."""
    found: dict[str, int] = {}
    named = [e for e in endpoints if isinstance(e.gpu, str)]
    for one in series:
        index = _index(one.labels.get("gpu"))
        for endpoint in named:
            if index is not None and is_endpoints_gpu(one.labels, endpoint):
                found.setdefault(endpoint.id, index)
    return found


def _index(raw: str | None) -> int | None:
    """A ``gpu`` label as an index; None unless it is ASCII digits (``str.isdigit`` is true for
    "²", which ``int`` refuses, and ``int`` reads other scripts' digits)."""
    if raw is None or not (raw.isascii() and raw.isdecimal()):
        return None
    try:
        return int(raw)
    except ValueError:  # more digits than int() converts
        return None


def _label(labels: Mapping[str, str], key: str) -> str | None:
    value = outside_line(labels.get(key), MAX_LABEL_CHARS)
    return value or None


class PrometheusQuerySource:
    """A GpuSource (and server-gauge source) reading one Prometheus server for ``endpoints``."""

    def __init__(
        self,
        url: str,
        endpoints: Sequence[Endpoint],
        *,
        timeout_s: float = 2.0,
        deadline_s: float = REPLY_DEADLINE_S,
    ) -> None:
        self.url = url.rstrip("/")
        self.endpoints = tuple(endpoints)
        self._timeout_s = timeout_s
        self._deadline_s = deadline_s

    def __repr__(self) -> str:
        return f"PrometheusQuerySource({self.url!r})"

    def query(self, promql: str) -> list[Series]:
        """An instant query's series; PrometheusUnavailable with a one-line reason."""
        where = f"Prometheus {self.url}"
        address = f"{self.url}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
        started = time.monotonic()
        try:
            with _OPENER.open(address, timeout=self._timeout_s) as reply:
                data = read_within(reply, MAX_METRICS_BYTES, self._deadline_s, started=started)
        except urllib.error.HTTPError as exc:
            return self._error_reply(exc, where, started)
        except (urllib.error.URLError, OSError) as exc:
            reason = outside_line(str(getattr(exc, "reason", exc))) or type(exc).__name__
            raise PrometheusUnavailable(f"{where}: {reason}") from None
        if len(data) > MAX_METRICS_BYTES:
            raise PrometheusUnavailable(f"{where}: reply over {MAX_METRICS_BYTES >> 20} MiB")
        return _decode(data, where)

    def _error_reply(self, exc: urllib.error.HTTPError, where: str, started: float) -> list[Series]:
        if 300 <= exc.code < 400:
            target = outside_line(exc.headers.get("Location"), MAX_LABEL_CHARS) or "nowhere"
            raise PrometheusUnavailable(
                f"{where}: HTTP {exc.code}: redirect to {target} not followed (redirects never are)"
            )
        # Its error replies carry the same JSON body, whose words say what went wrong.
        try:
            data = read_within(exc, MAX_METRICS_BYTES, self._deadline_s, started=started)
        except OSError:
            raise PrometheusUnavailable(f"{where}: HTTP {exc.code}") from None
        return _decode(data, f"{where}: HTTP {exc.code}", not_json="no JSON error body")

    def sample(self, t: float) -> list[GpuSample]:
        return gpu_samples(self.query(DCGM_QUERY), self.endpoints, t)

    def gpu_indices(self) -> dict[str, int]:
        """Each endpoint's GPU index on its node, for those naming their card by UUID (the index
        its samples carry); PrometheusUnavailable when the server cannot be read."""
        return uuid_indices(self.query(DCGM_QUERY), self.endpoints)

    def server_samples(self, t: float) -> list[ServerSample]:
        return server_samples(self.query(VLLM_QUERY), self.endpoints, t)

    def close(self) -> None:
        """Nothing is held between queries."""

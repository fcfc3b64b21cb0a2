"""vLLM's Prometheus metrics for one simulated endpoint, in a registry of its own.

Names, label and histogram buckets follow vLLM's /metrics so the telemetry code reads a
simulated endpoint exactly as a real one. Latencies are observed in modelled seconds (real
ones times the simulator's ``time_scale``), the clock a client records a scaled run in
(``bench.model_time``), so the server's view and the client's compare at any scale.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from nvfp4_tui.config.profile import ServerSettings
from nvfp4_tui.sim.kv_cache import KV_BLOCK_SIZE
from nvfp4_tui.sim.load import EndpointLoad

TTFT_BUCKETS_S = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
    2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip
ITL_BUCKETS_S = (
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
    2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
)  # fmt: skip
E2E_BUCKETS_S = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
    60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
)  # fmt: skip
_LABEL = ["model_name"]
CACHE_CONFIG_INFO = "vllm:cache_config_info"


class _LoadCollector(Collector):
    """Gauges and counters read from the live load at scrape time (one source of truth, and
    no per-token metric calls on the hot path)."""

    def __init__(self, model: str, load: EndpointLoad, settings: ServerSettings) -> None:
        self._model = model
        self._load = load
        self._settings = settings

    def collect(self) -> Iterator[Metric]:
        load = self._load
        # vLLM exposes its cache config as an info-style gauge: value 1, the settings as labels.
        cache_config = {
            "block_size": str(KV_BLOCK_SIZE),
            "cache_dtype": self._settings.kv_cache_dtype,
            "enable_prefix_caching": "True",
            "gpu_memory_utilization": str(self._settings.gpu_memory_utilization),
            "num_gpu_blocks": str(load.kv_capacity_tokens // KV_BLOCK_SIZE),
        }
        info = GaugeMetricFamily(
            CACHE_CONFIG_INFO,
            "The KV cache's settings, as labels.",
            labels=list(cache_config),
        )
        info.add_metric(list(cache_config.values()), 1.0)
        yield info
        for name, doc, value in (
            ("vllm:num_requests_running", "Requests in the model's batch.", load.running),
            ("vllm:num_requests_waiting", "Requests waiting for a slot.", load.waiting),
            ("vllm:kv_cache_usage_perc", "KV cache usage, 1 is full.", load.kv_usage),
        ):
            gauge = GaugeMetricFamily(name, doc, labels=_LABEL)
            gauge.add_metric([self._model], float(value))
            yield gauge
        for name, doc, value in (
            ("vllm:prompt_tokens", "Prefill tokens processed.", load.prompt_tokens),
            ("vllm:generation_tokens", "Generation tokens processed.", load.generation_tokens),
            # The simulator never preempts; the counter is there because clients read it.
            ("vllm:num_preemptions", "Cumulative preemptions.", 0),
            ("vllm:prefix_cache_queries", "Prompt tokens looked up.", load.prefix_queries),
            ("vllm:prefix_cache_hits", "Prompt tokens found cached.", load.prefix_hits),
        ):
            counter = CounterMetricFamily(name, doc, labels=_LABEL)
            counter.add_metric([self._model], float(value))
            yield counter
        success = CounterMetricFamily(
            "vllm:request_success", "Finished requests.", labels=[*_LABEL, "finished_reason"]
        )
        for reason, count in sorted(load.finished.items()):
            success.add_metric([self._model, reason], float(count))
        yield success


class SimMetrics:
    """The endpoint's registry: latency histograms, plus the load's gauges and counters."""

    def __init__(
        self, model: str, load: EndpointLoad, settings: ServerSettings | None = None
    ) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.ttft_s = Histogram(
            "vllm:time_to_first_token_seconds", "Time to first token.", _LABEL,
            buckets=TTFT_BUCKETS_S, registry=r,
        ).labels(model)  # fmt: skip
        self.itl_s = Histogram(
            "vllm:inter_token_latency_seconds", "Time between output chunks of a request.",
            _LABEL, buckets=ITL_BUCKETS_S, registry=r,
        ).labels(model)  # fmt: skip
        self.e2e_s = Histogram(
            "vllm:e2e_request_latency_seconds", "End-to-end request latency.", _LABEL,
            buckets=E2E_BUCKETS_S, registry=r,
        ).labels(model)  # fmt: skip
        # Where a finished request's time went, as vLLM splits it (same buckets as E2E there).
        self.queue_s, self.prefill_s, self.decode_s = (
            Histogram(name, doc, _LABEL, buckets=E2E_BUCKETS_S, registry=r).labels(model)
            for name, doc in (
                ("vllm:request_queue_time_seconds", "Time waiting for a slot."),
                ("vllm:request_prefill_time_seconds", "From a slot to the first token."),
                ("vllm:request_decode_time_seconds", "From the first token to the last."),
            )
        )
        r.register(_LoadCollector(model, load, settings or ServerSettings()))

    def render(self) -> bytes:
        return generate_latest(self.registry)

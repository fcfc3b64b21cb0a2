"""Server metrics: each endpoint's vLLM ``/metrics`` scraped into ServerSample events.

Two halves. The pure half turns Prometheus text into a ``MetricsSnapshot`` and two snapshots
(this poll, the previous one, the time between) into a ``ServerSample``: gauges as they are,
rates and prefix-cache hit rate from counter deltas, exact latency means from histogram
``_sum``/``_count`` deltas and each quantile as the bucket it lies in, from bucket deltas. The
async half, ``PrometheusScraper`` / ``scrape_loop``, polls the endpoints with aiohttp and reports
an endpoint that serves no metrics once, through a callback, instead of as an error. Whatever one
endpoint's body holds stays that endpoint's: a body that cannot be read, or a figure that cannot
be computed from it, is reported for it alone, and it is polled again on the next tick beside the
others. Redirects are not followed: metrics come from the endpoint's own host.

Series that differ only by labels (``model_name``, ``engine``: data-parallel engines, several
served models) are summed; ratios (KV-cache usage, the old prefix-cache hit rate) are averaged.
A counter that went down was reset (the server restarted): Prometheus' ``rate`` counts its whole
current value as the increase, and so do we. A latency histogram that went down gives no figures
for that interval: the observations made before the restart are lost, and a mean of the rest
would read as the interval's.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import aiohttp

from nvfp4_tui.config.keys import api_key as read_key
from nvfp4_tui.config.profile import Endpoint
from nvfp4_tui.core.events import ServerSample
from nvfp4_tui.core.outside_text import NO_SECRETS, Secrets, outside_line, secrets_of
from nvfp4_tui.core.stats import counter_increase
from nvfp4_tui.telemetry.exposition import NotPrometheusText, samples

# A vLLM /metrics body is tens of kB and a DCGM exporter's a few hundred; past this, something
# other than a metrics endpoint is answering and its body is not worth the memory.
MAX_METRICS_BYTES = 8 << 20
STATUS_MESSAGE_CHARS = 200  # a status line quotes at most this much of what the server said
# Newer vLLM name first; the older one is read only when the newer is absent.
KV_CACHE_USAGE = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
ITL_HISTOGRAM = ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds")
TTFT_HISTOGRAM = ("vllm:time_to_first_token_seconds",)
E2E_HISTOGRAM = ("vllm:e2e_request_latency_seconds",)
QUEUE_HISTOGRAM = ("vllm:request_queue_time_seconds",)
PREFILL_HISTOGRAM = ("vllm:request_prefill_time_seconds",)
DECODE_HISTOGRAM = ("vllm:request_decode_time_seconds",)
PREFIX_HITS = "vllm:prefix_cache_hits_total"
PREFIX_QUERIES = "vllm:prefix_cache_queries_total"
OLD_PREFIX_HIT_RATE = "vllm:gpu_prefix_cache_hit_rate"
# An info-style gauge (value 1) whose labels are the KV cache's settings: cache_dtype, block_size…
CACHE_CONFIG_INFO = "vllm:cache_config_info"

Buckets = tuple[tuple[float, float], ...]  # (upper bound, cumulative count), ascending, +Inf last


@dataclass(frozen=True, slots=True)
class MetricsSnapshot:
    """One scrape, label sets folded together: per sample name the sum and the series count,
    per histogram the cumulative bucket counts summed by upper bound."""

    sums: Mapping[str, float]
    series: Mapping[str, int]
    histograms: Mapping[str, Buckets]

    def total(self, name: str) -> float | None:
        return self.sums.get(name)

    def mean(self, name: str) -> float | None:
        count = self.series.get(name)
        return self.sums[name] / count if count else None

    def first_present(self, names: Sequence[str]) -> str | None:
        return next((n for n in names if n in self.sums or n in self.histograms), None)


_LE = re.compile(r'(?:^|,)\s*le\s*=\s*"([^"]*)"')


def parse_metrics(text: str) -> MetricsSnapshot:
    """Parse Prometheus text (``exposition.samples``, on the event loop); raises
    NotPrometheusText when it is not that format."""
    sums: dict[str, float] = {}
    series: dict[str, int] = {}
    buckets: dict[str, dict[float, float]] = {}
    for sample in samples(text):
        name, labels, value = sample.name, sample.raw_labels, sample.value
        le = _LE.search(labels) if labels and name.endswith("_bucket") else None
        if le is not None:
            bound = _bucket_bound(name, le.group(1))
            by_le = buckets.setdefault(name.removesuffix("_bucket"), {})
            by_le[bound] = by_le.get(bound, 0.0) + value
            continue
        sums[name] = sums.get(name, 0.0) + value
        series[name] = series.get(name, 0) + 1
    if not sums and not buckets:
        raise NotPrometheusText("not Prometheus text: no metrics in the body")
    histograms = {name: tuple(sorted(by_le.items())) for name, by_le in buckets.items()}
    return MetricsSnapshot(sums=sums, series=series, histograms=histograms)


def _bucket_bound(name: str, label: str) -> float:
    try:
        le = float(label)
    except ValueError:
        raise NotPrometheusText(f"{name}: le={label[:20]!r} is not a bucket bound") from None
    if math.isnan(le):
        raise NotPrometheusText(f"{name}: le=NaN is not a bucket bound")
    return le


def info_labels(text: str, name: str) -> dict[str, str] | None:
    """The labels of the first series of the info-style metric ``name`` (vLLM's
    ``cache_config_info``), None when the body has no such series; raises NotPrometheusText."""
    return next((sample.labels() for sample in samples(text) if sample.name == name), None)


def bucket_increase(now: Buckets, before: Buckets) -> Buckets | None:
    """Per-bucket growth between two polls; None after a reset (any bucket went down) or when
    the bucket layout changed, since the two polls then cannot be differenced."""
    before_by_le = dict(before)
    if set(before_by_le) != {le for le, _ in now} or any(
        count < before_by_le[le] for le, count in now
    ):
        return None
    return tuple((le, count - before_by_le[le]) for le, count in now)


BucketRange = tuple[float, float | None]  # (low, high]; high None above the top finite bound


def quantile_bucket(q: float, buckets: Buckets) -> BucketRange | None:
    """The edges of the bucket that holds the q-quantile of cumulative ``buckets``; None with no
    observations. That is all a histogram knows: Prometheus' histogram_quantile interpolates
    inside the bucket, which prints a bucket's midpoint as if it were measured. The first
    bucket's low edge is 0 (latencies are never negative)."""
    if not buckets or not math.isinf(buckets[-1][0]):
        return None
    # Cumulative counts from summed or differenced series can dip by float error; never let them.
    counts: list[float] = []
    for _, count in buckets:
        counts.append(max(count, counts[-1]) if counts else count)
    if counts[-1] <= 0:
        return None
    rank = q * counts[-1]
    b = next(i for i, count in enumerate(counts) if count >= rank)
    low = buckets[b - 1][0] if b > 0 else 0.0
    high = buckets[b][0]
    return low, None if math.isinf(high) else high


@dataclass(frozen=True, slots=True)
class LatencyInterval:
    """One latency histogram over the observations between two polls."""

    count: int | None = None
    mean_s: float | None = None
    p50_low_s: float | None = None
    p50_high_s: float | None = None
    p95_low_s: float | None = None
    p95_high_s: float | None = None


def latency_interval(
    names: Sequence[str], now: MetricsSnapshot, before: MetricsSnapshot | None
) -> LatencyInterval:
    """Count, exact mean and p50 / p95 buckets of the observations since ``before``; empty on
    the first poll, without the histogram, or across a reset (``_count``, ``_sum`` or a bucket
    went down: a difference would be negative, or mix two lives of the server)."""
    name = now.first_present(names)
    if before is None or name is None or name not in now.histograms:
        return LatencyInterval()
    before_buckets = before.histograms.get(name)
    new = None if before_buckets is None else bucket_increase(now.histograms[name], before_buckets)
    count = _difference(f"{name}_count", now, before)
    total_s = _difference(f"{name}_sum", now, before)
    if new is None or count is None or total_s is None or count < 0 or total_s < 0:
        return LatencyInterval()
    return observed_interval(new, count, total_s)


def observed_interval(new: Buckets, count: float, total_s: float) -> LatencyInterval:
    """The figures of ``count`` observations that sum to ``total_s``, with the cumulative bucket
    counts ``new``; a mean and buckets only when there is at least one."""
    if count == 0:
        return LatencyInterval(count=0)
    p50_low_s, p50_high_s = quantile_bucket(0.5, new) or (None, None)
    p95_low_s, p95_high_s = quantile_bucket(0.95, new) or (None, None)
    return LatencyInterval(
        round(count), total_s / count, p50_low_s, p50_high_s, p95_low_s, p95_high_s
    )


def _difference(name: str, now: MetricsSnapshot, before: MetricsSnapshot) -> float | None:
    value, previous = now.total(name), before.total(name)
    return None if value is None or previous is None else value - previous


def _rate(
    name: str, now: MetricsSnapshot, before: MetricsSnapshot | None, dt_s: float | None
) -> float | None:
    if before is None or dt_s is None or dt_s <= 0:
        return None
    increase = counter_increase(now.total(name), before.total(name))
    return None if increase is None else increase / dt_s


def _prefix_hits(
    now: MetricsSnapshot, before: MetricsSnapshot | None
) -> tuple[float | None, float | None]:
    """The prefix cache's hit rate (%) since ``before`` and the prompt tokens it looked up (its
    weight), or the old hit-rate gauge with no weight."""
    if PREFIX_QUERIES in now.sums:
        if before is None:
            return None, None
        queries = counter_increase(now.total(PREFIX_QUERIES), before.total(PREFIX_QUERIES))
        hits = counter_increase(now.total(PREFIX_HITS), before.total(PREFIX_HITS))
        if not queries or hits is None:
            return None, queries
        return 100.0 * hits / queries, queries
    old = now.mean(OLD_PREFIX_HIT_RATE)
    return (None if old is None else 100.0 * old), None


def server_sample(
    endpoint_id: str,
    t: float,
    now: MetricsSnapshot,
    before: MetricsSnapshot | None = None,
    dt_s: float | None = None,
) -> ServerSample:
    """The ServerSample for one poll; rates, hit rate and latencies need ``before`` and ``dt_s``
    (the seconds between the two polls) and are None on the first poll or with nothing new."""
    kv_name = now.first_present(KV_CACHE_USAGE)
    kv_usage = None if kv_name is None else now.mean(kv_name)
    ttft = latency_interval(TTFT_HISTOGRAM, now, before)
    itl = latency_interval(ITL_HISTOGRAM, now, before)
    e2e = latency_interval(E2E_HISTOGRAM, now, before)
    queue = latency_interval(QUEUE_HISTOGRAM, now, before)
    prefill = latency_interval(PREFILL_HISTOGRAM, now, before)
    decode = latency_interval(DECODE_HISTOGRAM, now, before)
    prefix_hit_pct, prefix_queries = _prefix_hits(now, before)
    return ServerSample(
        t=t,
        endpoint_id=endpoint_id,
        requests_running=now.total("vllm:num_requests_running"),
        requests_waiting=now.total("vllm:num_requests_waiting"),
        kv_cache_pct=None if kv_usage is None else 100.0 * kv_usage,
        preemptions_total=now.total("vllm:num_preemptions_total"),
        prefix_cache_hit_pct=prefix_hit_pct,
        prompt_tps=_rate("vllm:prompt_tokens_total", now, before, dt_s),
        generation_tps=_rate("vllm:generation_tokens_total", now, before, dt_s),
        ttft_count=ttft.count,
        ttft_mean_s=ttft.mean_s,
        ttft_p50_low_s=ttft.p50_low_s,
        ttft_p50_high_s=ttft.p50_high_s,
        ttft_p95_low_s=ttft.p95_low_s,
        ttft_p95_high_s=ttft.p95_high_s,
        itl_count=itl.count,
        itl_mean_s=itl.mean_s,
        itl_p50_low_s=itl.p50_low_s,
        itl_p50_high_s=itl.p50_high_s,
        itl_p95_low_s=itl.p95_low_s,
        itl_p95_high_s=itl.p95_high_s,
        e2e_count=e2e.count,
        e2e_mean_s=e2e.mean_s,
        e2e_p50_low_s=e2e.p50_low_s,
        e2e_p50_high_s=e2e.p50_high_s,
        e2e_p95_low_s=e2e.p95_low_s,
        e2e_p95_high_s=e2e.p95_high_s,
        queue_count=queue.count,
        queue_mean_s=queue.mean_s,
        prefill_count=prefill.count,
        prefill_mean_s=prefill.mean_s,
        decode_count=decode.count,
        decode_mean_s=decode.mean_s,
        prefix_cache_queries=prefix_queries,
    )


@dataclass(slots=True)
class ServerMetricsDelta:
    """Keeps one endpoint's previous scrape so each new body becomes a ServerSample."""

    endpoint_id: str
    _before: MetricsSnapshot | None = field(default=None, init=False)
    _before_mono_s: float | None = field(default=None, init=False)

    def update(self, text: str, t: float, mono_s: float) -> ServerSample:
        """Fold in one body scraped at wall time ``t`` and monotonic time ``mono_s``; raises
        NotPrometheusText (keeping the previous scrape) when the body is not metrics."""
        return self.update_snapshot(parse_metrics(text), t, mono_s)

    def update_snapshot(self, now: MetricsSnapshot, t: float, mono_s: float) -> ServerSample:
        dt_s = None if self._before_mono_s is None else mono_s - self._before_mono_s
        sample = server_sample(self.endpoint_id, t, now, self._before, dt_s)
        self._before, self._before_mono_s = now, mono_s
        return sample

    def forget(self) -> None:
        """Drop the previous scrape (after a gap in polling, deltas would span it)."""
        self._before = self._before_mono_s = None


MetricsState = Literal["ok", "no_metrics", "unreachable"]


@dataclass(frozen=True, slots=True)
class MetricsStatus:
    """A change in whether an endpoint's /metrics can be read; sent once per change."""

    t: float
    endpoint_id: str
    state: MetricsState
    message: str  # one line, e.g. "no server metrics (HTTP 404)"


class PrometheusScraper:
    """Polls ``<endpoint url>/metrics`` for each endpoint on a caller-owned aiohttp session."""

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        session: aiohttp.ClientSession,
        *,
        on_status: Callable[[MetricsStatus], None] | None = None,
        timeout_s: float = 2.0,
        secrets: Secrets = NO_SECRETS,
    ) -> None:
        self._endpoints = list(endpoints)
        # Scrubbed from what a server says: the keys sent here and ``secrets`` (the run's).
        self._secrets = secrets | secrets_of(*(api_key(e) for e in self._endpoints))
        self._session = session
        self._on_status = on_status
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._deltas = {e.id: ServerMetricsDelta(e.id) for e in self._endpoints}
        # One poll of an endpoint at a time: each sample's deltas start where the last ended.
        self._polling = {e.id: asyncio.Lock() for e in self._endpoints}
        self._states: dict[str, MetricsState] = {}

    def state(self, endpoint_id: str) -> MetricsState | None:
        """The endpoint's last known metrics state; None before its first poll."""
        return self._states.get(endpoint_id)

    async def scrape_once(self) -> list[ServerSample]:
        """Poll every endpoint once, concurrently; one sample per endpoint that served metrics.

        What goes wrong with one endpoint's poll, even an error no check foresaw, is reported as
        that endpoint's state and never stops the others' samples.
        """
        results = await asyncio.gather(*(self._poll(e) for e in self._endpoints))
        return [sample for sample in results if sample is not None]

    async def scrape_endpoint(self, endpoint_id: str) -> ServerSample | None:
        """Poll one endpoint now (when its phase ends, say); None for one not polled here."""
        endpoint = next((e for e in self._endpoints if e.id == endpoint_id), None)
        return None if endpoint is None else await self._poll(endpoint)

    async def _poll(self, endpoint: Endpoint) -> ServerSample | None:
        async with self._polling[endpoint.id]:
            try:
                return await self._scrape(endpoint)
            except Exception as error:
                self._deltas[endpoint.id].forget()
                message = f"no server metrics (unreadable: {_one_line(error, self._secrets)})"
                self._set_state(time.time(), endpoint.id, "no_metrics", message)
                return None

    async def _scrape(self, endpoint: Endpoint) -> ServerSample | None:
        t, mono_s = time.time(), time.monotonic()
        delta = self._deltas[endpoint.id]
        try:
            async with self._session.get(
                f"{endpoint.url}/metrics",
                headers=auth_headers(endpoint),
                timeout=self._timeout,
                allow_redirects=False,
            ) as response:
                if response.status in (404, 501):
                    delta.forget()
                    message = f"no server metrics (HTTP {response.status})"
                    self._set_state(t, endpoint.id, "no_metrics", message)
                    return None
                if response.status != 200:
                    delta.forget()
                    moved = " (a redirect, not followed)" if 300 <= response.status < 400 else ""
                    message = f"server metrics unreachable: HTTP {response.status}{moved}"
                    self._set_state(t, endpoint.id, "unreachable", message)
                    return None
                data = await read_at_most(response.content, MAX_METRICS_BYTES + 1)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            delta.forget()
            reason = "timed out" if isinstance(exc, TimeoutError) else _one_line(exc, self._secrets)
            self._set_state(t, endpoint.id, "unreachable", f"server metrics unreachable: {reason}")
            return None
        if len(data) > MAX_METRICS_BYTES:
            delta.forget()
            message = f"no server metrics (/metrics body over {MAX_METRICS_BYTES / 2**20:g} MiB)"
            self._set_state(t, endpoint.id, "no_metrics", message)
            return None
        try:
            # On the loop: a vLLM body parses in about a millisecond, where a worker thread
            # would hold the GIL between the loop's reads (see parse_metrics). UTF-8 by the
            # exposition format's spec: a charset a server names is not trusted.
            snapshot = parse_metrics(data.decode("utf-8", errors="replace"))
        except NotPrometheusText as exc:
            delta.forget()
            self._set_state(t, endpoint.id, "no_metrics", f"no server metrics ({exc})")
            return None
        self._set_state(t, endpoint.id, "ok", "server metrics available")
        return delta.update_snapshot(snapshot, t, mono_s)

    def _set_state(self, t: float, endpoint_id: str, state: MetricsState, message: str) -> None:
        if self._states.get(endpoint_id) == state:
            return
        first = endpoint_id not in self._states
        self._states[endpoint_id] = state
        # A parser error quotes the body: a key it echoes, or an escape, stays out of the log.
        message = outside_line(message, STATUS_MESSAGE_CHARS, self._secrets)
        if self._on_status is not None and not (first and state == "ok"):
            self._on_status(
                MetricsStatus(t=t, endpoint_id=endpoint_id, state=state, message=message)
            )


def api_key(endpoint: Endpoint) -> str | None:
    return read_key(endpoint.api_key_env)


async def read_at_most(content: aiohttp.StreamReader, limit: int) -> bytes:
    """The body up to ``limit`` bytes (all of it when shorter)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in content.iter_any():
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(chunks)


def auth_headers(endpoint: Endpoint) -> dict[str, str]:
    key = api_key(endpoint)
    return {"Authorization": f"Bearer {key}"} if key else {}


def _one_line(exc: BaseException, secrets: Secrets) -> str:
    return outside_line(str(exc), STATUS_MESSAGE_CHARS, secrets) or type(exc).__name__


async def scrape_loop(
    scraper: PrometheusScraper,
    *,
    interval_s: float = 1.0,
    stop: asyncio.Event | None = None,
    final_poll: bool = False,
) -> AsyncIterator[ServerSample]:
    """Yield ServerSample events, polling every ``interval_s`` on a fixed schedule (a slow poll
    skips the ticks it overran) until ``stop`` is set or the consumer stops iterating; with
    ``final_poll``, once more when ``stop`` is set, so that what the servers observed since
    the last tick (a run's last requests) is not lost."""
    stop = stop or asyncio.Event()
    next_tick = time.monotonic()
    while not stop.is_set():
        for sample in await scraper.scrape_once():
            yield sample
        now = time.monotonic()
        next_tick += interval_s
        if now > next_tick:
            next_tick += interval_s * math.ceil((now - next_tick) / interval_s)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=max(0.0, next_tick - now))
    if final_poll:
        for sample in await scraper.scrape_once():
            yield sample

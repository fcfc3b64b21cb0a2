"""PrometheusScraper and scrape_loop against aiohttp servers started in the test."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import aiohttp
import pytest
from aiohttp import web

from nvfp4_tui.telemetry.prometheus import MetricsStatus, PrometheusScraper, scrape_loop
from tests.telemetry.fakes import EngineState, endpoint, vllm_metrics_text


class ChangingMetrics:
    """A /metrics whose counters grow by a fixed step on every request it serves."""

    def __init__(self) -> None:
        self.polls = 0

    async def handle(self, request: web.Request) -> web.Response:
        n = self.polls
        self.polls += 1
        state = EngineState(
            running=2,
            waiting=n,
            kv_usage=0.5,
            generation_tokens=1000 + 300 * n,
            prompt_tokens=50 * n,
            # Each poll adds 4 TTFT observations: 1 <= 0.1, 3 in (0.1, 0.25], 0.6 s in all.
            ttft=(n, 4 * n, 4 * n, 4 * n),
            itl=(0, 0, 0, 0),
            e2e=(0, 0, 0, 0),
            ttft_sum_s=0.6 * n,
        )
        return web.Response(
            text=vllm_metrics_text([state]), content_type="text/plain", charset="utf-8"
        )


@asynccontextmanager
async def serve(app: web.Application) -> AsyncIterator[str]:
    """Run ``app`` on 127.0.0.1 at an OS-chosen port; yields its base URL."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def html_page(request: web.Request) -> web.Response:
    return web.Response(
        text="<html><body>metrics are elsewhere</body></html>", content_type="text/html"
    )


@pytest.fixture
async def servers() -> AsyncIterator[tuple[dict[str, str], ChangingMetrics]]:
    """A server with changing metrics, one without /metrics (404), one answering HTML."""
    metrics = ChangingMetrics()
    good, plain, html = web.Application(), web.Application(), web.Application()
    good.router.add_get("/metrics", metrics.handle)
    html.router.add_get("/metrics", html_page)
    async with AsyncExitStack() as stack:
        urls = {
            name: await stack.enter_async_context(serve(app))
            for name, app in (("good", good), ("plain", plain), ("html", html))
        }
        yield urls, metrics


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_scrape_loop_against_live_servers(
    servers: tuple[dict[str, str], ChangingMetrics],
) -> None:
    urls, metrics = servers
    endpoints = [
        endpoint("good", urls["good"]),
        endpoint("plain", urls["plain"]),
        endpoint("html", urls["html"]),
        endpoint("down", f"http://127.0.0.1:{closed_port()}"),
    ]
    statuses: list[MetricsStatus] = []
    samples = []
    async with aiohttp.ClientSession() as session:
        scraper = PrometheusScraper(endpoints, session, on_status=statuses.append, timeout_s=2.0)
        stop = asyncio.Event()

        async def collect() -> None:
            async for sample in scrape_loop(scraper, interval_s=0.1, stop=stop):
                samples.append(sample)
                if len(samples) == 4:
                    stop.set()

        await asyncio.wait_for(collect(), timeout=20)
        assert scraper.state("good") == "ok"
        assert scraper.state("plain") == "no_metrics"
        assert scraper.state("down") == "unreachable"

    assert {s.endpoint_id for s in samples} == {"good"}
    assert metrics.polls == 4
    first, *later = samples
    assert first.generation_tps is None and first.ttft_count is None
    assert first.kv_cache_pct == pytest.approx(50.0)
    for i, sample in enumerate(later, start=1):
        assert sample.requests_waiting == i
        # The generation counter grows 300 per poll and the prompt one 50: their rates share dt.
        assert sample.generation_tps is not None and sample.prompt_tps is not None
        assert sample.generation_tps / sample.prompt_tps == pytest.approx(6.0)
        # New TTFT buckets each poll: (1, 4, 4, 4), 0.6 s over 4; p50 and p95 in (0.1, 0.25].
        assert (sample.ttft_count, sample.ttft_mean_s) == (4, pytest.approx(0.15))
        assert (sample.ttft_p50_low_s, sample.ttft_p50_high_s) == (0.1, 0.25)
        assert (sample.ttft_p95_low_s, sample.ttft_p95_high_s) == (0.1, 0.25)
        assert sample.itl_count == 0 and sample.itl_mean_s is None  # nothing new
    # Each endpoint without metrics is reported once, however many polls saw it so.
    by_endpoint = {s.endpoint_id: s for s in statuses}
    assert sorted(s.endpoint_id for s in statuses) == ["down", "html", "plain"]
    assert by_endpoint["plain"].state == "no_metrics"
    assert by_endpoint["plain"].message == "no server metrics (HTTP 404)"
    assert by_endpoint["html"].state == "no_metrics"
    assert by_endpoint["html"].message.startswith("no server metrics (not Prometheus text")
    assert by_endpoint["down"].state == "unreachable"
    assert all("\n" not in s.message for s in statuses)


async def test_recovery_is_reported_and_deltas_restart() -> None:
    served = {"status": 503}
    metrics = ChangingMetrics()

    async def handle(request: web.Request) -> web.Response:
        if served["status"] != 200:
            return web.Response(status=served["status"], text="loading")
        return await metrics.handle(request)

    app = web.Application()
    app.router.add_get("/metrics", handle)
    statuses: list[MetricsStatus] = []
    async with serve(app) as url, aiohttp.ClientSession() as session:
        scraper = PrometheusScraper([endpoint("ep", url)], session, on_status=statuses.append)
        assert await scraper.scrape_once() == []
        served["status"] = 200
        (first,) = await scraper.scrape_once()
        (second,) = await scraper.scrape_once()
    assert [s.state for s in statuses] == ["unreachable", "ok"]
    assert statuses[0].message == "server metrics unreachable: HTTP 503"
    assert first.generation_tps is None
    assert second.generation_tps is not None and second.generation_tps > 0


async def test_a_body_past_the_size_limit_is_not_read_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("nvfp4_tui.telemetry.prometheus.MAX_METRICS_BYTES", 64 << 10)
    big = "# HELP filler padding\n" + "x 1\n" * (40 << 10)  # 160 KiB of valid text

    async def handle(request: web.Request) -> web.Response:
        return web.Response(text=big, content_type="text/plain")

    app = web.Application()
    app.router.add_get("/metrics", handle)
    statuses: list[MetricsStatus] = []
    async with serve(app) as url, aiohttp.ClientSession() as session:
        scraper = PrometheusScraper([endpoint("ep", url)], session, on_status=statuses.append)
        assert await scraper.scrape_once() == []
    assert [(s.state, s.message) for s in statuses] == [
        ("no_metrics", "no server metrics (/metrics body over 0.0625 MiB)")
    ]


async def test_a_large_body_in_many_chunks_is_read_to_its_end() -> None:
    state = EngineState(running=2, waiting=1, kv_usage=0.5)
    padding = "# a comment line that pads the body\n" * 30_000  # ~1 MiB before the metrics
    body = padding + vllm_metrics_text([state])

    async def handle(request: web.Request) -> web.Response:
        return web.Response(text=body, content_type="text/plain")

    app = web.Application()
    app.router.add_get("/metrics", handle)
    async with serve(app) as url, aiohttp.ClientSession() as session:
        (sample,) = await PrometheusScraper([endpoint("ep", url)], session).scrape_once()
    assert sample.kv_cache_pct == pytest.approx(50.0)

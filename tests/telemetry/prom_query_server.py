"""A small Prometheus query API on 127.0.0.1: ``GET /api/v1/query`` answered in Prometheus' own
JSON shapes, driven by the query string.

It knows the one selector form the query source sends, ``{__name__=~"A|B|..."}``, and answers
the series it holds whose name the alternation matches, as an instant vector. Any other query is
a ``bad_data`` error (HTTP 400), as Prometheus answers a query it cannot parse; ``fail_with``
makes every query fail with a given HTTP status, errorType and message (503 ``unavailable``,
422 ``execution`` and so on).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aiohttp import web

_NAME_SELECTOR = re.compile(r'^\{__name__=~"([^"]*)"\}$')


@dataclass
class PromSeries:
    name: str
    labels: dict[str, str]
    value: str  # Prometheus sends sample values as strings


@dataclass
class PromQueryServer:
    series: list[PromSeries] = field(default_factory=list)
    fail_with: tuple[int, str, str] | None = None  # (HTTP status, errorType, error)
    queries: list[str] = field(default_factory=list)
    eval_time: float = 1_700_000_000.0

    async def query(self, request: web.Request) -> web.Response:
        promql = request.query.get("query", "")
        self.queries.append(promql)
        if self.fail_with is not None:
            status, kind, error = self.fail_with
            return _error(status, kind, error)
        selector = _NAME_SELECTOR.match(promql)
        if selector is None:
            return _error(400, "bad_data", f'invalid parameter "query": parse error: {promql!r}')
        wanted = re.compile(f"^(?:{selector.group(1)})$")
        result = [
            {"metric": {"__name__": s.name, **s.labels}, "value": [self.eval_time, s.value]}
            for s in self.series
            if wanted.match(s.name)
        ]
        return web.json_response(
            {"status": "success", "data": {"resultType": "vector", "result": result}}
        )

    async def start(self) -> tuple[web.AppRunner, str]:
        app = web.Application()
        app.router.add_get("/api/v1/query", self.query)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        return runner, f"http://127.0.0.1:{port}"


def _error(status: int, kind: str, error: str) -> web.Response:
    return web.json_response({"status": "error", "errorType": kind, "error": error}, status=status)


def dcgm_series(node: str, gpu: int, uuid: str, **values: float) -> list[PromSeries]:
    """A card's dcgm-exporter series as Prometheus holds them (exporter and target labels)."""
    labels = {
        "Hostname": node,
        "gpu": str(gpu),
        "UUID": uuid,
        "modelName": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        "instance": f"{node}:9400",
        "job": "dcgm",
    }
    return [
        PromSeries(f"DCGM_FI_DEV_{name}", dict(labels), repr(value))
        for name, value in values.items()
    ]


def vllm_series(instance: str, **values: float) -> list[PromSeries]:
    labels = {"instance": instance, "job": "vllm", "model_name": "current", "engine": "0"}
    return [PromSeries(f"vllm:{name}", dict(labels), repr(value)) for name, value in values.items()]

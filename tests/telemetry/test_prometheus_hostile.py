"""Prometheus servers that answer badly on purpose: a reply nested past the interpreter's
recursion limit, a ``gpu`` label that ``str.isdigit`` takes for a digit ("²"), a redirect to
another server. Each is one line naming the server; the plan goes on without its indices."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.telemetry.prometheus_query import (
    DCGM_QUERY,
    PrometheusQuerySource,
    PrometheusUnavailable,
)
from nvfp4_tui.telemetry.sampler import plan_gpu_telemetry

Reply = tuple[int, bytes, dict[str, str]]
UUID = "GPU-5d1f0c7e-0000-4000-8000-00000000000a"
PROFILE = """
[run]
name = "hostile-prom"
suites = ["english"]

[[endpoint]]
id = "a"
url = "http://127.0.0.1:9"
node = "n1"
model = "current"
gpu = "{uuid}"
telemetry = "prometheus:{prom}"
"""


@contextmanager
def prom_server(answer: Callable[[], Reply]) -> Iterator[tuple[str, list[str]]]:
    """Answers every request with ``answer()``; yields the base URL and the paths asked for."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            status, body, headers = answer()
            self.send_response(status)
            for name, value in {"Content-Length": str(len(body)), **headers}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _vector(labels: dict[str, str]) -> bytes:
    result = [{"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", **labels}, "value": [0, "5"]}]
    return json.dumps(
        {"status": "success", "data": {"resultType": "vector", "result": result}}
    ).encode()


DEEP: Reply = (200, b"[" * 300_000 + b"]" * 300_000, {})
SUPERSCRIPT_GPU: Reply = (200, _vector({"Hostname": "n1", "gpu": "\u00b2", "UUID": UUID}), {})


@pytest.mark.parametrize(
    ("reply", "reason"),
    [(DEEP, "nested too deeply"), (SUPERSCRIPT_GPU, "no DCGM series")],
    ids=["deep", "superscript-gpu"],
)
def test_a_hostile_reply_leaves_the_plan_going_with_a_reason(
    tmp_path: Path, reply: Reply, reason: str
) -> None:
    with prom_server(lambda: reply) as (url, asked):
        path = tmp_path / "p.toml"
        path.write_text(PROFILE.format(uuid=UUID, prom=url))
        plan = plan_gpu_telemetry(load_profile(path))
        (source,) = plan.sources  # still sampled: the server may answer well later
        assert isinstance(source, PrometheusQuerySource)
        assert plan.endpoint_gpus == {}
        (message,) = plan.messages
        assert reason in message and "\n" not in message
        assert len(asked) == 1
        # Sampling the same reply is no sample, or one line, never a crash of the thread.
        try:
            assert source.sample(0.0) == []
        except PrometheusUnavailable as exc:
            assert str(exc).startswith(f"Prometheus {url}: ")


def test_a_redirect_is_not_followed_and_names_its_target(tmp_path: Path) -> None:
    elsewhere = _vector({"Hostname": "n1", "gpu": "3", "UUID": UUID})
    with prom_server(lambda: (200, elsewhere, {})) as (other, other_asked):
        target = f"{other}/api/v1/query?x=1\x1b]0;title\x07"
        moved: Reply = (302, b"", {"Location": target})
        with prom_server(lambda: moved) as (url, _):
            source = PrometheusQuerySource(url, [])
            with pytest.raises(PrometheusUnavailable) as raised:
                source.query(DCGM_QUERY)
    assert str(raised.value) == (
        f"Prometheus {url}: HTTP 302: redirect to {other}/api/v1/query?x=1 not followed "
        "(redirects never are)"
    )
    assert other_asked == []  # its series (GPU 3) were never read


def test_any_failure_of_one_server_is_a_message_for_its_endpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: PrometheusQuerySource) -> dict[str, int]:
        raise RuntimeError("no check foresaw this\x1b[2J\nsecond line")

    monkeypatch.setattr(PrometheusQuerySource, "gpu_indices", broken)
    path = tmp_path / "p.toml"
    path.write_text(PROFILE.format(uuid=UUID, prom="http://127.0.0.1:9"))
    plan = plan_gpu_telemetry(load_profile(path))
    assert len(plan.sources) == 1
    assert plan.messages == [
        "PrometheusQuerySource('http://127.0.0.1:9'): GPU indices not read: "
        "no check foresaw this second line"
    ]

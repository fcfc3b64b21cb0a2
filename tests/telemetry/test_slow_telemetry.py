"""A telemetry server that answers a byte at a time (issue 27, item 6): its reply has a deadline
as a whole, it delays no other source's samples, and a call stuck past every bound is named."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from nvfp4_tui.core.events import GpuSample
from nvfp4_tui.telemetry.dcgm import DcgmSource, DcgmUnavailable
from nvfp4_tui.telemetry.prometheus_query import PrometheusQuerySource, PrometheusUnavailable
from nvfp4_tui.telemetry.sampler import GpuSampler
from tests.telemetry.fakes import dcgm_text, http_server

DRIP_INTERVAL_S = 0.2  # under the per-read timeout: urllib's timeout alone never trips
BODY = dcgm_text().encode()
WHOLE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(
    BODY
)
WAIT_S = 20.0  # the bound on every wait below; none is a speed assertion


@contextmanager
def dripping_server(head: bytes, drip: bytes) -> Iterator[str]:
    """A TCP server on 127.0.0.1 that answers each connection with ``head`` at once, then
    ``drip`` one byte every DRIP_INTERVAL_S until it is done or the server stops."""
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    handlers: list[threading.Thread] = []

    def answer(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(1.0)
            try:
                conn.recv(65536)
                conn.sendall(head)
                for byte in drip:
                    if stop.wait(DRIP_INTERVAL_S):
                        return
                    conn.sendall(bytes([byte]))
            except OSError:
                return  # the client gave up on us

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            handler = threading.Thread(target=answer, args=(conn,), daemon=True)
            handlers.append(handler)
            handler.start()

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        acceptor.join(5)
        for handler in handlers:
            handler.join(5)
        listener.close()


class Collector:
    def __init__(self) -> None:
        self.samples: list[GpuSample] = []
        self.errors: list[str] = []
        self.named = threading.Event()

    def on_samples(self, samples: list) -> None:
        self.samples.extend(samples)

    def more_samples(self, n: int) -> bool:
        """Whether ``n`` more samples arrive within WAIT_S."""
        wanted = len(self.samples) + n
        for _ in range(int(WAIT_S / 0.05)):
            if len(self.samples) >= wanted:
                return True
            threading.Event().wait(0.05)
        return False

    def on_error(self, message: str) -> None:
        self.errors.append(message)
        self.named.set()


def test_a_dripping_exporter_fails_at_its_deadline_not_at_the_servers_pace() -> None:
    with dripping_server(WHOLE_HEAD, BODY) as base:
        source = DcgmSource(f"{base}/metrics", timeout_s=2.0, deadline_s=0.5)
        with pytest.raises(DcgmUnavailable, match=r"reply not whole within 0\.5 s \(\d+ bytes"):
            source.sample(0.0)


def test_a_dripping_prometheus_fails_at_its_deadline() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n"
    with dripping_server(head, b" " * 4096) as base:
        source = PrometheusQuerySource(base, [], timeout_s=2.0, deadline_s=0.5)
        with pytest.raises(PrometheusUnavailable, match=r"reply not whole within 0\.5 s"):
            source.query("up")


def _named_beside_a_healthy_one(
    slow: DcgmSource, healthy: str, got: Collector, **options: float
) -> GpuSampler:
    """A started sampler of ``slow`` and the healthy exporter at ``healthy``, once ``slow`` is
    named and the healthy one has gone on giving samples while it drips; the caller stops it."""
    sampler = GpuSampler(
        [slow, DcgmSource(f"{healthy}/metrics")],
        got.on_samples,
        rate_hz=20,
        on_error=got.on_error,
        **options,
    )
    sampler.start()
    try:
        assert got.named.wait(WAIT_S)
        assert got.more_samples(40)
    except BaseException:
        sampler.stop(timeout_s=5)
        raise
    return sampler


def test_a_dripping_neighbour_leaves_a_healthy_exporters_samples_alone() -> None:
    # The attack as reported: one source dripping, a healthy one beside it that got no samples.
    routes = {"/metrics": lambda: (200, dcgm_text())}
    got = Collector()
    with dripping_server(WHOLE_HEAD, BODY) as drip, http_server(routes) as healthy:
        slow = DcgmSource(f"{drip}/metrics", timeout_s=2.0, deadline_s=0.5)
        sampler = _named_beside_a_healthy_one(slow, healthy, got, retry_interval_s=0.2)
        assert sampler.stop(timeout_s=5)
    # Named once, though retried every 0.2 s all along.
    assert len(got.errors) == 1
    assert got.errors[0].startswith(f"DCGM exporter {drip}/metrics: reply not whole within 0.5 s")


def test_a_source_stuck_past_every_bound_is_named_and_stalls_nobody() -> None:
    # Headers a byte at a time: http.client reads them before any deadline of ours can look,
    # so only the sampler's own watch sees the call is stuck.
    routes = {"/metrics": lambda: (200, dcgm_text())}
    got = Collector()
    with (
        dripping_server(b"HTTP/1.1 200 OK\r\n", b"X-Slow: " + b"a" * 4096) as drip,
        http_server(routes) as healthy,
    ):
        stuck = DcgmSource(f"{drip}/metrics", timeout_s=2.0)
        sampler = _named_beside_a_healthy_one(stuck, healthy, got, slow_call_s=0.5)
        # Its call is still in the server's hands: stop cannot end that thread yet.
        assert not sampler.stop(timeout_s=0.1)
    # The server gone, the stuck call fails and its thread closes the source and ends.
    assert sampler.stop(timeout_s=5)
    assert got.errors[0] == (
        f"DcgmSource({drip + '/metrics'!r}): no answer after 0.5 s; its GPUs have no new samples "
        "until it answers (the other sources go on)"
    )

"""What listens binds loopback; https endpoints are verified unless a profile says loudly not to."""

from __future__ import annotations

import asyncio
import re
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

import pytest

from nvfp4_tui.bench.client import ChatRequest, EndpointClient, Timeouts
from nvfp4_tui.cli import main as cli_main
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.store.reader import open_snapshot
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.hostile_servers import serve
from tests.reliability.runs import hostile_endpoint_toml, rows_of, write_run_profile

HELLO = ChatRequest(messages=({"role": "user", "content": "hi"},), max_tokens=8)
LOOPBACK_HEX = "0100007F"  # 127.0.0.1 as /proc/net/tcp writes it
TCP_LISTEN = "0A"


def _listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket listening on ``port``, from /proc/net/tcp and tcp6."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, _, port_hex = local.rpartition(":")
            if state == TCP_LISTEN and int(port_hex, 16) == port:
                found.add(address)
    return found


async def test_the_in_process_simulator_listens_on_loopback_only(tmp_path: Path) -> None:
    path = write_run_profile(tmp_path, [endpoint_toml(f"e{i}", i) for i in range(3)], requests=1)
    async with SimFleet(load_profile(path).endpoints) as fleet:
        for url in fleet.urls.values():
            assert urlparse(url).hostname == "127.0.0.1"
            if sys.platform == "linux":
                assert _listening_addresses(urlparse(url).port or 0) == {LOOPBACK_HEX}


def test_the_simulator_process_listens_on_loopback_only(tmp_path: Path) -> None:
    """What `nvfp4-tui sim` and `demo` start: ports from the OS, every one on 127.0.0.1."""
    path = write_run_profile(tmp_path, [endpoint_toml(f"e{i}", i) for i in range(2)], requests=1)
    with SimProcess(path, port_base=0) as sim:
        for url in sim.urls.values():
            assert urlparse(url).hostname == "127.0.0.1"
            if sys.platform == "linux":
                assert _listening_addresses(urlparse(url).port or 0) == {LOOPBACK_HEX}


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs openssl to make a self-signed certificate")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    key_options = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    subject = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1"]
    subprocess.run(
        [openssl, "req", "-x509", *key_options, "-keyout", str(key), "-out", str(cert), *subject],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return cert, key


@contextmanager
def https_server(certificate: tuple[Path, Path]) -> Iterator[str]:
    """A well-behaved OpenAI-style server over https with a self-signed certificate."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    ready: list[str] = []
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def main() -> None:
        async with serve(["good"], ssl_context=context) as urls:
            ready.append(urls["good"])
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    try:
        while not ready:
            assert thread.is_alive(), "the https server did not start"
            threading.Event().wait(0.02)
        yield ready[0]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=10)


async def test_a_self_signed_certificate_is_refused_by_default(
    certificate: tuple[Path, Path],
) -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    async with serve(["good"], ssl_context=context) as urls:
        url = urls["good"]
        async with EndpointClient(url, "current", concurrency=1, timeouts=Timeouts()) as client:
            measurement = await client.chat(HELLO)
            healthy, reason = await client.health()
        async with EndpointClient(
            url, "current", concurrency=1, timeouts=Timeouts(), verify_tls=False
        ) as insecure:
            accepted = await insecure.chat(HELLO)
    assert measurement.status == "error" and measurement.error_kind == "connect"
    assert "TLS certificate" in (measurement.error_message or "")
    assert "verify_tls = false" in (measurement.error_message or "")
    assert not healthy and reason.startswith("connect: TLS certificate")
    assert accepted.status == "ok" and accepted.tokens_out


def test_verify_tls_false_works_and_says_so_loudly(
    tmp_path: Path, certificate: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    with https_server(certificate) as url:
        endpoints = [
            hostile_endpoint_toml("checked", url),
            hostile_endpoint_toml(
                "unchecked", url.replace("127.0.0.1", "localhost"), verify_tls=False
            ),
        ]
        path = write_run_profile(tmp_path, endpoints, requests=2, timeout_s=5.0)
        code = cli_main(["run", str(path), "--headless", "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    warnings = [line for line in captured.err.splitlines() if "verification is OFF" in line]
    assert len(warnings) == 1 and "unchecked" in warnings[0], captured.err
    assert re.search(r"^checked +down: connect: TLS certificate", captured.out, re.M), captured.out
    snapshot_dir = next((tmp_path / "out").iterdir())
    snapshot = open_snapshot(snapshot_dir)
    rows = rows_of(snapshot)
    # Down from its health check: its first planned request tried once, refused by TLS.
    assert rows["checked"].get_column("error_kind").to_list() == ["connect"]
    assert set(rows["unchecked"].get_column("status")) != {"error"}
    endpoints_run = {e["id"]: e for e in snapshot.manifest["profile"]["endpoints"]}
    assert endpoints_run["unchecked"]["verify_tls"] is False  # the snapshot says it, too

"""`serve replay` in a real browser: headless Chromium through Playwright.

The page's terminal draws on a canvas, so the test reads what the app sent the page over the
websocket (the terminal output itself) and keeps screenshots of what the browser drew.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "snapshots" / "sample-demo"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WAIT_S = 60.0

pytestmark = pytest.mark.slow

# Off CI a machine without a browser skips; CI installs both and must run the test.
if not os.environ.get("CI"):
    if CHROMIUM is None:
        pytest.skip("no chromium here (.ci/run installs it)", allow_module_level=True)
    pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_until_serving(url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        assert server.poll() is None, "serve exited before it answered"
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"serve did not answer on {url} in {WAIT_S:.0f} s")


@pytest.fixture
def served_replay() -> Iterator[str]:
    port = _free_port()
    command = [sys.executable, "-m", "nvfp4_tui.cli", "serve", "--port", str(port)]
    server = subprocess.Popen(
        [*command, "replay", str(SAMPLE)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its app processes are stopped with it
    )
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait_until_serving(url, server)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)


def test_the_grid_renders_and_a_key_opens_the_leaderboard(
    served_replay: str, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None, "chromium is not installed (Debian: apt-get install chromium)"
    shots = Path(os.environ.get("NVFP4_TUI_TEST_ARTIFACTS", tmp_path)) / "serve"
    shots.mkdir(parents=True, exist_ok=True)
    received: list[str] = []

    def on_frame(frame: str | bytes) -> None:
        received.append(frame if isinstance(frame, str) else frame.decode("utf-8", "replace"))

    def wait_for_text(text: str, since: int) -> bool:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            if text in "".join(received[since:]):
                return True
            page.wait_for_timeout(200)
        return False

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.on("websocket", lambda ws: ws.on("framereceived", on_frame))
            page.goto(served_replay)
            assert wait_for_text("Qwen3.6-35B-A3B", 0), "the grid's first pane never arrived"
            assert wait_for_text("Jiunsong SuperGemma4-26B", 0), (
                "the grid's last pane never arrived"
            )
            page.screenshot(path=shots / "grid.png")

            before = len(received)
            page.click("#terminal")  # the terminal takes keys once it has the focus
            page.keyboard.press("l")
            assert wait_for_text("Leaderboard", before), "`l` did not open the leaderboard"
            page.wait_for_timeout(500)  # let the canvas draw what arrived
            page.screenshot(path=shots / "leaderboard.png")
        finally:
            browser.close()
    for name in ("grid.png", "leaderboard.png"):
        assert (shots / name).stat().st_size > 10_000  # a drawn page, not a blank one
        record_property(f"screenshot_{name}", str(shots / name))
    print(f"screenshots: {shots}")


def test_another_sites_page_gets_no_session(served_replay: str) -> None:
    import asyncio

    import aiohttp

    async def connect(origin: str) -> int:
        async with aiohttp.ClientSession() as session:
            try:
                async with session.ws_connect(f"{served_replay}ws", origin=origin):
                    return 101
            except aiohttp.WSServerHandshakeError as refused:
                return refused.status

    assert asyncio.run(connect("http://evil.example")) == 403

"""Isolation: a healthy endpoint's TTFT alone, beside a flooding neighbour, beside a gzip bomb.

Every endpoint of a run is read on one event loop, so an endpoint that makes the client work
(thousands of tiny chunks a read, a compressed stream of endless keep-alive lines) would delay the
reading, and so the timing, of every other. The healthy endpoint is a simulated one (TTFT 50 ms,
in its own process); the hostile ones run in a child process at the lowest CPU priority, as a
server on another machine would cost this one nothing. Each case runs both clients side by side
on one loop, as the runner does, for the same window; the healthy endpoint's TTFT p50 must stay
within 10 ms of its value alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import harness
from aiohttp import web
from harness import Target, fmt, median

from nvfp4_tui.bench.client import ChatRequest, EndpointClient, Timeouts
from nvfp4_tui.bench.loop_lag import LoopLagMonitor
from nvfp4_tui.core.stats import percentile
from nvfp4_tui.sim.process import SimProcess

NAME = "neighbour"
MODEL = "current"
HEALTHY_SIM = {
    "decode_tps": 200.0,
    "ttft_s": 0.05,
    "prefill_tps": 1e12,
    "vram_used_mib": 1000.0,
    "concurrency_curve": [[1, 1.0], [4096, 1.0]],
    "tools": False,
}
TARGET_DELTA_MS = 10.0
READY_TIMEOUT_S = 20.0
# The flood: content chunks of one character, written as fast as the socket takes them.
FLOOD_CHUNK = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
FLOOD_BLOB = FLOOD_CHUNK * (64 * 1024 // len(FLOOD_CHUNK))
# The bomb: keep-alive comment lines, 16 MiB of them compressed to some 16 KiB per block; a full
# flush ends each block on a byte boundary with the history reset, so one block repeats forever.
KEEP_ALIVE_LINES = 16 * 1024 * 1024 // 13
HOSTILE_SEND_S = 30.0  # how long a hostile reply goes on at most (the client hangs up first)


@dataclass(frozen=True)
class Settings:
    window_s: float  # each case's measured time
    settle_s: float  # before it: connections opened, the first waves out of the way
    healthy_streams: int
    neighbour_streams: int
    max_tokens: int
    neighbour_timeout_s: float  # the neighbour's requests' total timeout


QUICK = Settings(
    window_s=4.0,
    settle_s=1.0,
    healthy_streams=2,
    neighbour_streams=4,
    max_tokens=8,
    neighbour_timeout_s=3.0,
)
FULL = Settings(
    window_s=15.0,
    settle_s=2.0,
    healthy_streams=2,
    neighbour_streams=8,
    max_tokens=16,
    neighbour_timeout_s=5.0,
)
CASES = ("alone", "flood", "gzip_bomb")


# ---- the hostile servers (a child process: python neighbour.py --serve) ----------------------


def _bomb_blocks() -> tuple[bytes, bytes]:
    """The gzip stream's head (header and first block) and the block that repeats after it."""
    block = b": keep-alive\n" * KEEP_ALIVE_LINES
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip wrapper
    head = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    return head, again


async def _endless(request: web.Request, headers: dict[str, str], first: bytes, then: bytes):
    await request.read()
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **headers})
    await response.prepare(request)
    deadline = time.monotonic() + HOSTILE_SEND_S
    with contextlib.suppress(ConnectionError):  # the client hung up, as it should
        await response.write(first)
        while time.monotonic() < deadline:
            await response.write(then)
    return response


def _hostile_app(name: str) -> web.Application:
    head, again = _bomb_blocks()

    async def flood(request: web.Request) -> web.StreamResponse:
        return await _endless(request, {}, FLOOD_BLOB, FLOOD_BLOB)

    async def gzip_bomb(request: web.Request) -> web.StreamResponse:
        return await _endless(request, {"Content-Encoding": "gzip"}, head, again)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", {"flood": flood, "gzip_bomb": gzip_bomb}[name])
    return app


async def _serve_hostile() -> None:
    os.nice(19)  # its CPU is not this machine's in a real fleet
    runners = []
    for name in CASES[1:]:
        runner = web.AppRunner(_hostile_app(name), handler_cancellation=True, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        runners.append(runner)
        print(json.dumps({name: f"http://127.0.0.1:{runner.addresses[0][1]}"}), flush=True)
    print(json.dumps({"ready": True}), flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin
    for runner in runners:
        await runner.cleanup()


@contextlib.contextmanager
def hostile_servers():
    """The hostile servers in a child process; yields name -> base URL."""
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    urls: dict[str, str] = {}
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError("the hostile servers did not start")
            record = json.loads(line)
            if record.pop("ready", False):
                break
            urls.update(record)
        yield urls
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ---- one case: the healthy endpoint's client beside a neighbour's, on one loop ---------------


def _request(worker: int, index: int, max_tokens: int) -> ChatRequest:
    # A new prompt each time: the simulator's answers then cost it the same every request.
    text = f"Worker {worker}, request {index}: say something about isolation."
    return ChatRequest(({"role": "user", "content": text},), max_tokens=max_tokens)


async def _case(healthy_url: str, neighbour_url: str | None, settings: Settings) -> dict[str, Any]:
    ttfts_ms: list[float] = []
    errors: Counter[str] = Counter()
    neighbour_kinds: Counter[str] = Counter()
    lag = LoopLagMonitor()
    healthy = EndpointClient(
        healthy_url, MODEL, concurrency=settings.healthy_streams, timeouts=Timeouts(total_s=30)
    )
    neighbour = (
        None
        if neighbour_url is None
        else EndpointClient(
            neighbour_url,
            MODEL,
            concurrency=settings.neighbour_streams,
            timeouts=Timeouts(total_s=settings.neighbour_timeout_s),
        )
    )
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(healthy)
        if neighbour is not None:
            await stack.enter_async_context(neighbour)
        started = time.perf_counter()
        window_start = started + settings.settle_s
        deadline = window_start + settings.window_s

        async def healthy_worker(number: int) -> None:
            for index in itertools.count():
                if time.perf_counter() >= deadline:
                    return
                sent = time.perf_counter()
                m = await healthy.chat(_request(number, index, settings.max_tokens))
                if sent < window_start:
                    continue
                if m.status == "error" or m.ttft_s is None:
                    errors[m.error_kind or "no ttft"] += 1
                else:
                    ttfts_ms.append(1000 * m.ttft_s)

        async def neighbour_worker(number: int) -> None:
            assert neighbour is not None
            for index in itertools.count():
                if time.perf_counter() >= deadline:
                    return
                m = await neighbour.chat(_request(number, index, settings.max_tokens))
                neighbour_kinds[m.error_kind or m.status] += 1

        probe = asyncio.create_task(lag.run())
        cpu = time.process_time()
        workers = [healthy_worker(n) for n in range(settings.healthy_streams)]
        if neighbour is not None:
            workers += [neighbour_worker(n) for n in range(settings.neighbour_streams)]
        with lag.window() as lags:
            await asyncio.gather(*workers)
        probe.cancel()
        wall_s = time.perf_counter() - started
        cpu_s = time.process_time() - cpu
    return {
        "healthy_requests": len(ttfts_ms),
        "healthy_errors": dict(errors),
        "ttft_ms_p50": median(ttfts_ms),
        "ttft_ms_p95": percentile(ttfts_ms, 95),
        "loop_lag_ms_p99": 1000 * (lags.p99_s or 0.0),
        "neighbour_rows": dict(neighbour_kinds),
        "client_cpu_pct": 100 * cpu_s / wall_s,
    }


def run(settings: Settings) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="nvfp4-neighbour-") as tmp:
        profile = harness.write_sim_profile(Path(tmp) / "n.toml", NAME, {"healthy": HEALTHY_SIM})
        with SimProcess(profile) as sim, hostile_servers() as hostile:
            healthy_url = sim.urls["healthy"]
            cases = {
                case: asyncio.run(_case(healthy_url, hostile.get(case), settings)) for case in CASES
            }
    alone = cases["alone"]["ttft_ms_p50"]
    for row in cases.values():
        p50 = row["ttft_ms_p50"]
        row["delta_ms_vs_alone"] = None if p50 is None or alone is None else p50 - alone
    return {"cases": cases, "load_average": [round(x, 2) for x in os.getloadavg()]}


def targets(numbers: dict[str, Any]) -> list[Target]:
    found = []
    for case in CASES[1:]:
        delta = numbers["cases"][case]["delta_ms_vs_alone"]
        found.append(
            Target(
                f"healthy TTFT p50 beside a {case.replace('_', ' ')}",
                f"<= alone + {TARGET_DELTA_MS:g} ms",
                "—" if delta is None else f"{delta:+.1f} ms",
                None if delta is None else delta <= TARGET_DELTA_MS,
            )
        )
    return found


def report(numbers: dict[str, Any]) -> list[str]:
    rows = []
    for case, row in numbers["cases"].items():
        neighbour = ", ".join(f"{k} {v}" for k, v in sorted(row["neighbour_rows"].items()))
        rows.append(
            [
                case,
                str(row["healthy_requests"]),
                fmt(row["ttft_ms_p50"], ".1f"),
                fmt(row["ttft_ms_p95"], ".1f"),
                fmt(row["delta_ms_vs_alone"], "+.1f"),
                fmt(row["loop_lag_ms_p99"], ".1f"),
                fmt(row["client_cpu_pct"], ".0f"),
                neighbour or "—",
            ]
        )
    headers = [
        "case",
        "healthy n",
        "TTFT p50 ms",
        "p95 ms",
        "Δp50 vs alone",
        "loop lag p99 ms",
        "client CPU %",
        "neighbour rows",
    ]
    title = f"Healthy endpoint's TTFT (load average at the end: {numbers['load_average']})"
    return [harness.table(title, headers, rows)]


NOTES = [
    "The healthy endpoint is the simulator (TTFT 50 ms) in its own process; the hostile servers "
    "run in another at nice 19, as a server on another machine would cost this one no CPU.",
    "TTFT p50 over the requests sent after the settling time; the client process's own event-loop "
    "lag (the runner's probe: a 10 ms sleeper's lateness) is its share of any difference.",
    "Both clients share one event loop, as the runner's do. On a shared 2-core machine the "
    "load average moves every number here.",
]


def main(argv: list[str] | None = None) -> int:
    if argv is None and sys.argv[1:] == ["--serve"]:
        asyncio.run(_serve_hostile())
        return 0
    args: argparse.Namespace = harness.parser(__doc__.splitlines()[0]).parse_args(argv)
    return harness.measure_and_publish(
        NAME,
        args,
        QUICK if args.quick else FULL,
        run=run,
        targets=targets,
        report=report,
        notes=NOTES,
        as_json=asdict,
    )


if __name__ == "__main__":
    sys.exit(main())

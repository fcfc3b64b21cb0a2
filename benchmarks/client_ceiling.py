"""Client ceiling: SSE chunks per CPU-second the client can time, beside a bare read-and-split loop.

A simulated endpoint with no delay (huge decode rate, TTFT 0) runs in its own process and streams
long answers as fast as it can write them. The same fixed workload (the same prompts, so the same
streams) is read three ways: ``EndpointClient.chat`` with a progress meter, as the runner calls it
(per-chunk timing, JSON decoding, usage tracking); the same with other JSON decoders swapped in;
and a bare aiohttp loop that only reads ``iter_any()`` buffers and splits them into events, the
floor of what Python can do here. The simulator, not the client, sets the wall-clock pace on a
small machine, so the ceiling is counted per CPU-second of this process: chunks / CPU time.

Then the trust limit: seven endpoints with a known TTFT (0.1 s) and 100 tok/s per stream at any
concurrency; per-endpoint concurrency rises until the client's mean TTFT exceeds the simulator's
own (its /metrics histogram, which times the first token when the server really sent it) by more
than 5 %. Beyond that level the client's numbers include its own queueing.

Usage: ``python benchmarks/client_ceiling.py [--quick]``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import aiohttp
import harness
from harness import Target, fmt, median

from nvfp4_tui.bench.client import ChatRequest, EndpointClient, Timeouts
from nvfp4_tui.bench.client import stream as stream_module
from nvfp4_tui.bench.client.endpoint import FULL_USAGE, JSON_HEADERS, READ_BUFSIZE
from nvfp4_tui.bench.progress import TokenMeter
from nvfp4_tui.bench.sse import SseParser
from nvfp4_tui.config.profile import Endpoint, load_profile
from nvfp4_tui.core.stats import percentile
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.sim.schedule import expected_ttft_s
from nvfp4_tui.sim.tokens import count_prompt_tokens

NAME = "client_ceiling"
MODEL = "current"
TEMPERATURE = 0.3
FLAT_CURVE = [[1, 1.0], [4096, 1.0]]  # the same speed per stream at any concurrency
FAST_SIM = {
    "decode_tps": 1e7,
    "ttft_s": 0.0,
    "prefill_tps": 1e12,
    "vram_used_mib": 1000.0,
    "concurrency_curve": FLAT_CURVE,
    "tools": False,
    "seed": 11,
}
TRUST_TTFT_S = 0.1
TRUST_DECODE_TPS = 100.0
TRUST_ENDPOINTS = 7
TRUST_INFLATION_PCT = 5.0
TARGET_CEILING_RATIO = 0.70
SSE_FRAMES_BESIDE_CHUNKS = 3  # per stream: the role-only chunk, the final usage chunk, [DONE]
WARMUP_MAX_TOKENS = 2
CLIENT_LOADS = stream_module._loads
LAG_PROBE_S = 0.005
TRUST_PROMPTS = 64  # fewer than the simulator's answer cache holds per endpoint


@dataclass(frozen=True)
class Settings:
    streams: int
    requests_per_stream: int
    max_tokens: int
    repeats: int
    trust_levels: tuple[int, ...]  # concurrency per endpoint, TRUST_ENDPOINTS endpoints at once
    trust_settle_s: float
    trust_window_s: float
    trust_max_tokens: int
    decode_samples: int  # chunks decoded per decoder in the JSON micro-benchmark, x100


QUICK = Settings(
    streams=4,
    requests_per_stream=5,
    max_tokens=2048,
    repeats=3,
    trust_levels=(1, 4, 16),
    trust_settle_s=1.0,
    trust_window_s=3.0,
    trust_max_tokens=48,
    decode_samples=20,
)
FULL = Settings(
    streams=4,
    requests_per_stream=24,
    max_tokens=2048,
    repeats=3,
    trust_levels=(1, 2, 4, 8, 16, 32, 64),
    trust_settle_s=2.0,
    trust_window_s=12.0,
    trust_max_tokens=64,
    decode_samples=100,
)


def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _loop_factories() -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    loops: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {"asyncio": asyncio.new_event_loop}
    if _installed("uvloop"):
        import uvloop

        loops["uvloop"] = uvloop.new_event_loop
    return loops


def _decoders() -> dict[str, Callable[[bytes], Any]]:
    # "json" is the client's own stdlib decoding, whatever form it takes there.
    decoders: dict[str, Callable[[bytes], Any]] = {"json": CLIENT_LOADS}
    if _installed("orjson"):
        import orjson

        decoders["orjson"] = orjson.loads
    if _installed("msgspec"):
        import msgspec

        decoders["msgspec"] = msgspec.json.decode
    return decoders


def _typed_msgspec_decoder() -> Callable[[bytes], Any] | None:
    """msgspec decoding straight into the fields the client reads (what a rewrite could use)."""
    if not _installed("msgspec"):
        return None
    import msgspec

    # defstruct, not class bodies: this module's postponed annotations would not resolve here.
    optional_text = (str | None, None)
    delta = msgspec.defstruct(
        "Delta",
        [
            ("content", *optional_text),
            ("reasoning_content", *optional_text),
            ("reasoning", *optional_text),
            ("tool_calls", list[Any] | None, None),
        ],
    )
    choice = msgspec.defstruct(
        "Choice", [("delta", delta | None, None), ("finish_reason", *optional_text)]
    )
    usage = msgspec.defstruct(
        "Usage", [("prompt_tokens", int | None, None), ("completion_tokens", int | None, None)]
    )
    choices = ("choices", list[choice], msgspec.field(default_factory=list))
    chunk = msgspec.defstruct("Chunk", [choices, ("usage", usage | None, None)])
    return msgspec.json.Decoder(chunk).decode


def _request(index: int, max_tokens: int, topic: str = "log files") -> ChatRequest:
    """A coding prompt: the simulator's longest answers."""
    text = f"Write a Python function that parses {topic}, with unit tests (task {index})."
    return ChatRequest(
        messages=({"role": "user", "content": text},),
        max_tokens=max_tokens,
        temperature=TEMPERATURE,
    )


def _trust_request(worker: int, index: int, max_tokens: int) -> ChatRequest:
    """One of a pool of English prompts, picked pseudo-randomly: answers of varied length keep
    the streams out of step, and each is composed once, then served from the simulator's
    answer cache, to keep the simulator's own CPU off the TTFT path as far as it can be."""
    topic = (worker * 7919 + index * 104_729) % TRUST_PROMPTS
    text = f"Discuss the history of trade route {topic}."
    return ChatRequest(
        messages=({"role": "user", "content": text},),
        max_tokens=max_tokens,
        temperature=TEMPERATURE,
    )


def _wire_body(request: ChatRequest) -> bytes:
    """The body EndpointClient sends for ``request`` (the same stream for the bare loop)."""
    body = {
        "model": MODEL,
        "messages": list(request.messages),
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "stream": True,
        "stream_options": FULL_USAGE,
    }
    return json.dumps(body, ensure_ascii=False).encode()


@dataclass(frozen=True)
class Pass:
    """One read of the whole workload."""

    reader: str  # "client" or "bare"
    loop: str
    decoder: str | None
    chunks: int
    tokens: int | None
    wall_s: float
    cpu_s: float

    @property
    def chunks_per_cpu_s(self) -> float:
        return self.chunks / self.cpu_s

    @property
    def chunks_per_wall_s(self) -> float:
        return self.chunks / self.wall_s


def _run_on(loop_name: str, coroutine: Coroutine[Any, Any, Pass]) -> Pass:
    with asyncio.Runner(loop_factory=_loop_factories()[loop_name]) as runner:
        return runner.run(coroutine)


def _workload(settings: Settings) -> list[list[ChatRequest]]:
    """The requests of each stream, the same for every reader (so the same answers)."""
    per_stream = settings.requests_per_stream
    return [
        [_request(stream * per_stream + i, settings.max_tokens) for i in range(per_stream)]
        for stream in range(settings.streams)
    ]


async def _client_pass(url: str, settings: Settings, loop: str, decoder: str) -> Pass:
    requests = _workload(settings)
    chunks = tokens = 0
    meter = TokenMeter()
    saved = stream_module._loads
    stream_module._loads = _decoders()[decoder]
    try:
        async with EndpointClient(
            url, MODEL, concurrency=settings.streams, timeouts=Timeouts()
        ) as client:

            async def stream(batch: list[ChatRequest]) -> None:
                nonlocal chunks, tokens
                for request in batch:
                    m = await client.chat(request, progress=meter)
                    if m.status == "error":
                        raise RuntimeError(f"{m.error_kind}: {m.error_message}")
                    chunks += m.chunks
                    tokens += m.tokens_out or 0

            cpu, wall = time.process_time(), time.perf_counter()
            await asyncio.gather(*(stream(batch) for batch in requests))
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        stream_module._loads = saved
    return Pass("client", loop, decoder, chunks, tokens, wall, cpu)


async def _bare_pass(url: str, settings: Settings, loop: str) -> Pass:
    chat_url = f"{url}/v1/chat/completions"
    bodies = [[_wire_body(request) for request in batch] for batch in _workload(settings)]
    events = 0
    connector = aiohttp.TCPConnector(limit=settings.streams + 2)
    async with aiohttp.ClientSession(connector=connector, read_bufsize=READ_BUFSIZE) as session:

        async def stream(batch: list[bytes]) -> None:
            nonlocal events
            for body in batch:
                pending = b""
                async with session.post(chat_url, data=body, headers=JSON_HEADERS) as response:
                    async for buffer in response.content.iter_any():
                        parts = (pending + buffer).split(b"\n\n")
                        pending = parts.pop()
                        events += len(parts)

        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(stream(batch) for batch in bodies))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    streams = settings.streams * settings.requests_per_stream
    chunks = events - SSE_FRAMES_BESIDE_CHUNKS * streams
    return Pass("bare", loop, None, chunks, None, wall, cpu)


def _passes(url: str, settings: Settings) -> list[Pass]:
    """Every variant ``repeats`` times, interleaved so that a noisy neighbour hits them alike."""
    variants: list[tuple[str, str, str | None]] = [("bare", "asyncio", None)]
    variants += [("client", "asyncio", decoder) for decoder in _decoders()]
    if "uvloop" in _loop_factories():
        variants += [("bare", "uvloop", None), ("client", "uvloop", "json")]
        variants += [("client", "uvloop", d) for d in _decoders() if d != "json"]
    passes = []
    for _ in range(settings.repeats):
        for reader, loop, decoder in variants:
            if reader == "bare":
                passes.append(_run_on(loop, _bare_pass(url, settings, loop)))
            else:
                assert decoder is not None
                passes.append(_run_on(loop, _client_pass(url, settings, loop, decoder)))
    return passes


def _variant_rows(passes: list[Pass]) -> list[dict[str, Any]]:
    grouped: dict[tuple[str, str, str | None], list[Pass]] = {}
    for p in passes:
        grouped.setdefault((p.reader, p.loop, p.decoder), []).append(p)
    rows = []
    for (reader, loop, decoder), group in grouped.items():
        cpu_s = median([p.cpu_s for p in group])
        wall_s = median([p.wall_s for p in group])
        assert cpu_s is not None and wall_s is not None
        chunks = group[0].chunks
        tokens = group[0].tokens
        rows.append(
            {
                "reader": reader,
                "loop": loop,
                "decoder": decoder,
                "repeats": len(group),
                "chunks": chunks,
                "tokens": tokens,
                "cpu_s": cpu_s,
                "wall_s": wall_s,
                "chunks_per_cpu_s": chunks / cpu_s,
                "tokens_per_cpu_s": tokens / cpu_s if tokens is not None else None,
                "chunks_per_wall_s": chunks / wall_s,
                "cpu_pct": 100 * cpu_s / wall_s,
                "us_per_chunk": 1e6 * cpu_s / chunks,
            }
        )
    floors = {r["loop"]: r["chunks_per_cpu_s"] for r in rows if r["reader"] == "bare"}
    for row in rows:
        row["ratio_to_bare"] = row["chunks_per_cpu_s"] / floors[row["loop"]]
    return rows


async def _capture_payloads(url: str, max_tokens: int) -> list[bytes]:
    """The data of every event of one real stream, for the decoder micro-benchmark."""
    parser = SseParser()
    payloads: list[bytes] = []
    body = _wire_body(_request(0, max_tokens, topic="config files"))
    async with (
        aiohttp.ClientSession(read_bufsize=READ_BUFSIZE) as session,
        session.post(f"{url}/v1/chat/completions", data=body, headers=JSON_HEADERS) as response,
    ):
        async for buffer in response.content.iter_any():
            payloads.extend(parser.feed(buffer))
    return [p for p in payloads if p != b"[DONE]"]


def _decode_costs(payloads: list[bytes], rounds: int) -> list[dict[str, Any]]:
    decoders = dict(_decoders())
    typed = _typed_msgspec_decoder()
    if typed is not None:
        decoders["msgspec (typed Struct)"] = typed
    rows = []
    for name, decode in decoders.items():
        for payload in payloads:  # every decoder must read every real chunk
            decode(payload)
        best_s = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            for _ in range(rounds):
                for payload in payloads:
                    decode(payload)
            best_s = min(best_s, time.perf_counter() - started)
        rows.append({"decoder": name, "us_per_chunk": 1e6 * best_s / (rounds * len(payloads))})
    return rows


async def _probe_loop_lag(lags_s: list[float]) -> None:
    """How late this process's event loop wakes a sleeper: the delay any arriving chunk waits
    before the client can stamp it (epoll rounds timeouts up to the millisecond: ~0.5 ms)."""
    while True:
        asked = time.perf_counter()
        await asyncio.sleep(LAG_PROBE_S)
        lags_s.append(time.perf_counter() - asked - LAG_PROBE_S)


async def _trust_level(
    endpoints: list[Endpoint], concurrency: int, settings: Settings, sim_pid: int
) -> dict[str, Any]:
    """Closed loop at ``concurrency`` per endpoint, connections opened first; after a settling
    time (the first waves start together) the simulator's histogram is read, and the window
    holds the requests whose first token came after that read, on both sides."""
    first_tokens: list[tuple[float, float, float]] = []  # (when, measured TTFT, schedule TTFT)
    async with aiohttp.ClientSession() as http:
        clients = [
            EndpointClient(e.url, e.model, concurrency=concurrency, timeouts=Timeouts())
            for e in endpoints
        ]
        for c in clients:
            await c.__aenter__()
        try:
            warm = _trust_request(0, 0, WARMUP_MAX_TOKENS)
            await asyncio.gather(*(c.chat(warm) for c in clients for _ in range(concurrency)))
            started = time.perf_counter()
            deadline = started + settings.trust_settle_s + settings.trust_window_s

            async def worker(endpoint: Endpoint, client: EndpointClient, number: int) -> None:
                assert endpoint.sim is not None
                for index in itertools.count():
                    if time.perf_counter() >= deadline:
                        return
                    request = _trust_request(number, index, settings.trust_max_tokens)
                    asked_at = time.perf_counter()
                    m = await client.chat(request)
                    if m.status == "error" or m.ttft_s is None:
                        raise RuntimeError(f"{endpoint.id}: {m.error_kind}: {m.error_message}")
                    prompt_tokens = count_prompt_tokens(request.messages)
                    first_tokens.append(
                        (
                            asked_at + m.queue_s + m.ttft_s,
                            m.ttft_s,
                            expected_ttft_s(endpoint.sim, prompt_tokens, concurrency),
                        )
                    )

            workers = asyncio.gather(
                *(
                    worker(e, c, n)
                    for e, c in zip(endpoints, clients, strict=True)
                    for n in range(concurrency)
                )
            )
            await asyncio.sleep(settings.trust_settle_s)
            lags_s: list[float] = []
            probe = asyncio.create_task(_probe_loop_lag(lags_s))
            window_start = time.perf_counter()
            before = await asyncio.gather(
                *(harness.sim_ttft_histogram(http, e.url) for e in endpoints)
            )
            cpu, sim_cpu = time.process_time(), harness.cpu_seconds(sim_pid)
            await workers
            probe.cancel()
            wall_s = time.perf_counter() - window_start
            cpu_s = time.process_time() - cpu
            sim_cpu_s = harness.cpu_seconds(sim_pid) - sim_cpu
            after = await asyncio.gather(
                *(harness.sim_ttft_histogram(http, e.url) for e in endpoints)
            )
        finally:
            for c in clients:
                await c.__aexit__(None, None, None)
    window = [(ttft, truth) for when, ttft, truth in first_tokens if when >= window_start]
    ttfts = [ttft for ttft, _ in window]
    server_sum = sum(a[0] - b[0] for a, b in zip(after, before, strict=True))
    server_count = sum(a[1] - b[1] for a, b in zip(after, before, strict=True))
    client_mean_s = sum(ttfts) / len(ttfts)
    server_mean_s = server_sum / server_count
    return {
        "concurrency_per_endpoint": concurrency,
        "streams": concurrency * len(endpoints),
        "requests": len(ttfts),
        "server_requests": server_count,
        "schedule_ttft_ms": 1000 * sum(truth for _, truth in window) / len(window),
        "server_ttft_ms_mean": 1000 * server_mean_s,
        "client_ttft_ms_mean": 1000 * client_mean_s,
        "client_ttft_ms_median": 1000 * (median(ttfts) or 0.0),
        "inflation_pct": 100 * (client_mean_s / server_mean_s - 1),
        "requests_per_s": len(ttfts) / wall_s,
        "loop_lag_ms_p50": 1000 * (median(lags_s) or 0.0),
        "loop_lag_ms_p99": 1000 * (percentile(lags_s, 99) or 0.0),
        "client_cpu_pct": 100 * cpu_s / wall_s,
        "sim_cpu_pct": 100 * sim_cpu_s / wall_s,
    }


def _trust_profile(directory: Path) -> Path:
    trust = {
        "decode_tps": TRUST_DECODE_TPS,
        "ttft_s": TRUST_TTFT_S,
        "prefill_tps": 1e12,
        "vram_used_mib": 1000.0,
        "concurrency_curve": FLAT_CURVE,
        "tools": False,
    }
    sims = {"fast": FAST_SIM}
    sims.update({f"trust{i}": {**trust, "seed": i} for i in range(TRUST_ENDPOINTS)})
    return harness.write_sim_profile(directory / "ceiling.toml", "client-ceiling", sims)


def run(settings: Settings) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="nvfp4-ceiling-") as tmp:
        profile_path = _trust_profile(Path(tmp))
        profile = load_profile(profile_path)
        with SimProcess(profile_path) as sim:
            fast_url = sim.urls["fast"]
            passes = _passes(fast_url, settings)
            payloads = asyncio.run(_capture_payloads(fast_url, settings.max_tokens))
            decode_rows = _decode_costs(payloads, settings.decode_samples)
            trust_endpoints = [
                e.with_url(sim.urls[e.id]) for e in profile.endpoints if e.id.startswith("trust")
            ]
            trust_rows = []
            for level in settings.trust_levels:
                row = asyncio.run(_trust_level(trust_endpoints, level, settings, sim.pid))
                trust_rows.append(row)
    variants = _variant_rows(passes)
    over = [r for r in trust_rows if r["inflation_pct"] > TRUST_INFLATION_PCT]
    limit = over[0]["concurrency_per_endpoint"] if over else None
    return {
        "variants": variants,
        "decode_us_per_chunk": decode_rows,
        "decode_payload_bytes_median": median([float(len(p)) for p in payloads]),
        "trust_levels": trust_rows,
        "trust_limit_per_endpoint": limit,
    }


def _find(
    variants: list[dict[str, Any]], reader: str, loop: str, decoder: str | None
) -> dict | None:
    for row in variants:
        if (row["reader"], row["loop"], row["decoder"]) == (reader, loop, decoder):
            return row
    return None


def targets(numbers: dict[str, Any]) -> list[Target]:
    default = _find(numbers["variants"], "client", "asyncio", "json")
    ratio = default["ratio_to_bare"] if default else None
    limit = numbers["trust_limit_per_endpoint"]
    tested = max(r["concurrency_per_endpoint"] for r in numbers["trust_levels"])
    return [
        Target(
            "client ceiling",
            f">= {TARGET_CEILING_RATIO:.0%} of the bare-loop floor (chunks per CPU-second)",
            f"{fmt(ratio, '.0%')} (asyncio, json)" if ratio is not None else "—",
            None if ratio is None else ratio >= TARGET_CEILING_RATIO,
        ),
        Target(
            "trust limit",
            f"TTFT within {TRUST_INFLATION_PCT:g}% of the server's own",
            f"exceeded at c={limit} x {TRUST_ENDPOINTS} endpoints"
            if limit is not None
            else f"not reached up to c={tested} x {TRUST_ENDPOINTS} endpoints",
            None,
        ),
    ]


def report(numbers: dict[str, Any]) -> list[str]:
    variant_rows = [
        [
            r["reader"],
            r["loop"],
            r["decoder"] or "—",
            f"{r['chunks']:,}",
            f"{r['chunks_per_cpu_s']:,.0f}",
            fmt(r["tokens_per_cpu_s"], ",.0f"),
            f"{r['us_per_chunk']:.2f}",
            f"{r['chunks_per_wall_s']:,.0f}",
            f"{r['cpu_pct']:.0f}",
            f"{r['ratio_to_bare']:.0%}",
        ]
        for r in numbers["variants"]
    ]
    decode_rows = [
        [r["decoder"], f"{r['us_per_chunk']:.2f}"] for r in numbers["decode_us_per_chunk"]
    ]
    trust_rows = [
        [
            str(r["concurrency_per_endpoint"]),
            str(r["streams"]),
            str(r["requests"]),
            f"{r['requests_per_s']:,.0f}",
            f"{r['schedule_ttft_ms']:.1f}",
            f"{r['server_ttft_ms_mean']:.1f}",
            f"{r['client_ttft_ms_mean']:.1f}",
            f"{r['inflation_pct']:+.1f}",
            f"{r['loop_lag_ms_p50']:.2f}",
            f"{r['loop_lag_ms_p99']:.2f}",
            f"{r['client_cpu_pct']:.0f}",
            f"{r['sim_cpu_pct']:.0f}",
        ]
        for r in numbers["trust_levels"]
    ]
    limit = numbers["trust_limit_per_endpoint"]
    tested = max(r["concurrency_per_endpoint"] for r in numbers["trust_levels"])
    verdict = (
        f"trust limit: c={limit} per endpoint ({limit * TRUST_ENDPOINTS} streams), where the "
        f"client's TTFT first exceeds the server's own by more than {TRUST_INFLATION_PCT:g}%"
        if limit is not None
        else f"trust limit: not reached up to c={tested} per endpoint "
        f"({tested * TRUST_ENDPOINTS} streams)"
    )
    return [
        harness.table(
            "Client ceiling: one zero-delay simulated endpoint, the same streams read each way",
            [
                "reader",
                "loop",
                "JSON",
                "chunks",
                "chunks/CPU-s",
                "tok/CPU-s",
                "µs/chunk",
                "chunks/wall-s",
                "CPU %",
                "vs bare",
            ],
            variant_rows,
        ),
        harness.table(
            f"JSON decoding of real chunks (median {numbers['decode_payload_bytes_median']:.0f} B)",
            ["decoder", "µs/chunk"],
            decode_rows,
        ),
        harness.table(
            f"Trust limit: {TRUST_ENDPOINTS} endpoints, TTFT {TRUST_TTFT_S * 1000:.0f} ms, "
            f"{TRUST_DECODE_TPS:.0f} tok/s per stream",
            [
                "c/endpoint",
                "streams",
                "req",
                "req/s",
                "schedule ms",
                "server ms",
                "client ms",
                "inflation %",
                "lag p50 ms",
                "lag p99 ms",
                "client CPU %",
                "sim CPU %",
            ],
            trust_rows,
        )
        + "\n"
        + verdict,
    ]


NOTES = [
    "chunks/CPU-s is chunks read per second of this process's CPU time (user + system): the "
    "rate one core could sustain. The simulator shares the machine, so chunks/wall-s is the pace "
    "it set, not the client's limit.",
    "'vs bare' compares chunks per CPU-second with the bare loop on the same event loop: the bare "
    "loop reads and splits the same streams and does nothing else.",
    "The trust limit compares the client's mean TTFT with the simulator's own TTFT histogram "
    "(sum/count over the same requests); the simulator falling behind its schedule raises both "
    "and is not counted against the client. The histogram starts when the simulator's handler "
    "starts, so the gap also holds the loopback round trip and the time a request waits for the "
    "simulator's loop before its handler runs; 'lag' is this process's own event-loop lag, the "
    "client's part of the gap. On a 2-core machine the simulator, the client and anything else "
    "running share the cores, so the limit found is this machine's.",
]


def settings_dict(settings: Settings) -> dict[str, Any]:
    return {**asdict(settings), "fast_sim": FAST_SIM, "trust_endpoints": TRUST_ENDPOINTS}


def main(argv: list[str] | None = None) -> int:
    args = harness.parser(__doc__.splitlines()[0]).parse_args(argv)
    settings = QUICK if args.quick else FULL
    notes = list(NOTES)
    if not _installed("uvloop"):
        notes.append("uvloop is not installed: no uvloop rows (pip install uvloop to compare).")
    return harness.measure_and_publish(
        NAME,
        args,
        settings,
        run=run,
        targets=targets,
        report=report,
        notes=notes,
        as_json=settings_dict,
    )


if __name__ == "__main__":
    sys.exit(main())

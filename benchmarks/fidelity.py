"""Fidelity: the client's TTFT and decode tok/s against the simulator's known schedule.

Seven simulated endpoints (the demo lineup: its TTFTs, decode rates and the seed's concurrency
curve) run in their own process (``SimProcess``), as they do under the real tool, and this process
measures them all at once with ``EndpointClient`` at each concurrency level, closed loop. The truth
for a request admitted while ``c`` run is ``schedule.expected_ttft_s`` and ``decode_tps_at``; a
level's first wave (admitted while the batch fills, 1..c running) is not scored, and the workers
keep the batch full with unscored requests until the last scored one ends, so every scored request
decodes beside exactly ``c``. The seed's method (non-streaming, tok/s = tokens / latency) runs on
the same endpoints to show what it cannot see: it has no TTFT, and its tok/s includes prefill.

Usage: ``python benchmarks/fidelity.py [--quick]``.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import harness
from harness import Target, fmt, median

from nvfp4_tui.bench.client import ChatRequest, EndpointClient, Timeouts
from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.profile import Endpoint, Profile, load_profile, with_urls
from nvfp4_tui.core.stats import percentile
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.sim.schedule import decode_tps_at, expected_ttft_s
from nvfp4_tui.sim.tokens import count_prompt_tokens

NAME = "fidelity"
TEMPERATURE = 0.3
TARGET_TTFT_MAE_MS = 1.0
TARGET_DECODE_ERR_PCT = 0.5
TARGET_MAX_CONCURRENCY = 16
SETTLE_TIMEOUT_S = 10.0
# English-suite topics: the simulator's classifier sends these to its essay writer.
TOPICS = ("printing", "canals", "railways", "lighthouses", "bridges", "harbours", "windmills")


@dataclass(frozen=True)
class Level:
    concurrency: int
    scored_per_worker: int
    max_tokens: int


@dataclass(frozen=True)
class Settings:
    profile: Path
    levels: tuple[Level, ...]
    seed_levels: tuple[Level, ...]
    endpoints: int | None = None  # the first N endpoints of the profile; None: all of them


QUICK = Settings(
    profile=DEMO_PROFILE,
    levels=(Level(1, 3, 64), Level(4, 2, 64), Level(16, 1, 32), Level(64, 1, 16)),
    seed_levels=(Level(1, 2, 64), Level(4, 1, 64)),
)
FULL = Settings(
    profile=DEMO_PROFILE,
    levels=(Level(1, 12, 128), Level(4, 6, 128), Level(16, 3, 96), Level(64, 2, 48)),
    seed_levels=(Level(1, 6, 128), Level(4, 3, 128), Level(16, 2, 96), Level(64, 1, 48)),
)


@dataclass(frozen=True)
class Sample:
    """One scored request: what was measured and what the schedule says it should be."""

    endpoint_id: str
    concurrency: int
    ttft_true_s: float
    decode_true_tps: float
    ttft_s: float | None  # None for the seed's method, which cannot see the first token
    decode_tps: float | None
    e2e_tps: float | None
    tokens_out: int | None


@dataclass
class LevelRun:
    concurrency: int
    method: str  # "stream" or "seed"
    samples: list[Sample] = field(default_factory=list)
    wall_s: float = 0.0
    client_cpu_s: float = 0.0
    sim_cpu_s: float = 0.0
    tokens_by_running: dict[int, int] = field(default_factory=dict)
    server_ttft_sum_s: float = 0.0  # the simulator's own TTFT histogram, summed over endpoints
    server_ttft_count: int = 0


Measure = Callable[[ChatRequest], Awaitable[tuple[float | None, float | None, float | None, Any]]]


def _request(endpoint: Endpoint, level: Level, worker: int, index: int) -> ChatRequest:
    topic = TOPICS[(worker + index) % len(TOPICS)]
    text = f"Discuss the history of {topic} in town {worker} (note {index}, {endpoint.id})."
    return ChatRequest(
        messages=({"role": "user", "content": text},),
        max_tokens=level.max_tokens,
        temperature=TEMPERATURE,
    )


async def _sim_stats(http: aiohttp.ClientSession, url: str) -> dict[str, Any]:
    async with http.get(f"{url}/sim/stats") as response:
        return await response.json()


async def _settled(http: aiohttp.ClientSession, urls: list[str]) -> None:
    """Wait (bounded) until no simulated endpoint has a request running."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while time.monotonic() < deadline:
        stats = await asyncio.gather(*(_sim_stats(http, url) for url in urls))
        if all(s["in_flight"] == 0 and s["waiting"] == 0 for s in stats):
            return
        await asyncio.sleep(0.05)


async def _closed_loop(endpoint: Endpoint, level: Level, measure: Measure, run: LevelRun) -> None:
    """``c`` workers back to back; each scores k requests after the filling wave (request 0)
    and keeps sending unscored ones until every worker has scored its k."""
    assert endpoint.sim is not None
    spec = endpoint.sim
    c = level.concurrency
    # Alone, the first request is admitted at c=1 like the rest: scoring it too lets the
    # simulator's own TTFT histogram cover exactly the scored requests.
    first_scored = 0 if c == 1 else 1
    last_scored = first_scored + level.scored_per_worker - 1
    all_scored = asyncio.Event()
    finished_workers = 0

    async def worker(number: int) -> None:
        nonlocal finished_workers
        for index in itertools.count():
            request = _request(endpoint, level, number, index)
            ttft_s, decode_tps, e2e_tps, tokens = await measure(request)
            if first_scored <= index <= last_scored:
                prompt_tokens = count_prompt_tokens(request.messages)
                run.samples.append(
                    Sample(
                        endpoint_id=endpoint.id,
                        concurrency=c,
                        ttft_true_s=expected_ttft_s(spec, prompt_tokens, c),
                        decode_true_tps=decode_tps_at(spec, c),
                        ttft_s=ttft_s,
                        decode_tps=decode_tps,
                        e2e_tps=e2e_tps,
                        tokens_out=tokens,
                    )
                )
            if index == last_scored:
                finished_workers += 1
                if finished_workers == c:
                    all_scored.set()
            if all_scored.is_set():
                return

    tasks = [asyncio.create_task(worker(n)) for n in range(c)]
    try:
        await all_scored.wait()
    finally:
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
    for result in results:
        if isinstance(result, Exception):
            raise result


async def _stream_endpoint(endpoint: Endpoint, level: Level, run: LevelRun) -> None:
    timeouts = Timeouts()
    async with EndpointClient(
        endpoint.url, endpoint.model, concurrency=level.concurrency, timeouts=timeouts
    ) as client:

        async def measure(request: ChatRequest):
            m = await client.chat(request)
            if m.status == "error":
                raise RuntimeError(f"{endpoint.id}: {m.error_kind}: {m.error_message}")
            return m.ttft_s, m.decode_tps, m.e2e_tps, m.tokens_out

        await _closed_loop(endpoint, level, measure, run)


async def _seed_endpoint(endpoint: Endpoint, level: Level, run: LevelRun) -> None:
    """The seed script's way: a plain POST, latency around it, tok/s = tokens / latency."""
    url = f"{endpoint.url}/v1/chat/completions"
    connector = aiohttp.TCPConnector(limit=level.concurrency + 1)
    async with aiohttp.ClientSession(connector=connector) as http:

        async def measure(request: ChatRequest):
            body = {
                "model": endpoint.model,
                "messages": list(request.messages),
                "max_tokens": request.max_tokens,
                "temperature": request.temperature,
            }
            started = time.perf_counter()
            async with http.post(url, json=body) as response:
                answer = await response.json()
            latency_s = time.perf_counter() - started
            tokens = answer["usage"]["completion_tokens"]
            return None, None, tokens / latency_s, tokens

        await _closed_loop(endpoint, level, measure, run)


async def _run_level(
    endpoints: list[Endpoint],
    level: Level,
    method: str,
    sim_pid: int,
    http: aiohttp.ClientSession,
) -> LevelRun:
    urls = [e.url for e in endpoints]
    await _settled(http, urls)
    run = LevelRun(level.concurrency, method)
    before = await asyncio.gather(*(_sim_stats(http, url) for url in urls))
    ttft_before = await asyncio.gather(*(harness.sim_ttft_histogram(http, url) for url in urls))
    cpu_before, sim_before, started = (
        time.process_time(),
        harness.cpu_seconds(sim_pid),
        time.perf_counter(),
    )
    one = _stream_endpoint if method == "stream" else _seed_endpoint
    await asyncio.gather(*(one(e, level, run) for e in endpoints))
    run.wall_s = time.perf_counter() - started
    run.client_cpu_s = time.process_time() - cpu_before
    run.sim_cpu_s = harness.cpu_seconds(sim_pid) - sim_before
    after = await asyncio.gather(*(_sim_stats(http, url) for url in urls))
    ttft_after = await asyncio.gather(*(harness.sim_ttft_histogram(http, url) for url in urls))
    for (sum_b, count_b), (sum_a, count_a) in zip(ttft_before, ttft_after, strict=True):
        run.server_ttft_sum_s += sum_a - sum_b
        run.server_ttft_count += count_a - count_b
    tokens: Counter[int] = Counter()
    for b, a in zip(before, after, strict=True):
        for running, count in a["in_flight_while_decoding"].items():
            tokens[int(running)] += count - b["in_flight_while_decoding"].get(running, 0)
    run.tokens_by_running = dict(sorted(tokens.items()))
    return run


def _summary(run: LevelRun) -> dict[str, Any]:
    samples = run.samples
    ttft_err_ms = [(s.ttft_s - s.ttft_true_s) * 1000 for s in samples if s.ttft_s is not None]
    decode_err_pct = [
        (s.decode_tps / s.decode_true_tps - 1) * 100 for s in samples if s.decode_tps is not None
    ]
    seed_err_pct = [
        (s.e2e_tps / s.decode_true_tps - 1) * 100 for s in samples if s.e2e_tps is not None
    ]
    bias_ms = median(ttft_err_ms)
    split = _bias_split(run)
    total_tokens = sum(run.tokens_by_running.values())
    at_c = run.tokens_by_running.get(run.concurrency, 0)
    return {
        "concurrency": run.concurrency,
        "method": run.method,
        "requests": len(samples),
        "ttft_true_ms_median": _ms(median([s.ttft_true_s for s in samples])),
        "ttft_abs_err_ms_median": median([abs(e) for e in ttft_err_ms]),
        "ttft_err_ms_median": bias_ms,
        "ttft_abs_err_ms_p95": percentile([abs(e) for e in ttft_err_ms], 95),
        # Spread around the constant overhead: what is left once the bias is known.
        "ttft_jitter_ms_median": median([abs(e - bias_ms) for e in ttft_err_ms])
        if bias_ms is not None
        else None,
        **split,
        "decode_true_tps_median": median([s.decode_true_tps for s in samples]),
        "decode_abs_err_pct_median": median([abs(e) for e in decode_err_pct]),
        "decode_err_pct_median": median(decode_err_pct),
        "decode_abs_err_pct_p95": percentile([abs(e) for e in decode_err_pct], 95),
        "seed_tps_err_pct_median": median(seed_err_pct),
        "seed_tps_abs_err_pct_median": median([abs(e) for e in seed_err_pct]),
        "tokens_decoded_at_c_pct": 100 * at_c / total_tokens if total_tokens else None,
        "wall_s": run.wall_s,
        "client_cpu_pct": 100 * run.client_cpu_s / run.wall_s if run.wall_s else None,
        "sim_cpu_pct": 100 * run.sim_cpu_s / run.wall_s if run.wall_s else None,
    }


def _bias_split(run: LevelRun) -> dict[str, float | None]:
    """The mean TTFT error cut in two with the simulator's own histogram: its timer's lateness
    (server-observed minus schedule) and the client's side (client-measured minus
    server-observed: loopback both ways, the wake-ups of both loops, the server writing the
    chunk). Only where the histogram holds exactly the scored requests (streaming at c=1)."""
    measured = [s.ttft_s for s in run.samples if s.ttft_s is not None]
    if run.method != "stream" or not measured or run.server_ttft_count != len(measured):
        return {"sim_late_ms_mean": None, "client_side_ms_mean": None}
    server_mean_s = run.server_ttft_sum_s / run.server_ttft_count
    true_mean_s = sum(s.ttft_true_s for s in run.samples) / len(run.samples)
    return {
        "sim_late_ms_mean": (server_mean_s - true_mean_s) * 1000,
        "client_side_ms_mean": (sum(measured) / len(measured) - server_mean_s) * 1000,
    }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


PER_RUN_KEYS = (
    "wall_s",
    "client_cpu_pct",
    "sim_cpu_pct",
    "tokens_decoded_at_c_pct",
    "sim_late_ms_mean",
    "client_side_ms_mean",
)


def _per_endpoint(runs: list[LevelRun]) -> list[dict[str, Any]]:
    rows = []
    for run in runs:
        by_endpoint: dict[str, list[Sample]] = {}
        for s in run.samples:
            by_endpoint.setdefault(s.endpoint_id, []).append(s)
        for endpoint_id, samples in by_endpoint.items():
            sub = LevelRun(run.concurrency, run.method, samples, run.wall_s)
            kept = {k: v for k, v in _summary(sub).items() if k not in PER_RUN_KEYS}
            rows.append({"endpoint_id": endpoint_id, **kept})
    return rows


def _endpoints(profile: Profile, settings: Settings) -> list[Endpoint]:
    simulated = [e for e in profile.endpoints if e.sim is not None]
    return simulated[: settings.endpoints] if settings.endpoints else simulated


async def _measure_all(settings: Settings, profile: Profile, sim: SimProcess) -> list[LevelRun]:
    endpoints = _endpoints(profile, settings)
    runs: list[LevelRun] = []
    async with aiohttp.ClientSession() as http:
        for level in settings.levels:
            runs.append(await _run_level(endpoints, level, "stream", sim.pid, http))
        for level in settings.seed_levels:
            runs.append(await _run_level(endpoints, level, "seed", sim.pid, http))
    return runs


def run(settings: Settings) -> dict[str, Any]:
    """Measure every level and return the numbers (no printing, no files)."""
    profile = load_profile(settings.profile)
    with SimProcess(settings.profile, time_scale=1.0) as sim:
        live = with_urls(profile, sim.urls)
        runs = asyncio.run(_measure_all(settings, live, sim))
    endpoints = _endpoints(profile, settings)
    return {
        "endpoints": [
            {"id": e.id, "decode_tps": e.sim.decode_tps, "ttft_s": e.sim.ttft_s}
            for e in endpoints
            if e.sim is not None
        ],
        "concurrency_curve": [list(p) for p in endpoints[0].sim.concurrency_curve]
        if endpoints and endpoints[0].sim
        else [],
        "levels": [_summary(r) for r in runs],
        "per_endpoint": _per_endpoint(runs),
    }


def targets(numbers: dict[str, Any]) -> list[Target]:
    streamed = [
        row
        for row in numbers["levels"]
        if row["method"] == "stream" and row["concurrency"] <= TARGET_MAX_CONCURRENCY
    ]
    worst_ttft = max((r["ttft_abs_err_ms_median"] or 0.0 for r in streamed), default=None)
    worst_decode = max((r["decode_abs_err_pct_median"] or 0.0 for r in streamed), default=None)
    return [
        Target(
            "fidelity TTFT",
            f"median |error| < {TARGET_TTFT_MAE_MS:g} ms at c<={TARGET_MAX_CONCURRENCY}",
            f"{fmt(worst_ttft, '.2f')} ms (worst level)",
            None if worst_ttft is None else worst_ttft < TARGET_TTFT_MAE_MS,
        ),
        Target(
            "fidelity decode tok/s",
            f"median |error| < {TARGET_DECODE_ERR_PCT:g}% at c<={TARGET_MAX_CONCURRENCY}",
            f"{fmt(worst_decode, '.3f')}% (worst level)",
            None if worst_decode is None else worst_decode < TARGET_DECODE_ERR_PCT,
        ),
    ]


def report(numbers: dict[str, Any]) -> list[str]:
    levels = numbers["levels"]
    stream_rows = [
        [
            str(r["concurrency"]),
            str(r["requests"]),
            fmt(r["ttft_true_ms_median"], ".1f"),
            fmt(r["ttft_abs_err_ms_median"], ".2f"),
            fmt(r["ttft_err_ms_median"], "+.2f"),
            fmt(r["ttft_jitter_ms_median"], ".2f"),
            fmt(r["ttft_abs_err_ms_p95"], ".2f"),
            fmt(r["decode_true_tps_median"], ".1f"),
            fmt(r["decode_abs_err_pct_median"], ".3f"),
            fmt(r["decode_abs_err_pct_p95"], ".3f"),
            fmt(r["tokens_decoded_at_c_pct"], ".1f"),
            fmt(r["client_cpu_pct"], ".0f"),
            fmt(r["sim_cpu_pct"], ".0f"),
        ]
        for r in levels
        if r["method"] == "stream"
    ]
    seed_by_c = {r["concurrency"]: r for r in levels if r["method"] == "seed"}
    stream_by_c = {r["concurrency"]: r for r in levels if r["method"] == "stream"}
    seed_rows = [
        [
            str(c),
            fmt(stream_by_c[c]["ttft_abs_err_ms_median"], ".2f") if c in stream_by_c else "—",
            "—",
            fmt(stream_by_c[c]["decode_err_pct_median"], "+.3f") if c in stream_by_c else "—",
            fmt(seed["seed_tps_err_pct_median"], "+.1f"),
        ]
        for c, seed in sorted(seed_by_c.items())
    ]
    split_rows = [
        [
            str(r["concurrency"]),
            fmt(r["ttft_err_ms_median"], "+.2f"),
            fmt(r["sim_late_ms_mean"], "+.2f"),
            fmt(r["client_side_ms_mean"], "+.2f"),
        ]
        for r in levels
        if r["sim_late_ms_mean"] is not None
    ]
    return [
        harness.table(
            "Fidelity: streaming client vs the simulator's schedule (7 endpoints at once)",
            [
                "c",
                "req",
                "TTFT true ms",
                "|err| ms",
                "bias ms",
                "jitter ms",
                "|err| p95",
                "decode tok/s",
                "|err| %",
                "|err| p95 %",
                "tok at c %",
                "client CPU %",
                "sim CPU %",
            ],
            stream_rows,
        ),
        harness.table(
            "What the seed's method misses (non-streaming, tok/s = tokens / latency)",
            [
                "c",
                "TTFT |err| ms (ours)",
                "TTFT (seed)",
                "decode err % (ours)",
                "tok/s err % (seed)",
            ],
            seed_rows,
        ),
        harness.table(
            "Where the TTFT bias comes from (the simulator's own TTFT histogram)",
            ["c", "bias ms (median)", "sim timer late ms (mean)", "client side ms (mean)"],
            split_rows,
        ),
    ]


def settings_dict(settings: Settings) -> dict[str, Any]:
    return {
        "profile": str(settings.profile),
        "levels": [asdict(level) for level in settings.levels],
        "seed_levels": [asdict(level) for level in settings.seed_levels],
        "endpoints": settings.endpoints,
        "time_scale": 1.0,
    }


NOTES = [
    "Truth is the simulator's schedule (sim/schedule.py) for a request admitted while c run; the "
    "first wave of each level (admitted while the batch fills) is not scored.",
    "The client's TTFT runs from when aiohttp writes the request to the socket to when the read "
    "holding the first token reaches its task; the simulator's schedule runs from when the "
    "request's last bytes reached its socket (before aiohttp parses them) to when its timer "
    "fires, on an event loop with microsecond timeouts. The bias column is what lies between "
    "(loopback both ways, the wake-ups of both processes, the server writing the chunk), not "
    "jitter.",
    "'tok at c %' is the share of tokens the simulator decoded while exactly c requests ran; the "
    "rest were scheduled in the gaps while a finished request was being replaced.",
]


def main(argv: list[str] | None = None) -> int:
    args = harness.parser(__doc__.splitlines()[0]).parse_args(argv)
    settings = QUICK if args.quick else FULL
    return harness.measure_and_publish(
        NAME,
        args,
        settings,
        run=run,
        targets=targets,
        report=report,
        notes=NOTES,
        as_json=settings_dict,
    )


if __name__ == "__main__":
    sys.exit(main())

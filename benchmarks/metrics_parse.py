"""Server metrics: what reading one vLLM ``/metrics`` body costs the client's event loop.

vLLM 0.32.0's own body (``tests/telemetry/data/vllm-0.32-cpu.metrics``, 56 kB) parsed by
``telemetry.prometheus.parse_metrics`` (a line at a time, on the loop) and by prometheus_client's
parser (how it was read before, in a worker thread). Then a loop that times a 5 ms ticker while
the body is parsed every 50 ms, each way: the ticker's lag p99 and max are the delay every
stream's chunk would have been read with. Ratios measured in one run, not wall-clock targets.

Usage: ``python benchmarks/metrics_parse.py [--quick]``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness
from harness import Target
from prometheus_client.parser import text_string_to_metric_families

from nvfp4_tui.core.stats import percentile
from nvfp4_tui.telemetry.prometheus import parse_metrics

NAME = "metrics_parse"
BODY = harness.REPO_ROOT / "tests" / "telemetry" / "data" / "vllm-0.32-cpu.metrics"
TICK_S = 0.005
POLL_S = 0.05
MS = 1000.0


@dataclass(frozen=True)
class Settings:
    parses: int = 200  # per parser, for the time per body
    loop_s: float = 5.0  # per way of parsing, ticker running


QUICK = Settings(parses=20, loop_s=1.0)


def old_parse(text: str) -> int:
    return sum(len(family.samples) for family in text_string_to_metric_families(text))


def time_per_body_ms(parse: Any, text: str, count: int) -> float:
    parse(text)
    started = time.perf_counter()
    for _ in range(count):
        parse(text)
    return (time.perf_counter() - started) / count * MS


async def ticker_lags(text: str, seconds: float, *, in_thread: bool) -> list[float]:
    """The 5 ms ticker's lags (ms) while the body is parsed every 50 ms."""
    loop = asyncio.get_running_loop()
    lags: list[float] = []
    stop = loop.time() + seconds

    async def poll() -> None:
        while loop.time() < stop:
            await asyncio.sleep(POLL_S)
            if in_thread:
                await asyncio.to_thread(old_parse, text)
            else:
                parse_metrics(text)

    poller = asyncio.create_task(poll())
    while loop.time() < stop:
        due = loop.time() + TICK_S
        await asyncio.sleep(TICK_S)
        lags.append(max(0.0, loop.time() - due) * MS)
    await poller
    return lags


def run(settings: Settings) -> dict[str, Any]:
    text = Path(BODY).read_text(encoding="utf-8")
    numbers: dict[str, Any] = {
        "body_bytes": len(text.encode()),
        "body_lines": text.count("\n"),
        "line_parser_ms": time_per_body_ms(parse_metrics, text, settings.parses),
        "prometheus_client_ms": time_per_body_ms(old_parse, text, settings.parses),
    }
    for way, in_thread in (("line_parser_on_loop", False), ("prometheus_client_in_thread", True)):
        lags = asyncio.run(ticker_lags(text, settings.loop_s, in_thread=in_thread))
        numbers[way] = {
            "lag_p99_ms": percentile(lags, 99),
            "lag_max_ms": max(lags),
            "ticks": len(lags),
        }
    numbers["speedup"] = numbers["prometheus_client_ms"] / numbers["line_parser_ms"]
    return numbers


def targets(numbers: dict[str, Any]) -> list[Target]:
    return [
        Target(
            "a vLLM body parses at least 5x faster than prometheus_client's parser",
            ">= 5x",
            f"{numbers['speedup']:.1f}x",
            numbers["speedup"] >= 5,
        )
    ]


def report(numbers: dict[str, Any]) -> list[str]:
    fmt = harness.fmt
    rows = [
        ["line parser, on the loop", fmt(numbers["line_parser_ms"])]
        + [fmt(numbers["line_parser_on_loop"][k], ".1f") for k in ("lag_p99_ms", "lag_max_ms")],
        ["prometheus_client, in a thread", fmt(numbers["prometheus_client_ms"])]
        + [
            fmt(numbers["prometheus_client_in_thread"][k], ".1f")
            for k in ("lag_p99_ms", "lag_max_ms")
        ],
    ]
    title = (
        f"vLLM 0.32 /metrics ({numbers['body_bytes'] / 1000:.0f} kB, {numbers['body_lines']} "
        f"lines): parse time, and a 5 ms ticker's lag while parsing every {POLL_S * MS:.0f} ms"
    )
    return [harness.table(title, ["parser", "ms per body", "lag p99 ms", "lag max ms"], rows)]


def main() -> int:
    args = harness.parser(__doc__ or NAME).parse_args()
    settings = QUICK if args.quick else Settings()
    notes = [
        "the ticker's lag is the delay a stream's chunk would be read with while /metrics is "
        "parsed; a real run polls once a second per endpoint, this one 20 times"
    ]
    return harness.measure_and_publish(
        NAME, args, settings, run=run, targets=targets, report=report, notes=notes
    )


if __name__ == "__main__":
    raise SystemExit(main())

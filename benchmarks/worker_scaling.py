"""Worker scaling: tokens per second one run ingests with 1, 2 and 4 runner processes.

A fleet of zero-delay simulated endpoints (huge decode rate, TTFT 0) streams as fast as the
simulators can write; the same closed-loop phase runs once per worker count (``[run] workers``),
through the whole recording path (``Session``: the shard processes, the event pipe, the snapshot
writer). The ceiling is the output tokens every endpoint received over the phase's wall time, and
the result is each count's ceiling as a ratio of one process's, measured in one run so that the
machine's load is shared alike. The simulators run in ``--sim-processes`` processes of their own
so that the server side is less of the bottleneck; on a machine with few cores they compete with
the client for them, and the ratios say more about the machine than the client: the load average
is recorded beside them, and tokens per CPU-second of the client's processes, which does not
depend on how many cores are free.

Usage: ``python benchmarks/worker_scaling.py [--quick]``.
"""

from __future__ import annotations

import asyncio
import os
import resource
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import harness
from harness import Target, fmt

from nvfp4_tui.bench.session import Session
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile, with_overrides
from nvfp4_tui.core.events import Event, PhaseFinished
from nvfp4_tui.sim.process import SimProcess

NAME = "worker_scaling"
FLAT_CURVE = [[1, 1.0], [4096, 1.0]]
FAST_SIM = {
    "decode_tps": 1e7,
    "ttft_s": 0.0,
    "prefill_tps": 1e12,
    "vram_used_mib": 1000.0,
    "concurrency_curve": FLAT_CURVE,
    "tools": False,
}


@dataclass(frozen=True)
class Settings:
    endpoints: int
    concurrency: int  # requests in flight per endpoint
    duration_s: float  # of the one phase, per worker count
    max_tokens: int
    workers: tuple[int, ...]
    sim_processes: int


QUICK = Settings(
    endpoints=8, concurrency=8, duration_s=6.0, max_tokens=512, workers=(1, 2, 4), sim_processes=2
)
FULL = Settings(
    endpoints=32,
    concurrency=16,
    duration_s=20.0,
    max_tokens=1024,
    workers=(1, 2, 4),
    sim_processes=4,
)


def _fleet(directory: Path, settings: Settings) -> tuple[Path, list[Path]]:
    """The run's profile, and one profile per simulator process with its share of endpoints."""
    sims = {f"e{i:02d}": {**FAST_SIM, "seed": i} for i in range(settings.endpoints)}
    whole = harness.write_sim_profile(directory / "fleet.toml", NAME, sims)
    parts = []
    for part in range(settings.sim_processes):
        ids = list(sims)[part :: settings.sim_processes]
        path = directory / f"sim{part}.toml"
        parts.append(harness.write_sim_profile(path, NAME, {i: sims[i] for i in ids}))
    return whole, parts


def _ceiling(workers: int, profile_path: Path, urls: dict[str, str], out: Path, s: Settings):
    profile = with_overrides(
        load_profile(profile_path),
        concurrency=(s.concurrency,),
        duration_s=s.duration_s,
        workers=workers,
    )
    profile = replace(profile, run=replace(profile.run, max_tokens=s.max_tokens, warmup=False))
    plan = plan_run(profile, gpu_telemetry="none").with_urls(urls)
    finished: list[PhaseFinished] = []

    def collect(event: Event) -> None:
        if isinstance(event, PhaseFinished):
            finished.append(event)

    session = Session(plan.profile, plan.suites, out, subscribers=[collect])
    session.open()
    load_before = os.getloadavg()[0]
    cpu_before = _client_cpu_s()
    started = time.perf_counter()
    result = asyncio.run(session.run())
    run_s = time.perf_counter() - started
    cpu_s = _client_cpu_s() - cpu_before
    tokens = sum(p.output_tokens for p in finished)
    wall_s = max(p.wall_s for p in finished)
    return {
        "workers": workers,
        "status": result.status,
        "endpoints": len(finished),
        "requests": sum(p.requests for p in finished),
        "errors": sum(p.errors for p in finished),
        "output_tokens": tokens,
        "phase_wall_s": wall_s,
        "tokens_per_s": tokens / wall_s,
        "run_s": run_s,
        "client_cpu_s": cpu_s,
        "tokens_per_cpu_s": tokens / cpu_s,
        "load_avg_1m_before": load_before,
        "load_avg_1m_after": os.getloadavg()[0],
    }


def _client_cpu_s() -> float:
    """CPU seconds of this process and of its children reaped so far: the worker processes of
    finished runs (the simulators are reaped only at the end)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run(settings: Settings) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        directory = Path(tmp)
        whole, parts = _fleet(directory, settings)
        urls: dict[str, str] = {}
        for part in parts:
            urls |= stack.enter_context(SimProcess(part, port_base=0)).urls
        rows = [_ceiling(w, whole, urls, directory / f"out{w}", settings) for w in settings.workers]
    base = rows[0]["tokens_per_s"]
    for row in rows:
        row["ratio_to_1"] = row["tokens_per_s"] / base
    return {"levels": rows, "nproc": os.cpu_count()}


def report(numbers: dict[str, Any]) -> list[str]:
    rows = [
        [
            str(r["workers"]),
            f"{r['requests']:,}",
            str(r["errors"]),
            f"{r['output_tokens']:,}",
            fmt(r["phase_wall_s"], ".1f"),
            f"{r['tokens_per_s']:,.0f}",
            fmt(r["ratio_to_1"], ".2f"),
            fmt(r["client_cpu_s"], ".1f"),
            f"{r['tokens_per_cpu_s']:,.0f}",
            f"{r['load_avg_1m_before']:.1f} → {r['load_avg_1m_after']:.1f}",
        ]
        for r in numbers["levels"]
    ]
    headers = ["workers", "requests", "errors", "tokens", "phase s", "tokens/s", "× 1"]
    headers += ["client CPU s", "tokens/CPU-s", "load"]
    return [harness.table("Ingest ceiling by worker processes", headers, rows)]


def targets(numbers: dict[str, Any]) -> list[Target]:
    by_workers = {r["workers"]: r for r in numbers["levels"]}
    two = by_workers.get(2)
    measured = ", ".join(f"{w}: ×{r['ratio_to_1']:.2f}" for w, r in by_workers.items())
    return [
        Target(
            "ingest ceiling rises with workers",
            "2 workers ingest more tokens/s than 1",
            measured,
            None if two is None else two["ratio_to_1"] > 1.0,
        )
    ]


NOTES = [
    "tokens/s: output tokens every endpoint received over the longest phase wall time",
    "tokens/CPU-s: the same tokens over the CPU time of the client's processes (the recorder "
    "and its workers, start-up included): flat across worker counts means the ceiling grows "
    "with the cores the workers get",
    "the simulators share the machine's cores with the client: on few cores they cap the ratio",
]


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    return harness.measure_and_publish(
        NAME,
        args,
        QUICK if args.quick else FULL,
        run=run,
        targets=targets,
        report=report,
        notes=NOTES,
    )


if __name__ == "__main__":
    sys.exit(main())

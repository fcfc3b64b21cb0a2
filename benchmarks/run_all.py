"""Run every benchmark, one process each, print their tables and one table of all the targets.

``python benchmarks/run_all.py --quick`` (under 5 minutes on 2 cores) or without ``--quick`` for
the full sizes (about an hour; see benchmarks/README.md). Each benchmark writes
``benchmarks/results/<name>.json``; a failing benchmark is reported and the others still run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import harness

BENCHMARKS: tuple[tuple[str, str], ...] = (
    ("fidelity.py", "fidelity"),
    ("client_ceiling.py", "client_ceiling"),
    ("ui_cost.py", "ui_cost"),
    ("ui_speed.py", "ui_speed"),
    ("store_io.py", "store"),
    ("memory_rss.py", "memory"),
    ("sandbox_throughput.py", "sandbox_throughput"),
    ("peer.py", "peer"),
    ("neighbour.py", "neighbour"),
    ("worker_scaling.py", "worker_scaling"),
    ("real_server.py", "real_server"),
    ("metrics_parse.py", "metrics_parse"),
)


def _run(script: str, quick: bool, results_dir: Path) -> tuple[int, float]:
    command = [sys.executable, str(Path(__file__).with_name(script))]
    command += ["--results-dir", str(results_dir)]
    if quick:
        command.append("--quick")
    print(f"\n=== {script}{' --quick' if quick else ''}", flush=True)
    started = time.perf_counter()
    code = subprocess.run(command, check=False).returncode
    return code, time.perf_counter() - started


def _targets(results_dir: Path, name: str) -> list[harness.Target]:
    path = results_dir / f"{name}.json"
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return [harness.Target(**t) for t in document.get("targets", [])]


def main(argv: list[str] | None = None) -> int:
    args = harness.parser(__doc__.splitlines()[0]).parse_args(argv)
    print(f"machine: {harness.describe_machine(harness.machine())}", flush=True)
    started = time.perf_counter()
    rows: list[list[str]] = []
    targets: list[harness.Target] = []
    failed = 0
    for script, name in BENCHMARKS:
        code, seconds = _run(script, args.quick, args.results_dir)
        failed += code != 0
        rows.append([script, f"{seconds:.0f}", "ok" if code == 0 else f"FAILED (exit {code})"])
        if code == 0:
            targets += _targets(args.results_dir, name)
    total_s = time.perf_counter() - started
    print()
    print(harness.table(f"Benchmarks ({total_s:.0f} s in all)", ["script", "s", "result"], rows))
    print()
    print(harness.targets_table(targets))
    if args.results_dir == harness.RESULTS_DIR:
        # The README shows what this run measured (imported late: it reads BENCHMARKS here).
        import readme_table

        readme_table.main([])
        print(f"\nwrote the performance table of {readme_table.README}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

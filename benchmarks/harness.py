"""What every benchmark script shares: the machine it ran on, CPU and memory readings, results files.

Each benchmark is a script with ``--quick``; it prints its tables with ``tables.format_table`` and
writes ``benchmarks/results/<name>.json`` holding ``machine()`` and its numbers, and a list of
``Target`` verdicts that ``run_all.py`` collects into one table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import aiohttp

from nvfp4_tui.core.stats import percentile
from nvfp4_tui.output.tables import format_table

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_ROOT / "benchmarks" / "results"

CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
MIB = 1024 * 1024
SIM_TTFT_METRIC = "vllm:time_to_first_token_seconds"
# Packages whose versions explain a number: the stack under the client, the UI and the store,
# and the optional speed-ups some benchmarks compare.
VERSIONED_PACKAGES = (
    "aiohttp",
    "polars",
    "textual",
    "nvfp4-tui",
    "uvloop",
    "orjson",
    "msgspec",
    "guidellm",
)


@dataclass(frozen=True)
class Target:
    """One goal from the issue, the number measured against it, and whether it is met."""

    name: str
    goal: str
    measured: str
    met: bool | None  # None: could not be measured here


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def _memory_total_mib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def machine() -> dict[str, Any]:
    """Where the numbers come from: CPUs, memory, OS, Python and the packages that matter."""
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_total_mib": _memory_total_mib(),
        # Other work on the machine inflates every latency and CPU number here: 1, 5, 15 min.
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "packages": package_versions(),
        "git_commit": _git_commit(),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def describe_machine(info: dict[str, Any]) -> str:
    return (
        f"{info['nproc']} CPUs ({info['cpu_model']}), {info['memory_total_mib']} MiB, "
        f"{info['os']}, Python {info['python']}"
    )


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process (not its children), from /proc/PID/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # The command name (field 2) may hold spaces; the fields after its ")" are fixed.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS_PER_S


def rss_mib(pid: int | None = None) -> float:
    """Resident memory of a process (this one by default) in MiB."""
    statm = Path(f"/proc/{pid or 'self'}/statm").read_text().split()
    return int(statm[1]) * PAGE_BYTES / MIB


def child_pids(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux: /proc/PID/task/*/children)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found.extend(int(p) for p in (task / "children").read_text().split())
        except OSError:
            continue
    return sorted(set(found))


def command_line(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


async def sim_ttft_histogram(http: aiohttp.ClientSession, url: str) -> tuple[float, int]:
    """A simulated endpoint's own TTFT histogram as (sum of seconds, count), from /metrics: when
    the simulator really sent each first token, timed from when the request's bytes arrived."""
    async with http.get(f"{url}/metrics") as response:
        text = await response.text()
    found: dict[str, float] = {}
    for line in text.splitlines():
        for suffix in ("_sum", "_count"):
            if line.startswith(f"{SIM_TTFT_METRIC}{suffix}{{"):
                found[suffix] = float(line.rsplit(" ", 1)[1])
    return found["_sum"], int(found["_count"])


def median(values: list[float]) -> float | None:
    return percentile(values, 50)


def slope_per_unit(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of ys over xs; None with fewer than two distinct xs."""
    n = len(xs)
    if n < 2:
        return None
    mean_x = sum(xs) / n
    mean_y = sum(ys) / n
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return None
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread


def fmt(value: float | None, spec: str = ".2f") -> str:
    return "—" if value is None else format(value, spec)


def parser(description: str) -> argparse.ArgumentParser:
    """The options every benchmark takes."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="smaller sizes (the run_all --quick mode)")
    p.add_argument(
        "--results-dir",
        type=Path,
        default=RESULTS_DIR,
        help=f"where <name>.json goes (default: {RESULTS_DIR.relative_to(REPO_ROOT)})",
    )
    return p


def table(title: str, headers: list[str], rows: list[list[str]]) -> str:
    return format_table(headers, rows, title=title)


def targets_table(targets: list[Target]) -> str:
    verdict = {True: "met", False: "NOT met", None: "not measured"}
    rows = [[t.name, t.goal, t.measured, verdict[t.met]] for t in targets]
    return table("Targets", ["target", "goal", "measured", "verdict"], rows)


def write_result(
    name: str,
    results_dir: Path,
    *,
    quick: bool,
    settings: dict[str, Any],
    numbers: dict[str, Any],
    targets: list[Target],
    notes: list[str],
) -> Path:
    """``results_dir/<name>.json`` with the machine, the settings, the numbers and the verdicts."""
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{name}.json"
    document = {
        "benchmark": name,
        "mode": "quick" if quick else "full",
        "machine": machine(),
        "settings": settings,
        "numbers": numbers,
        "targets": [asdict(t) for t in targets],
        "notes": notes,
    }
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n")
    return path


def publish(
    name: str,
    args: argparse.Namespace,
    *,
    settings: dict[str, Any],
    numbers: dict[str, Any],
    targets: list[Target],
    notes: list[str],
    report: list[str],
) -> int:
    """Write the result file, print the report with its targets table, and return exit code 0."""
    path = write_result(
        name,
        args.results_dir,
        quick=args.quick,
        settings=settings,
        numbers=numbers,
        targets=targets,
        notes=notes,
    )
    print_report([*report, targets_table(targets)], path)
    return 0


def measure_and_publish(
    name: str,
    args: argparse.Namespace,
    settings: Any,
    *,
    run: Callable[[Any], dict[str, Any]],
    targets: Callable[[dict[str, Any]], list[Target]],
    report: Callable[[dict[str, Any]], list[str]],
    notes: list[str],
    as_json: Callable[[Any], dict[str, Any]] = asdict,
) -> int:
    """Run a benchmark at ``settings``, judge its numbers against its targets, then write and
    print the result (``publish``)."""
    numbers = run(settings)
    return publish(
        name,
        args,
        settings=as_json(settings),
        numbers=numbers,
        targets=targets(numbers),
        notes=notes,
        report=report(numbers),
    )


def print_report(parts: list[str], path: Path | None = None) -> None:
    print("\n\n".join(parts))
    if path is not None:
        try:
            shown = path.relative_to(REPO_ROOT)
        except ValueError:
            shown = path
        print(f"\nwrote {shown}")
    sys.stdout.flush()


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def write_sim_profile(path: Path, name: str, sims: dict[str, dict[str, Any]]) -> Path:
    """A fleet profile of simulated endpoints (id -> its [endpoint.sim] table) for SimProcess."""
    lines = ["[run]", f"name = {_toml_value(name)}", 'suites = ["english"]', ""]
    for position, (endpoint_id, sim) in enumerate(sims.items()):
        lines += [
            "[[endpoint]]",
            f"id = {_toml_value(endpoint_id)}",
            f'url = "http://127.0.0.1:{30000 + position}"',
            'model = "current"',
            f"gpu = {position}",
            "",
            "[endpoint.sim]",
            *(f"{key} = {_toml_value(value)}" for key, value in sim.items()),
            "",
        ]
    path.write_text("\n".join(lines))
    return path

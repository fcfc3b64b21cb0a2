"""The README's Performance table, written from the benchmarks' results files.

``python benchmarks/readme_table.py`` rewrites the block between the README's performance markers
from ``benchmarks/results/*.json``; ``--check`` only says whether the README still matches them
(a test runs it). ``run_all.py`` rewrites it after every run, so the README shows what the last
run printed and nothing typed by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import harness
from run_all import BENCHMARKS

README = harness.REPO_ROOT / "README.md"
START = "<!-- performance table: written by benchmarks/readme_table.py from benchmarks/results -->"
END = "<!-- end of performance table -->"
VERDICTS = {True: "met", False: "**not met**", None: "—"}  # None: a figure with no goal to meet


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _when(result: dict[str, Any]) -> str:
    info = result["machine"]
    load = "/".join(f"{x:g}" for x in info["load_average"])
    mode = "--quick" if result["mode"] == "quick" else "full size"
    return f"{mode}, {info['measured_at'][:10]}, load {load}, {info['git_commit'] or '?'}"


def table(results_dir: Path) -> str:
    """The Markdown block: a row per target of every benchmark that left a result."""
    results: list[tuple[str, dict[str, Any]]] = []
    for script, name in BENCHMARKS:
        path = results_dir / f"{name}.json"
        if path.exists():
            results.append((script, json.loads(path.read_text())))
    machines = {harness.describe_machine(r["machine"]) for _, r in results}
    lines = [
        START,
        "",
        f"Measured on {'; '.join(sorted(machines))}.",
        "",
        "| benchmark | measure | target | result | verdict | run |",
        "|---|---|---|---:|---|---|",
    ]
    for script, result in results:
        for target in result["targets"]:
            cells = (
                f"`{script}`",
                target["name"],
                target["goal"],
                target["measured"],
                VERDICTS[target["met"]],
                _when(result),
            )
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += ["", END]
    return "\n".join(lines)


def with_table(readme: str, block: str) -> str:
    """``readme`` with the block between the markers replaced by ``block``."""
    try:
        head, rest = readme.split(START, 1)
        _, tail = rest.split(END, 1)
    except ValueError:
        raise SystemExit(f"{README}: the performance markers are missing ({START!r})") from None
    return head + block + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results-dir", type=Path, default=harness.RESULTS_DIR)
    parser.add_argument("--check", action="store_true", help="exit 1 if the README is stale")
    args = parser.parse_args(argv)
    current = README.read_text()
    wanted = with_table(current, table(args.results_dir))
    if args.check:
        if wanted != current:
            print(
                f"{README}: the performance table differs from {args.results_dir}; rerun "
                "python benchmarks/readme_table.py"
            )
            return 1
        return 0
    README.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())

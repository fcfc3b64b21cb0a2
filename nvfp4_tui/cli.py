"""The `nvfp4-tui` command line: parses it and hands each subcommand to `launch`, which runs it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from nvfp4_tui import __version__
from nvfp4_tui.launch import arguments as arg
from nvfp4_tui.launch.entry import Command, exit_code
from nvfp4_tui.launch.follow_command import follow_command
from nvfp4_tui.launch.host_commands import (
    gpus_command,
    init_command,
    serve_command,
    sim_command,
)
from nvfp4_tui.launch.run_commands import demo_command, run_command
from nvfp4_tui.launch.snapshot_commands import (
    compare_command,
    export_command,
    import_command,
    replay_command,
    report_command,
    trials_command,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nvfp4-tui",
        description="Monitor and benchmark a box of GPUs serving LLMs behind OpenAI-compatible APIs.",
    )
    parser.add_argument("--version", action="version", version=f"nvfp4-tui {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="run the simulated 7-GPU fleet (no GPU or network needed)")
    arg.add_plan_options(demo)
    demo.add_argument(
        "--profile",
        type=Path,
        default=arg.DEMO_PROFILE,
        help="a profile of simulated endpoints (default: the shipped demo fleet)",
    )
    demo.add_argument(
        "--full",
        action="store_true",
        help="the seed's whole plan: every suite, 2 requests per prompt (about 12 minutes)",
    )
    demo.add_argument(
        "--time-scale", type=arg.time_scale, default=1.0, help="run the simulator's clock faster"
    )
    demo.add_argument(
        "--gpu-telemetry",
        choices=arg.HOST_TELEMETRY,
        default="sim",
        help="where GPU samples come from (default: the simulator)",
    )

    run = sub.add_parser("run", help="benchmark the endpoints of a fleet profile")
    run.add_argument("profile", type=Path)
    arg.add_plan_options(run)

    sim = sub.add_parser("sim", help="serve a profile's simulated endpoints on 127.0.0.1")
    sim.add_argument("profile", type=Path, nargs="?", help="(not with --write-profile)")
    sim.add_argument("--port-base", type=int, help="first port (default: chosen by the OS)")
    sim.add_argument("--time-scale", type=arg.time_scale, default=1.0)
    sim.add_argument(
        "--write-profile",
        type=Path,
        metavar="FILE",
        help="write a simulated fleet's profile (--nodes x --gpus-per-node endpoints) and exit",
    )
    sim.add_argument("--nodes", type=int, default=8, help="with --write-profile (default 8)")
    sim.add_argument(
        "--gpus-per-node", type=int, default=8, help="with --write-profile (default 8)"
    )

    init = sub.add_parser("init", help="write a profile from running endpoints or a compose file")
    init.add_argument(
        "urls", nargs="*", metavar="URL", help="endpoints to probe (alone, without --hosts/--ports)"
    )
    init.add_argument("--hosts", type=arg.name_list, help="hosts to scan (default 127.0.0.1)")
    init.add_argument("--ports", help="ports to scan on them (default 8000-8031)")
    init.add_argument(
        "--from-compose", type=Path, metavar="FILE", help="read a docker-compose file"
    )
    init.add_argument("--out", type=Path, default=Path("profile.toml"), help="default profile.toml")
    init.add_argument("--force", action="store_true", help="overwrite --out if it exists")

    gpus = sub.add_parser("gpus", help="print the GPUs and metrics sources this host can see")
    gpus.add_argument("--profile", type=Path)
    _add_snapshot_commands(sub)
    for detachable in (demo, run):
        detachable.add_argument(
            "--detach",
            action="store_true",
            help="run in the background, surviving the terminal; prints how to follow it",
        )
    # An abbreviation that works today (--headles for --headless) would mean another flag, or
    # nothing, once a flag sharing its start is added: every flag is spelled out.
    for command in (parser, *sub.choices.values()):
        command.allow_abbrev = False
    return parser


def _add_snapshot_commands(sub: argparse._SubParsersAction) -> None:
    replay = sub.add_parser("replay", help="play a recorded run through the monitor")
    replay.add_argument("snapshot", type=Path)
    replay.add_argument(
        "--speed", type=arg.speed, default=1.0, help="x1, x2, x5, x10, x60 or max (default 1)"
    )
    replay.add_argument("--headless", action="store_true", help="no UI: the report and counts")

    follow = sub.add_parser("follow", help="watch a run that another process is writing")
    follow.add_argument(
        "snapshot", type=Path, nargs="?", help="default: the newest running one under --root"
    )
    follow.add_argument("--root", type=Path, default=arg.DEFAULT_OUT, help="default snapshots/")
    follow.add_argument(
        "--headless",
        action="store_true",
        help="no UI: progress lines, then the summary; exit 0 complete, 1 aborted, 4 read in part",
    )
    follow.add_argument(
        "--json",
        action="store_true",
        help="with --headless: every pane's figures as one JSON object per endpoint per second",
    )

    export = sub.add_parser(
        "export", help="write a snapshot as Parquet, CSV, JSON, Markdown or figures (PNG, SVG)"
    )
    export.add_argument("snapshot", type=Path)
    export.add_argument("--format", required=True, choices=arg.EXPORT.names, help=arg.EXPORT.help)
    export.add_argument(
        "--out", type=Path, required=True, help="a directory (parquet, csv, figures) or a file"
    )

    report = sub.add_parser("report", help="print a snapshot's leaderboard, tables and charts")
    report.add_argument("snapshot", type=Path)
    report.add_argument(
        "--format",
        default="text",
        choices=arg.REPORT.names,
        help=arg.REPORT.help,
    )
    report.add_argument(
        "--figures",
        type=Path,
        metavar="DIR",
        help="with --format markdown: the full write-up, its figures written to DIR and linked",
    )
    report.add_argument(
        "--slice", type=float, metavar="S", help="every phase's figures also per S seconds"
    )

    trials = sub.add_parser("trials", help="each figure's mean and 95%% interval over runs")
    trials.add_argument("snapshots", type=Path, nargs="+", metavar="SNAPSHOT")
    trials.add_argument("--format", default="text", choices=("text", "markdown", "json"))
    trials.add_argument("--versus", type=Path, nargs="+", metavar="SNAPSHOT", default=[])

    legacy = sub.add_parser("import", help="turn the seed script's benchmark JSON into a snapshot")
    legacy.add_argument("legacy", type=Path, metavar="LEGACY.json")
    legacy.add_argument("--out", type=Path, required=True, help="the new snapshot directory")

    compare = sub.add_parser("compare", help="what changed from run A to run B, with significance")
    compare.add_argument("a", type=Path)
    compare.add_argument("b", type=Path)
    compare.add_argument(
        "--format",
        default="text",
        choices=arg.COMPARE.names,
        help=arg.COMPARE.help,
    )
    compare.add_argument(
        "--score",
        default=None,
        choices=("heuristic", "verified", "judge"),
        help="the quality score compared (default: verified, or heuristic when a run has no "
        "verified scores)",
    )
    compare.add_argument(
        "--ui", action="store_true", help="show the comparison in the monitor instead of printing"
    )

    serve = sub.add_parser(
        "serve",
        help="show `demo`, `replay` or `follow` in a browser (textual-serve)",
        description="Serve `nvfp4-tui ARGS…` to browsers: each tab starts its own ARGS process. "
        "Binds 127.0.0.1; reach it through an SSH tunnel.",
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="the address to bind (default: loopback)"
    )
    serve.add_argument("--port", type=int, default=8000, help="the port to bind (default: 8000)")
    serve.add_argument(
        "--max-sessions",
        type=int,
        default=4,
        help="browser tabs open at once, each running its own ARGS process (default: 4)",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="NAME",
        help="another name or address of this host that browsers may use (repeatable)",
    )
    serve.add_argument(
        "served", nargs=argparse.REMAINDER, metavar="ARGS", help="e.g. demo, replay SNAPSHOT"
    )


def commands() -> dict[str, Command]:
    return {
        "demo": demo_command,
        "run": run_command,
        "sim": sim_command,
        "gpus": gpus_command,
        "init": init_command,
        "replay": replay_command,
        "follow": follow_command,
        "export": export_command,
        "report": report_command,
        "trials": trials_command,
        "import": import_command,
        "compare": compare_command,
        "serve": partial(serve_command, parse=lambda served: build_parser().parse_args(served)),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return exit_code(commands()[args.command], args)


if __name__ == "__main__":
    import sys

    sys.exit(main())

"""The `nvfp4-tui` command: parses arguments and hands each subcommand to the module that owns it."""

from __future__ import annotations

import argparse
import math
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from nvfp4_tui import __version__
from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.outside_text import outside_line, outside_text

# A simulator clock this many times real time still times tokens to the millisecond.
MAX_TIME_SCALE = 1000.0
# Shipped in the package, so that `demo` works from any directory of any install.
DEFAULT_OUT = Path("snapshots")


class UsageError(Exception):
    """A bad command line or input file: one line, exit 2."""


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected integers separated by commas, got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected integers >= 1, got {text!r}")
    return values


def _rate_list(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected requests/s separated by commas, got {text!r}"
        ) from None
    if not values or not all(0 < v < float("inf") for v in values):
        raise argparse.ArgumentTypeError(f"expected requests/s > 0, got {text!r}")
    return values


def _name_list(text: str) -> tuple[str, ...]:
    values = tuple(x.strip() for x in text.split(",") if x.strip())
    if not values:
        raise argparse.ArgumentTypeError(f"expected names separated by commas, got {text!r}")
    return values


def _add_plan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="snapshot root (default snapshots/)"
    )
    p.add_argument("--suites", type=_name_list, help="suites to run, e.g. english,math")
    p.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="run at most N prompts per suite, a sample picked by the run's seed",
    )
    load = p.add_mutually_exclusive_group()
    load.add_argument("--concurrency", type=_int_list, help="concurrency levels, e.g. 1,4")
    load.add_argument("--rate", type=_rate_list, help="open loop: requests/s per level, e.g. 2,4")
    p.add_argument(
        "--arrivals", choices=("constant", "poisson"), help="open-loop arrivals (default poisson)"
    )
    p.add_argument(
        "--sweep", action="store_true", help="climb the load until a stop rule fires; report knees"
    )
    bound = p.add_mutually_exclusive_group()
    bound.add_argument("--requests", type=int, help="requests per prompt per phase")
    bound.add_argument("--duration", type=float, help="seconds per phase instead of a count")
    p.add_argument(
        "--workers",
        type=int,
        help="runner processes to share the endpoints over (default: from endpoints and cores)",
    )
    p.add_argument("--headless", action="store_true", help="no UI: progress lines and a summary")
    p.add_argument(
        "--json",
        action="store_true",
        help="with --headless: every pane's figures as one JSON object per endpoint per second",
    )


def _time_scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_TIME_SCALE):
        raise argparse.ArgumentTypeError(
            f"expected a number above 0 and at most {MAX_TIME_SCALE:g}, got {text!r}"
        )
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nvfp4-tui",
        description="Monitor and benchmark a box of GPUs serving LLMs behind OpenAI-compatible APIs.",
    )
    parser.add_argument("--version", action="version", version=f"nvfp4-tui {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="run the simulated 7-GPU fleet (no GPU or network needed)")
    _add_plan_options(demo)
    demo.add_argument(
        "--profile",
        type=Path,
        default=DEMO_PROFILE,
        help="a profile of simulated endpoints (default: the shipped demo fleet)",
    )
    demo.add_argument(
        "--full",
        action="store_true",
        help="the seed's whole plan: every suite, 2 requests per prompt (about 12 minutes)",
    )
    demo.add_argument(
        "--time-scale", type=_time_scale, default=1.0, help="run the simulator's clock faster"
    )
    demo.add_argument(
        "--gpu-telemetry",
        choices=("sim", "nvml", "none"),
        default="sim",
        help="where GPU samples come from (default: the simulator)",
    )

    run = sub.add_parser("run", help="benchmark the endpoints of a fleet profile")
    run.add_argument("profile", type=Path)
    _add_plan_options(run)

    sim = sub.add_parser("sim", help="serve a profile's simulated endpoints on 127.0.0.1")
    sim.add_argument("profile", type=Path, nargs="?", help="(not with --write-profile)")
    sim.add_argument("--port-base", type=int, help="first port (default: chosen by the OS)")
    sim.add_argument("--time-scale", type=_time_scale, default=1.0)
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
    init.add_argument("--hosts", type=_name_list, help="hosts to scan (default 127.0.0.1)")
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


def _check_out(out: Path) -> None:
    """A ``--out`` that cannot hold snapshots is bad input (exit 2), refused before the run."""
    from nvfp4_tui.store.manifest import SnapshotError
    from nvfp4_tui.store.writer import check_out_root

    try:
        check_out_root(out)
    except SnapshotError as e:
        raise UsageError(str(e)) from None


# `demo --full`: the seed's plan, every built-in suite at each level, 2 requests per prompt.
FULL_DEMO_SUITES = ("english", "japanese", "math", "coding", "design", "tool_call")
FULL_DEMO_REQUESTS = 2


def _load_profile(args: argparse.Namespace):
    """The profile with the command line's overrides; a bad profile or ``--out`` is exit 2."""
    from nvfp4_tui.config.profile import load_profile, with_overrides

    profile = load_profile(args.profile)
    _check_out(args.out)
    if getattr(args, "full", False):  # under the options given beside it
        profile = with_overrides(profile, suites=FULL_DEMO_SUITES, requests=FULL_DEMO_REQUESTS)
    return with_overrides(
        profile,
        suites=args.suites,
        concurrency=args.concurrency,
        requests=args.requests,
        duration_s=args.duration,
        rate_rps=args.rate,
        arrivals=args.arrivals,
        sweep=args.sweep,
        workers=args.workers,
        sample=args.limit,
    )


def cmd_run(args: argparse.Namespace) -> int:
    profile = _load_profile(args)
    from nvfp4_tui.launch.run import run_profile

    return run_profile(profile, args.out, headless=args.headless, json_lines=args.json)


def cmd_demo(args: argparse.Namespace) -> int:
    profile = _load_profile(args)
    from nvfp4_tui.launch.run import run_demo

    return run_demo(
        profile,
        args.out,
        headless=args.headless,
        time_scale=args.time_scale,
        gpu_telemetry=args.gpu_telemetry,
        json_lines=args.json,
    )


def cmd_sim(args: argparse.Namespace) -> int:
    from nvfp4_tui.config.profile import load_profile
    from nvfp4_tui.sim.fleet import serve_forever

    if args.write_profile is not None:
        return _write_fleet_profile(args)
    if args.profile is None:
        raise UsageError("sim: give a profile to serve, or --write-profile FILE")
    return serve_forever(
        load_profile(args.profile), port_base=args.port_base, time_scale=args.time_scale
    )


def _write_fleet_profile(args: argparse.Namespace) -> int:
    from nvfp4_tui.sim.fleet_profile import fleet_profile_text

    if args.profile is not None:
        raise UsageError("sim: --write-profile writes a profile; it takes no profile to serve")
    if args.write_profile.exists():
        raise UsageError(f"{args.write_profile}: exists; not overwritten")
    try:
        text = fleet_profile_text(args.nodes, args.gpus_per_node)
    except ValueError as e:
        raise UsageError(f"sim --write-profile: {e}") from None
    args.write_profile.write_text(text)
    print(f"wrote {args.write_profile}: {args.nodes * args.gpus_per_node} simulated endpoints")
    return exit_codes.OK


def cmd_gpus(args: argparse.Namespace) -> int:
    from nvfp4_tui.config.profile import load_profile
    from nvfp4_tui.telemetry.gpus_command import gpus_command

    return gpus_command(load_profile(args.profile) if args.profile else None)


def cmd_init(args: argparse.Namespace) -> int:
    from nvfp4_tui.profile_init import init_profile

    written = init_profile(
        args.out,
        force=args.force,
        compose=args.from_compose,
        hosts=args.hosts,
        ports=args.ports,
        urls=args.urls,
    )
    print(f"wrote {args.out}: {len(written.endpoints)} endpoints")
    for d in written.endpoints:
        guess = f"  class {d.class_guess.model_class} (a guess)" if d.class_guess else ""
        print(f"  {d.id:<16} {d.url:<24} model {d.model}  gpu {d.gpu}{guess}")
    for line in written.left_out:
        print(f"  {line}")
    print(f"next: check its labels, GPUs and classes, then nvfp4-tui run {args.out}")
    return exit_codes.OK


# ---- replay, follow, detach, export, report, import, compare


def _speed(text: str) -> float | None:
    from nvfp4_tui.sources.replay import parse_speed

    try:
        return parse_speed(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _add_snapshot_commands(sub: argparse._SubParsersAction) -> None:
    replay = sub.add_parser("replay", help="play a recorded run through the monitor")
    replay.add_argument("snapshot", type=Path)
    replay.add_argument(
        "--speed", type=_speed, default=1.0, help="x1, x2, x5, x10, x60 or max (default 1)"
    )
    replay.add_argument("--headless", action="store_true", help="no UI: the report and counts")

    follow = sub.add_parser("follow", help="watch a run that another process is writing")
    follow.add_argument(
        "snapshot", type=Path, nargs="?", help="default: the newest running one under --root"
    )
    follow.add_argument("--root", type=Path, default=DEFAULT_OUT, help="default snapshots/")
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
    export.add_argument(
        "--format", required=True, choices=("parquet", "csv", "json", "markdown", "figures")
    )
    export.add_argument(
        "--out", type=Path, required=True, help="a directory (parquet, csv, figures) or a file"
    )

    report = sub.add_parser("report", help="print a snapshot's leaderboard, tables and charts")
    report.add_argument("snapshot", type=Path)
    report.add_argument(
        "--format",
        default="text",
        choices=("text", "json", "markdown", "html"),
        help="html: one self-contained file with the figures (needs the figures extra)",
    )
    report.add_argument(
        "--figures",
        type=Path,
        metavar="DIR",
        help="with --format markdown: the full write-up, its figures written to DIR and linked",
    )

    legacy = sub.add_parser("import", help="turn the seed script's benchmark JSON into a snapshot")
    legacy.add_argument("legacy", type=Path, metavar="LEGACY.json")
    legacy.add_argument("--out", type=Path, required=True, help="the new snapshot directory")

    compare = sub.add_parser("compare", help="what changed from run A to run B, with significance")
    compare.add_argument("a", type=Path)
    compare.add_argument("b", type=Path)
    compare.add_argument(
        "--format",
        default="text",
        choices=("text", "markdown", "json"),
        help="json: every figure with stable keys, for scripts (README)",
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


def _snapshot_errors_are_usage(action: Callable[[], int]) -> int:
    from nvfp4_tui.store.manifest import SnapshotError

    try:
        return action()
    except SnapshotError as e:
        raise UsageError(str(e)) from None


def _said_unreadable(path: Path, warnings: Sequence[str]) -> int:
    """Print each file or row of the snapshot at ``path`` that could not be read, and what that
    means, on stderr; DAMAGED when there was one, else OK."""
    skipped = list(dict.fromkeys(warnings))  # a follow and its final read name a part alike
    for warning in skipped:
        print(f"warning: {outside_line(warning)}", file=sys.stderr)
    if not skipped:
        return exit_codes.OK
    print(
        f"nvfp4-tui: {outside_line(str(path))} was read only in part: {len(skipped)} file(s) or "
        f"row(s) skipped, named above; the output leaves them out (exit {exit_codes.DAMAGED})",
        file=sys.stderr,
    )
    return exit_codes.DAMAGED


def _run_source_ui(source, title: str) -> int:
    from nvfp4_tui.launch.ui import run_source_ui

    return run_source_ui(source, title)


def cmd_replay(args: argparse.Namespace) -> int:
    def replay() -> int:
        from nvfp4_tui.output.report import render_snapshot
        from nvfp4_tui.sources.replay import ReplaySource
        from nvfp4_tui.store.reader import open_snapshot

        snapshot = open_snapshot(args.snapshot)
        if args.headless:
            print(render_snapshot(snapshot, "text"))
            print(
                outside_line(
                    f"{snapshot.event_count} events; run {snapshot.status_label}; "
                    f"snapshot: {snapshot.path}"
                ),
                flush=True,
            )
            return _said_unreadable(snapshot.path, snapshot.warnings)
        # The monitor prints the snapshot's warnings when it exits, where they stay in view.
        source = ReplaySource(snapshot, speed=args.speed)
        return _run_source_ui(source, f"replay {snapshot.run_id}")

    return _snapshot_errors_are_usage(replay)


async def _follow_headless(source, json_lines: bool) -> None:
    import asyncio

    from nvfp4_tui.launch.run import PhasePrinter
    from nvfp4_tui.output.pane_json import PaneJsonLines

    panes = PaneJsonLines() if json_lines else None
    # With --json the human lines still go out, on stderr.
    printer = PhasePrinter(sys.stderr if json_lines else None)
    ticker = asyncio.create_task(panes.print_every()) if panes is not None else None
    try:
        async for batch in source.batches():
            for event in batch:
                printer(event)
                if panes is not None:
                    panes(event)
    finally:
        if ticker is not None:
            ticker.cancel()
    if panes is not None:
        panes.print_now(unless_printed=True)


def cmd_follow(args: argparse.Namespace) -> int:
    _json_needs_headless(args)

    def follow() -> int:
        import asyncio

        from nvfp4_tui.bench.outage import ServerDeaths
        from nvfp4_tui.output.report import render_snapshot
        from nvfp4_tui.sources.follow import FollowSource, find_newest_running
        from nvfp4_tui.store.manifest import read_manifest
        from nvfp4_tui.store.reader import open_snapshot

        path = args.snapshot or find_newest_running(args.root)
        if path is None:
            raise UsageError(
                f"no running snapshot under {args.root}; name one: nvfp4-tui follow SNAPSHOT"
            )
        manifest = read_manifest(path)
        source = FollowSource(path)
        if not args.headless:
            return _run_source_ui(source, f"follow {manifest['run_id']}")
        human = sys.stderr if args.json else sys.stdout
        following = f"following {path} (run {manifest['status']})"
        print(outside_line(following), file=human, flush=True)
        asyncio.run(_follow_headless(source, args.json))
        snapshot = open_snapshot(path)
        if not args.json:
            print(render_snapshot(snapshot, detail=False))
        print(outside_line(f"run {source.run_status}; snapshot: {path}"), file=human, flush=True)
        if _said_unreadable(path, [*source.warnings, *snapshot.warnings]):
            return exit_codes.DAMAGED
        if source.run_status != "complete":
            return exit_codes.FAILED
        deaths = ServerDeaths()
        for event in snapshot.events():
            deaths(event)
        return exit_codes.SERVER_DIED if deaths.died else exit_codes.OK

    return _snapshot_errors_are_usage(follow)


def _figures_extra(action: Callable[[], int]) -> int:
    """``action``, with a missing matplotlib told as the one line that says how to install it."""
    from nvfp4_tui.output.figures import FiguresExtraMissing

    try:
        return _snapshot_errors_are_usage(action)
    except FiguresExtraMissing as e:
        raise UsageError(str(e)) from None


def cmd_export(args: argparse.Namespace) -> int:
    def export() -> int:
        from nvfp4_tui.output.export import write_export
        from nvfp4_tui.store.reader import open_snapshot

        snapshot = open_snapshot(args.snapshot)
        for path in write_export(snapshot, args.format, args.out):
            print(path, flush=True)
        return _said_unreadable(snapshot.path, snapshot.warnings)

    def figures() -> int:
        from nvfp4_tui.core.figures.plot_data import Omitted
        from nvfp4_tui.output.figures.files import snapshot_figures, write_figures
        from nvfp4_tui.store.reader import open_snapshot

        published = snapshot_figures(open_snapshot(args.snapshot))
        for path in write_figures(published, args.out):
            print(path)
        for figure in published:
            if isinstance(figure, Omitted):
                print(f"left out: {figure.name}: {figure.reason}", file=sys.stderr)
        return 0

    if args.format == "figures":
        return _figures_extra(figures)
    return _snapshot_errors_are_usage(export)


def cmd_report(args: argparse.Namespace) -> int:
    if args.figures is not None and args.format != "markdown":
        raise UsageError("--figures goes with --format markdown (html carries its figures inside)")

    def report() -> int:
        from nvfp4_tui.output.report import render_snapshot
        from nvfp4_tui.store.reader import open_snapshot

        snapshot = open_snapshot(args.snapshot)
        print(render_snapshot(snapshot, args.format), flush=True)
        return _said_unreadable(snapshot.path, snapshot.warnings)

    def writeup() -> int:
        from nvfp4_tui.output.writeup import render_writeup
        from nvfp4_tui.store.reader import open_snapshot

        text = render_writeup(open_snapshot(args.snapshot), args.format, figures_dir=args.figures)
        sys.stdout.write(text)
        return 0

    if args.format == "html" or args.figures is not None:
        return _figures_extra(writeup)
    return _snapshot_errors_are_usage(report)


def cmd_import(args: argparse.Namespace) -> int:
    def legacy_import() -> int:
        from nvfp4_tui.store.legacy import (
            LegacyError,
            import_legacy,
            in_flight_note,
            recorded_in_flight,
        )
        from nvfp4_tui.store.manifest import read_manifest

        try:
            path = import_legacy(args.legacy, args.out)
        except LegacyError as e:
            raise UsageError(str(e)) from None
        print(f"snapshot: {path}")
        # The script launched every prompt x N at once: its levels are not what they say.
        levels = recorded_in_flight(read_manifest(path))
        if levels:
            print(f"levels:   {in_flight_note(levels)}")
        print(f"report:   nvfp4-tui report {path}")
        return 0

    return _snapshot_errors_are_usage(legacy_import)


def cmd_compare(args: argparse.Namespace) -> int:
    def compare() -> int:
        from nvfp4_tui.output.compare import compare_snapshots, render_comparison
        from nvfp4_tui.store.reader import open_snapshot

        a, b = open_snapshot(args.a), open_snapshot(args.b)
        comparison = compare_snapshots(a, b, score=args.score)
        if args.ui:
            from nvfp4_tui.launch.ui import run_compare_ui

            code = run_compare_ui(comparison)
        else:
            print(render_comparison(comparison, args.format), flush=True)
            code = exit_codes.OK
        damaged = [_said_unreadable(run.path, run.warnings) for run in (a, b)]
        return exit_codes.DAMAGED if exit_codes.DAMAGED in damaged else code

    return _snapshot_errors_are_usage(compare)


def _json_needs_headless(args: argparse.Namespace) -> None:
    if args.json and not args.headless:
        raise UsageError("--json goes with --headless (the monitor shows the panes itself)")


def cmd_run_or_detach(args: argparse.Namespace) -> int:
    _json_needs_headless(args)
    if not args.detach:
        return cmd_run(args)
    if args.headless:
        raise UsageError("--detach and --headless: choose one (a detached run has no terminal)")
    from nvfp4_tui.launch.detach import DetachError, detach_run, print_detached

    try:
        print_detached(detach_run(_load_profile(args), args.out))
    except DetachError as e:
        print(f"nvfp4-tui: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_demo_or_detach(args: argparse.Namespace) -> int:
    _json_needs_headless(args)
    if not args.detach:
        return cmd_demo(args)
    if args.headless:
        raise UsageError("--detach and --headless: choose one (a detached run has no terminal)")
    from nvfp4_tui.launch.detach import DetachError, detach_demo, print_detached

    try:
        detached = detach_demo(
            _load_profile(args),
            args.out,
            time_scale=args.time_scale,
            gpu_telemetry=args.gpu_telemetry,
        )
    except DetachError as e:
        print(f"nvfp4-tui: {e}", file=sys.stderr)
        return 1
    print_detached(detached)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from nvfp4_tui.launch.serve import ServeError, serve

    try:
        # The served arguments fail here, once, rather than in every browser tab.
        parsed = build_parser().parse_args(args.served) if args.served else argparse.Namespace()
        return serve(
            args.served, parsed, args.host, args.port, args.max_sessions, args.allow_origin
        )
    except ServeError as e:
        raise UsageError(str(e)) from None


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "demo": cmd_demo_or_detach,
    "run": cmd_run_or_detach,
    "sim": cmd_sim,
    "gpus": cmd_gpus,
    "init": cmd_init,
    "replay": cmd_replay,
    "follow": cmd_follow,
    "export": cmd_export,
    "report": cmd_report,
    "import": cmd_import,
    "compare": cmd_compare,
    "serve": cmd_serve,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (ConfigError, UsageError) as e:
        if args.debug:
            traceback.print_exc()
        print(outside_text(str(e)), file=sys.stderr)
        return exit_codes.USAGE
    except KeyboardInterrupt:
        return exit_codes.STOPPED
    except BrokenPipeError:
        # The reader of stdout went away (``| head``): what it wanted it has. Point stdout at
        # /dev/null, so that flushing it at exit does not fail a second time.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return exit_codes.OK
    except Exception as e:  # the one place an unexpected failure becomes a one-line message
        if args.debug:
            raise
        print(
            outside_line(
                f"nvfp4-tui: {type(e).__name__}: {e} (run with --debug for the traceback)"
            ),
            file=sys.stderr,
        )
        return exit_codes.FAILED


if __name__ == "__main__":
    sys.exit(main())

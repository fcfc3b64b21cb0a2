"""`follow`: watch a run another process is writing, in the monitor or as progress lines.

Headless, it exits as the run ended: 0 complete, 1 aborted, 4 the snapshot was read only in
part, 5 a server died during it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.launch.usage import (
    UsageError,
    json_needs_headless,
    said_unreadable,
    usage_errors,
)

if TYPE_CHECKING:
    from nvfp4_tui.sources.follow import FollowSource


def follow_command(args: argparse.Namespace) -> int:
    json_needs_headless(args)
    with usage_errors():
        return _follow(args)


def _follow(args: argparse.Namespace) -> int:
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
        from nvfp4_tui.launch.ui import run_source_ui

        return run_source_ui(source, f"follow {manifest['run_id']}")
    human = sys.stderr if args.json else sys.stdout
    following = f"following {path} (run {manifest['status']})"
    print(outside_line(following), file=human, flush=True)
    asyncio.run(_print_events(source, args.json))
    snapshot = open_snapshot(path)
    if not args.json:
        print(render_snapshot(snapshot, detail=False))
    print(outside_line(f"run {source.run_status}; snapshot: {path}"), file=human, flush=True)
    if said_unreadable(path, [*source.warnings, *snapshot.warnings]):
        return exit_codes.DAMAGED
    if source.run_status != "complete":
        return exit_codes.FAILED
    deaths = ServerDeaths()
    for event in snapshot.events():
        deaths(event)
    return exit_codes.SERVER_DIED if deaths.died else exit_codes.OK


async def _print_events(source: FollowSource, json_lines: bool) -> None:
    from nvfp4_tui.launch.run import PhasePrinter
    from nvfp4_tui.output.pane_json import PaneJsonLines, printing_panes

    panes = PaneJsonLines() if json_lines else None
    # With --json the human lines still go out, on stderr.
    printer = PhasePrinter(sys.stderr if json_lines else None)
    async with printing_panes(panes):
        async for batch in source.batches():
            for event in batch:
                printer(event)
                if panes is not None:
                    panes(event)

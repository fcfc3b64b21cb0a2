"""Commands that read recorded runs: `replay`, `export`, `report`, `import` and `compare`.

Every one of them tells a snapshot it cannot open as bad input (exit 2) and one it read only in
part as exit 4, after its output.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.launch.usage import UsageError, said_unreadable, usage_errors
from nvfp4_tui.output.formats import COMPARE, EXPORT, REPORT


def replay_command(args: argparse.Namespace) -> int:
    from nvfp4_tui.launch.ui import run_source_ui
    from nvfp4_tui.output.report import render_snapshot
    from nvfp4_tui.sources.replay import ReplaySource
    from nvfp4_tui.store.reader import open_snapshot

    with usage_errors():
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
            return said_unreadable(snapshot.path, snapshot.warnings)
        # The monitor prints the snapshot's warnings when it exits, where they stay in view.
        source = ReplaySource(snapshot, speed=args.speed)
        return run_source_ui(source, f"replay {snapshot.run_id}")


def export_command(args: argparse.Namespace) -> int:
    from nvfp4_tui.store.reader import open_snapshot

    chosen = EXPORT[args.format]
    with usage_errors():
        snapshot = open_snapshot(args.snapshot)
        for written in chosen.writer()(snapshot, chosen.name, args.out):
            if isinstance(written, Path):
                print(written, flush=True)
            else:  # a figure the snapshot cannot support
                print(f"left out: {written.name}: {written.reason}", file=sys.stderr)
        return said_unreadable(snapshot.path, snapshot.warnings)


def _slice(slice_s: float, fmt: str) -> float:
    if not (math.isfinite(slice_s) and slice_s > 0):
        raise UsageError(f"--slice: expected seconds > 0, got {slice_s:g}")
    if fmt not in ("text", "markdown", "json"):
        raise UsageError(f"--slice goes with --format text, markdown or json, not {fmt}")
    return slice_s


def report_command(args: argparse.Namespace) -> int:
    from nvfp4_tui.output.report import render_snapshot
    from nvfp4_tui.store.reader import open_snapshot

    if args.figures is not None and args.format != "markdown":
        raise UsageError("--figures goes with --format markdown (html carries its figures inside)")
    chosen = REPORT[args.format]
    with usage_errors():
        snapshot = open_snapshot(args.snapshot)
        if args.figures is not None:  # the Markdown write-up, its figures beside it
            from nvfp4_tui.output.writeup import render_writeup

            text = render_writeup(snapshot, "markdown", figures_dir=args.figures)
        elif args.slice is not None:
            text = render_snapshot(snapshot, chosen.name, slice_s=_slice(args.slice, chosen.name))
        else:
            text = chosen.writer()(snapshot, chosen.name)
        print(text.removesuffix("\n"), flush=True)
        return said_unreadable(snapshot.path, snapshot.warnings)


def trials_command(args: argparse.Namespace) -> int:
    from nvfp4_tui.output.trials_report import render_trials
    from nvfp4_tui.store.reader import open_snapshot

    with usage_errors():
        snapshots = [open_snapshot(path) for path in args.snapshots]
        versus = [open_snapshot(path) for path in args.versus]
        print(render_trials(snapshots, args.format, versus), flush=True)
        codes = [said_unreadable(s.path, s.warnings) for s in [*snapshots, *versus]]
        return next((code for code in codes if code != exit_codes.OK), exit_codes.OK)


def import_command(args: argparse.Namespace) -> int:
    from nvfp4_tui.store.legacy import (
        LegacyError,
        import_legacy,
        in_flight_note,
        recorded_in_flight,
    )
    from nvfp4_tui.store.manifest import read_manifest

    with usage_errors():
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
        return exit_codes.OK


def compare_command(args: argparse.Namespace) -> int:
    from nvfp4_tui.output.compare import compare_snapshots
    from nvfp4_tui.store.reader import open_snapshot

    with usage_errors():
        a, b = open_snapshot(args.a), open_snapshot(args.b)
        comparison = compare_snapshots(a, b, score=args.score)
        if args.ui:
            from nvfp4_tui.launch.ui import run_compare_ui

            code = run_compare_ui(comparison)
        else:
            chosen = COMPARE[args.format]
            print(chosen.writer()(comparison, chosen.name), flush=True)
            code = exit_codes.OK
        damaged = [said_unreadable(run.path, run.warnings) for run in (a, b)]
        return exit_codes.DAMAGED if exit_codes.DAMAGED in damaged else code

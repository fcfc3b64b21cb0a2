"""Commands that read recorded runs: `replay`, `export`, `report`, `import` and `compare`.

Every one of them tells a snapshot it cannot open as bad input (exit 2) and one it read only in
part as exit 4, after its output.
"""

from __future__ import annotations

import argparse
import sys

from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.launch.usage import (
    UsageError,
    figures_extra,
    said_unreadable,
    snapshot_errors_are_usage,
)


def replay_command(args: argparse.Namespace) -> int:
    def replay() -> int:
        from nvfp4_tui.launch.ui import run_source_ui
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
            return said_unreadable(snapshot.path, snapshot.warnings)
        # The monitor prints the snapshot's warnings when it exits, where they stay in view.
        source = ReplaySource(snapshot, speed=args.speed)
        return run_source_ui(source, f"replay {snapshot.run_id}")

    return snapshot_errors_are_usage(replay)


def export_command(args: argparse.Namespace) -> int:
    def export() -> int:
        from nvfp4_tui.output.export import write_export
        from nvfp4_tui.store.reader import open_snapshot

        snapshot = open_snapshot(args.snapshot)
        for path in write_export(snapshot, args.format, args.out):
            print(path, flush=True)
        return said_unreadable(snapshot.path, snapshot.warnings)

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
        return exit_codes.OK

    if args.format == "figures":
        return figures_extra(figures)
    return snapshot_errors_are_usage(export)


def report_command(args: argparse.Namespace) -> int:
    if args.figures is not None and args.format != "markdown":
        raise UsageError("--figures goes with --format markdown (html carries its figures inside)")

    def report() -> int:
        from nvfp4_tui.output.report import render_snapshot
        from nvfp4_tui.store.reader import open_snapshot

        snapshot = open_snapshot(args.snapshot)
        print(render_snapshot(snapshot, args.format), flush=True)
        return said_unreadable(snapshot.path, snapshot.warnings)

    def writeup() -> int:
        from nvfp4_tui.output.writeup import render_writeup
        from nvfp4_tui.store.reader import open_snapshot

        text = render_writeup(open_snapshot(args.snapshot), args.format, figures_dir=args.figures)
        sys.stdout.write(text)
        return exit_codes.OK

    if args.format == "html" or args.figures is not None:
        return figures_extra(writeup)
    return snapshot_errors_are_usage(report)


def import_command(args: argparse.Namespace) -> int:
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
        return exit_codes.OK

    return snapshot_errors_are_usage(legacy_import)


def compare_command(args: argparse.Namespace) -> int:
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
        damaged = [said_unreadable(run.path, run.warnings) for run in (a, b)]
        return exit_codes.DAMAGED if exit_codes.DAMAGED in damaged else code

    return snapshot_errors_are_usage(compare)

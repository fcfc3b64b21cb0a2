"""Starting the monitor: on a live run (``run_with_ui``), on a followed or replayed snapshot
(``run_source_ui``), or on a comparison of two runs (``run_compare_ui``).

The one place the UI touches the bench package: it hands the resolved plan in a ``WorkerSpec``
to a ``LiveSource``, which starts the worker process; everything else reaches the UI as events.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.config.keymap import keymap_path, load_keymap
from nvfp4_tui.config.plan import LaunchPlan
from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.figures.comparison import Comparison
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.sources.base import EventSource
from nvfp4_tui.sources.live import LiveSource
from nvfp4_tui.tui.app import FleetApp, binding_ids

# The worker's exit codes that are the run's own outcome, passed on as the command's: completed,
# bad output directory, every endpoint down, a server that died, stopped (by the UI, or a signal).
WORKER_OUTCOMES = (
    exit_codes.OK,
    exit_codes.USAGE,
    exit_codes.ALL_DOWN,
    exit_codes.SERVER_DIED,
    exit_codes.STOPPED,
)


def run_with_ui(plan: LaunchPlan, out_root: Path) -> int:
    """Run ``plan`` in a worker process under the live UI; the exit code of ``run --headless``
    (``nvfp4_tui.core.exit_codes``) except that a run the user stopped from the UI exits 0."""
    source = LiveSource(WorkerSpec.of(plan, out_root))
    app = _show(source)
    worker_rc = source.process.returncode if source.process else None
    if source.snapshot_path is not None:
        print(f"snapshot: {source.snapshot_path}")
    if worker_rc is not None and worker_rc not in WORKER_OUTCOMES:
        print(f"error: the run's worker process exited with code {worker_rc}", file=sys.stderr)
        return exit_codes.FAILED
    if worker_rc in (exit_codes.USAGE, exit_codes.ALL_DOWN, exit_codes.SERVER_DIED):
        return worker_rc  # its one-line reason is among the messages printed above
    return exit_codes.FAILED if app.source_error else exit_codes.OK


def _show(source: EventSource, title: str | None = None) -> FleetApp:
    """Run the monitor on ``source`` until the user quits, then print what it leaves to say: the
    run's notes, what could not be read, and why the source failed. A bad keymap file is a
    ConfigError before anything starts."""
    path, named = keymap_path()
    app = FleetApp(source, title=title, keymap=load_keymap(path, binding_ids(), required=named))

    async def main() -> None:
        try:
            await app.run_async()
        finally:
            # However the app ended, the source ends with it: a run it drives stops and its
            # snapshot is finished.
            await source.close()

    asyncio.run(main())
    # A followed or replayed snapshot may be someone else's: its words reach the terminal as text.
    for message in source.messages:
        print(outside_line(message), file=sys.stderr)
    for warning in source.warnings:
        print(f"warning: {outside_line(warning)}", file=sys.stderr)
    if app.source_error:
        print(f"error: {outside_line(app.source_error)}", file=sys.stderr)
    return app


def run_source_ui(source: EventSource, title: str) -> int:
    """Show a followed run or a replay until the user quits; 0, or 1 when the source failed or
    a run the source ends with was aborted (as ``follow --headless`` does), or DAMAGED when
    part of the snapshot could not be read. Never stops a followed run."""
    app = _show(source, title)
    if app.source_error:
        return 1
    if source.snapshot_path is not None:
        print(f"snapshot: {source.snapshot_path}")
    if source.warnings:  # printed above: what of the snapshot the monitor could not read
        return exit_codes.DAMAGED
    if source.capabilities.ends_with_run and app.end_status == "aborted":
        print("the followed run was aborted", file=sys.stderr)
        return 1
    return 0


def run_compare_ui(comparison: Comparison) -> int:
    """Show a comparison of two runs until the user quits; 0."""
    from nvfp4_tui.tui.compare_app import CompareApp

    CompareApp(comparison).run()
    return 0

"""run_with_ui: a live run under the monitor — the worker process started, watched, stopped.

The one place the UI touches the bench package: it names the run in a ``WorkerSpec`` and hands
it to a ``LiveSource``, which starts the worker process; everything else reaches the UI as events.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.profile import Profile
from nvfp4_tui.sources.live import LiveSource
from nvfp4_tui.tui.app import FleetApp

# The worker's own exit codes: the run completed, or it was stopped (by the UI, or a signal).
WORKER_OK = (0, 130)


def run_with_ui(profile: Profile, out_root: Path, *, gpu_telemetry: str | None = None) -> int:
    """Run ``profile`` in a worker process under the live UI; 0 unless the worker failed."""
    source = LiveSource(WorkerSpec.of(profile, out_root, gpu_telemetry))
    app = FleetApp(source)

    async def main() -> None:
        try:
            await app.run_async()
        finally:
            # However the app ended, the run ends with it and its snapshot is finished.
            await source.close()

    asyncio.run(main())
    for message in source.messages:
        print(message, file=sys.stderr)
    if app.source_error:
        print(f"error: {app.source_error}", file=sys.stderr)
    worker_rc = source.process.returncode if source.process else None
    if source.snapshot_path is not None:
        print(f"snapshot: {source.snapshot_path}")
    if worker_rc is not None and worker_rc not in WORKER_OK:
        print(f"error: the run's worker process exited with code {worker_rc}", file=sys.stderr)
        return 1
    return 1 if app.source_error else 0

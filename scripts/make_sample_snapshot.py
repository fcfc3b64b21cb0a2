"""Regenerate ``snapshots/sample-demo``: a short run of the simulated demo fleet, recorded.

The sample ships with the repository so that ``nvfp4-tui replay snapshots/sample-demo`` works
right after install; run this script again whenever the snapshot format changes. It serves the
demo profile's simulator in its own process and records one session against it with the demo's
own plan (every suite at concurrency 1 and 4, ``requests`` per prompt, its ``max_tokens``), so
the sample shows what ``nvfp4-tui demo`` shows: the same answer lengths, the same cut-offs, the
same short c=4 phases. The simulator runs in real time by default, so the recorded speeds are
the demo fleet's own; ``--time-scale`` makes a quicker sample whose tok/s are that many times
the demo fleet's.

    python scripts/make_sample_snapshot.py [--time-scale X]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from nvfp4_tui.bench.session import Session
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.launch.run import PhasePrinter
from nvfp4_tui.output.report import render
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.telemetry.sampler import telemetry_for_run

REPO = Path(__file__).resolve().parents[1]
PROFILE = Path(
    "nvfp4_tui/config/data/profiles/demo.toml"
)  # relative: the manifest names no machine's paths
OUT_ROOT = Path("snapshots")
SAMPLE_ID = "sample-demo"
MAX_SIZE_BYTES = 1_500_000


def record(time_scale: float) -> Path:
    profile = load_profile(PROFILE)
    profile = replace(profile, run=replace(profile.run, name=SAMPLE_ID))
    shutil.rmtree(OUT_ROOT / SAMPLE_ID, ignore_errors=True)
    with SimProcess(profile.path, time_scale=time_scale) as sim:
        plan = plan_run(profile, gpu_telemetry="sim").with_urls(sim.urls)
        live, sources, messages = telemetry_for_run(plan)
        for message in messages:
            print(message, file=sys.stderr)
        session = Session(
            live.profile,
            live.suites,
            OUT_ROOT,
            subscribers=[PhasePrinter()],
            gpu_sources=sources,
            on_message=lambda m: print(m, file=sys.stderr),
            run_id=SAMPLE_ID,
        )
        session.open()
        result = asyncio.run(session.run())
    if result.status != "complete":
        raise SystemExit(
            f"the sample run ended {result.status}; {session.snapshot_path} is partial"
        )
    return session.snapshot_path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-scale", type=float, default=1.0, help="simulator clock factor")
    args = parser.parse_args()
    os.chdir(REPO)
    path = record(args.time_scale)
    size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    print(render(path, detail=False))
    print(f"{path}: {size / 1000:.0f} kB")
    if size > MAX_SIZE_BYTES:
        print(f"{path} is over {MAX_SIZE_BYTES / 1e6:g} MB: shorten the plan", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

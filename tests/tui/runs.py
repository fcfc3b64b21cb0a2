"""Recorded runs for the UI tests: the sample events written as a snapshot, and small seeded runs
whose differences the compare screen must find."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from textual.pilot import Pilot

from nvfp4_tui.core.events import (
    EndpointInfo,
    Event,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RunFinished,
    RunStarted,
)
from nvfp4_tui.sources.replay import ReplaySource
from nvfp4_tui.store.writer import SnapshotWriter
from nvfp4_tui.tui.app import FleetApp

T0 = 1_781_000_000.0
POLL_S = 0.02
POLL_TRIES = 250  # 5 s at most


def write_snapshot(
    root: Path, run_id: str, events: Sequence[Event], *, close: str | None = "complete"
) -> SnapshotWriter:
    """``events`` recorded as the snapshot ``root/run_id``; left open (running) if not ``close``."""
    writer = SnapshotWriter(root, run_id, {"profile": {"name": run_id}})
    writer.open()
    for event in events:
        writer.add(event)
    writer.flush()
    if close is not None:
        writer.close(close)  # type: ignore[arg-type]
    return writer


async def settle_replay(pilot: Pilot, source: ReplaySource) -> None:
    """Wait until the replay has delivered everything due at its (paused) position and the
    screen shows it."""
    app = pilot.app
    assert isinstance(app, FleetApp)
    for _ in range(POLL_TRIES):
        await pilot.pause(POLL_S)
        if source.wait_s() is None or source.at_end:
            break
    await pilot.pause()
    app.redraw()
    await pilot.pause(0.1)


SUITES = ("math", "coding")


def compare_run(
    run_id: str, seed: int, *, n: int = 20, shift: dict[tuple[str, str], dict[str, float]]
) -> list[Event]:
    """Three endpoints x two suites at concurrency 1, ``n`` requests a cell, seeded noise.

    ``shift[(endpoint id, suite)]`` moves that cell's ``quality``, ``decode_tps`` or ``ttft_s``.
    """
    rng = random.Random(seed)
    infos = tuple(
        EndpointInfo(eid, label, "http://127.0.0.1:9", "current", gpu, cls)
        for gpu, (eid, label, cls) in enumerate(
            (
                ("moe_a", "Alpha-35B-A3B", "moe"),
                ("dense_b", "Beta-27B", "dense"),
                ("moe_c", "Gamma-26B-A4B", "moe"),
            )
        )
    )
    plans = tuple(PhasePlan(i.id, s, 1, n) for i in infos for s in SUITES)
    events: list[Event] = [RunStarted(T0, run_id, run_id, infos, plans)]
    t = T0
    for info in infos:
        for phase_index, suite in enumerate(SUITES):
            moved = shift.get((info.id, suite), {})
            events.append(PhaseStarted(t, info.id, suite, 1, phase_index))
            for i in range(n):
                quality = rng.gauss(0.75, 0.05) + moved.get("quality", 0.0)
                events.append(
                    RequestFinished(
                        t=t + i,
                        endpoint_id=info.id,
                        suite=suite,
                        prompt_id=f"{suite}-{i % 4}",
                        concurrency=1,
                        phase_index=phase_index,
                        request_index=i,
                        status="ok",
                        queue_s=0.0,
                        ttft_s=max(0.01, rng.gauss(0.2, 0.02) + moved.get("ttft_s", 0.0)),
                        e2e_s=0.9,
                        tokens_out=100,
                        decode_tps=rng.gauss(120.0, 5.0) + moved.get("decode_tps", 0.0),
                        e2e_tps=110.0,
                        score_heuristic=round(min(1.0, max(0.0, quality)), 3),
                    )
                )
            t += n
            events.append(PhaseFinished(t, info.id, suite, 1, phase_index, n, 0, 100 * n, n))
    events.append(RunFinished(t, "complete"))
    return events

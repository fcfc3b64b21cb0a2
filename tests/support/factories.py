"""Hand-built events and snapshots for the tests: one clock origin and one builder per kind.

Each builder fills in what a test rarely cares about (an id, a URL, a queue time of 0) and takes
everything else by keyword, with the event's own defaults for what it is not given: a test says
what its case is about, and nothing it does not say is made up for it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nvfp4_tui.core.events import (
    EndpointInfo,
    Event,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RequestStatus,
    RunFinished,
    RunStarted,
)
from nvfp4_tui.store.writer import SnapshotWriter

T0 = 1_796_203_800.0  # 2026-12-02 09:30:00 UTC: when every hand-built run starts


def endpoint_info(
    endpoint_id: str = "a",
    gpu: int | None = 0,
    *,
    label: str | None = None,
    url: str = "http://127.0.0.1:9",
    model: str = "current",
    model_class: str = "moe",
    **more: Any,
) -> EndpointInfo:
    """An endpoint labelled with its id in capitals unless ``label`` says otherwise."""
    return EndpointInfo(
        endpoint_id, label or endpoint_id.upper(), url, model, gpu, model_class, **more
    )


def request(
    endpoint_id: str = "a",
    *,
    t: float = T0,
    suite: str = "english",
    prompt_id: str = "p0",
    concurrency: int = 1,
    phase_index: int = 0,
    request_index: int = 0,
    status: RequestStatus = "ok",
    queue_s: float = 0.0,
    **fields: Any,
) -> RequestFinished:
    """A finished request; its timings, tokens and scores are only those given in ``fields``."""
    return RequestFinished(
        t=t,
        endpoint_id=endpoint_id,
        suite=suite,
        prompt_id=prompt_id,
        concurrency=concurrency,
        phase_index=phase_index,
        request_index=request_index,
        status=status,
        queue_s=queue_s,
        **fields,
    )


def start_snapshot(
    root: Path,
    run_id: str,
    *batches: Sequence[Event],
    profile: Mapping[str, Any] | None = None,
) -> SnapshotWriter:
    """A snapshot of ``batches``, flushed after each, its writer still open: a run going on."""
    writer = SnapshotWriter(root, run_id, {"profile": dict(profile or {"name": run_id})})
    writer.open()
    for batch in batches:
        for event in batch:
            writer.add(event)
        writer.flush()
    return writer


def write_snapshot(
    root: Path,
    run_id: str,
    *batches: Sequence[Event],
    close: str | None = "complete",
    profile: Mapping[str, Any] | None = None,
) -> Path:
    """``start_snapshot`` closed with ``close``, or left as a crash leaves it (``None``)."""
    writer = start_snapshot(root, run_id, *batches, profile=profile)
    if close is not None:
        writer.close(close)  # type: ignore[arg-type]
    return writer.path


Shift = Mapping[tuple[str, str], Mapping[str, float]]


def seeded_run(
    run_id: str,
    seed: int,
    endpoints: Sequence[EndpointInfo],
    suites: Sequence[str],
    *,
    n: int,
    shift: Shift | None = None,
    prompts: int = 4,
    t0: float = T0,
) -> list[Event]:
    """Every endpoint x suite at concurrency 1, ``n`` requests a cell of seeded noise around a
    quality of 0.75, a TTFT of 0.2 s and 120 tok/s; ``shift[(endpoint id, suite)]`` moves that
    cell's ``quality``, ``ttft_s`` or ``decode_tps`` (what a comparison must find)."""
    rng = random.Random(seed)
    plans = tuple(PhasePlan(e.id, s, 1, n) for e in endpoints for s in suites)
    events: list[Event] = [RunStarted(t0, run_id, run_id, tuple(endpoints), plans)]
    t = t0
    for info in endpoints:
        for phase_index, suite in enumerate(suites):
            moved = (shift or {}).get((info.id, suite), {})
            events.append(PhaseStarted(t, info.id, suite, 1, phase_index))
            for i in range(n):
                quality = rng.gauss(0.75, 0.05) + moved.get("quality", 0.0)
                events.append(
                    request(
                        info.id,
                        t=t + i,
                        suite=suite,
                        prompt_id=f"{suite}-{i % prompts}",
                        phase_index=phase_index,
                        request_index=i,
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

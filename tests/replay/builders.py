"""Events, snapshots and legacy files built for the replay, export, import and compare tests."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from nvfp4_tui.core.events import (
    EndpointInfo,
    Event,
    GpuSample,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RunFinished,
    RunStarted,
)
from nvfp4_tui.store.writer import SnapshotWriter

T0 = 1_796_203_800.0  # 2026-12-02 09:30:00 UTC


def endpoint(endpoint_id: str, gpu: int, label: str | None = None) -> EndpointInfo:
    return EndpointInfo(
        id=endpoint_id,
        label=label or endpoint_id.upper(),
        url="http://127.0.0.1:9",
        model="current",
        gpu=gpu,
        model_class="moe",
    )


def timeline_run(seconds: int = 60, t0: float = T0) -> list[Event]:
    """One endpoint, one phase; a request sent every second (2 s long), a GPU sample every second.

    The timeline (request events at their end) then has an event at every whole second of
    run time from 0 to ``seconds``, which makes positions easy to check.
    """
    info = endpoint("a", 0)
    events: list[Event] = [
        RunStarted(t0, "timeline", "timeline", (info,), (PhasePlan("a", "english", 1, seconds),)),
        PhaseStarted(t0, "a", "english", 1, 0),
    ]
    for i in range(1, seconds + 1):
        events.append(GpuSample(t0 + i, 0, vram_used_mib=1000.0 + i, source="sim"))
    for i in range(seconds - 2 + 1):
        events.append(
            RequestFinished(
                t=t0 + i,
                endpoint_id="a",
                suite="english",
                prompt_id=f"p{i}",
                concurrency=1,
                phase_index=0,
                request_index=i,
                status="ok",
                queue_s=0.0,
                ttft_s=0.1,
                e2e_s=2.0,
                tokens_out=200,
                decode_tps=100.0 + i,
                e2e_tps=95.0,
                score_heuristic=0.5,
            )
        )
    events.append(PhaseFinished(t0 + seconds, "a", "english", 1, 0, seconds - 1, 0, 200, 60.0))
    events.append(RunFinished(t0 + seconds, "complete"))
    return sorted(events, key=lambda e: e.t)


def write_events(
    root: Path, run_id: str, events: list[Event], *, close: str | None = "complete"
) -> Path:
    writer = SnapshotWriter(root, run_id, {"profile": {"name": run_id}})
    writer.open()
    for event in events:
        writer.add(event)
    writer.flush()
    if close is not None:
        writer.close(close)  # type: ignore[arg-type]
    return writer.path


SUITES = ("english", "math", "coding")


def noisy_run(
    run_id: str,
    seed: int,
    *,
    n: int = 24,
    shift: dict[tuple[str, str], dict[str, float]] | None = None,
    t0: float = T0,
) -> list[Event]:
    """Three endpoints x three suites at concurrency 1, ``n`` requests per cell, seeded noise.

    ``shift[(endpoint, suite)]`` adds to that cell's ``quality``, ``decode_tps`` or ``ttft_s``.
    """
    rng = random.Random(seed)
    infos = (endpoint("a", 0, "Alpha"), endpoint("b", 1, "Beta"), endpoint("c", 2, "Gamma"))
    plans = tuple(PhasePlan(e.id, s, 1, n) for e in infos for s in SUITES)
    events: list[Event] = [RunStarted(t0, run_id, run_id, infos, plans)]
    t = t0
    for info in infos:
        for phase_index, suite in enumerate(SUITES):
            moved = (shift or {}).get((info.id, suite), {})
            events.append(PhaseStarted(t, info.id, suite, 1, phase_index))
            for i in range(n):
                ttft_s = max(0.01, rng.gauss(0.2, 0.03) + moved.get("ttft_s", 0.0))
                events.append(
                    RequestFinished(
                        t=t + i,
                        endpoint_id=info.id,
                        suite=suite,
                        prompt_id=f"{suite}-{i % 3}",
                        concurrency=1,
                        phase_index=phase_index,
                        request_index=i,
                        status="ok",
                        queue_s=0.0,
                        ttft_s=ttft_s,
                        e2e_s=0.9,
                        tokens_out=100,
                        decode_tps=rng.gauss(120.0, 6.0) + moved.get("decode_tps", 0.0),
                        e2e_tps=110.0,
                        score_heuristic=min(
                            1.0, max(0.0, rng.gauss(0.75, 0.05) + moved.get("quality", 0.0))
                        ),
                    )
                )
            t += n
            events.append(PhaseFinished(t, info.id, suite, 1, phase_index, n, 0, 100 * n, float(n)))
    events.append(RunFinished(t, "complete"))
    return events


# ---- legacy files -----------------------------------------------------------------------------


def legacy_row(
    model: str,
    test: str,
    concurrency: int,
    prompt_idx: int,
    rng: random.Random,
    *,
    tokens_out: int | None = None,
    error: str = "",
) -> dict[str, Any]:
    tokens = rng.randint(300, 2000) if tokens_out is None else tokens_out
    rate = round(rng.uniform(40.0, 140.0), 6) if tokens else 0
    return {
        "model": model,
        "test": test,
        "prompt_idx": prompt_idx,
        "concurrency": concurrency,
        "tokens_in": rng.randint(50, 120) if tokens else 0,
        "tokens_out": tokens,
        "latency_ms": tokens / rate * 1000 if tokens else rng.uniform(1.0, 2.0),
        "tok_per_sec": rate,
        "content": "An answer." if tokens else "",
        "error": error,
        "quality_score": round(rng.uniform(0.4, 1.0), 6) if tokens else 0.0,
        "quality_notes": "words:100|para:3" if tokens else "empty",
    }


def seed_summary(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The summary the seed's script wrote, computed its way (checked on benchmark_all6.json):
    means over every row, quality to 3 decimals, tok/s to 1, errors counted by non-empty text."""
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault((r["model"], r["test"], r["concurrency"]), []).append(r)
    return [
        {
            "model": model,
            "test": test,
            "concurrency": concurrency,
            "avg_quality": round(sum(r["quality_score"] for r in rows) / len(rows), 3),
            "avg_tok_per_sec": round(sum(r["tok_per_sec"] for r in rows) / len(rows), 1),
            "total_throughput": round(sum(r["tok_per_sec"] for r in rows), 1),
            "avg_tokens_out": round(sum(r["tokens_out"] for r in rows) / len(rows)),
            "errors": sum(1 for r in rows if r["error"]),
        }
        for (model, test, concurrency), rows in groups.items()
    ]


def legacy_file(path: Path, seed: int = 5) -> dict[str, Any]:
    """A legacy JSON in the seed script's format: two models, three tests, concurrency 1 and 4.

    Every ``tool_call`` row is the script's silent failure (0 tokens, no error) and one
    ``math`` row at concurrency 4 of model ``dense_b`` has an error.
    """
    rng = random.Random(seed)
    models = {
        "moe_a": {
            "name": "Alpha MoE",
            "url": "http://localhost:8016",
            "served_name": "current",
            "desc": "a",
        },
        "dense_b": {
            "name": "Beta Dense",
            "url": "http://localhost:8017",
            "served_name": "current",
            "desc": "b",
        },
    }
    results: list[dict[str, Any]] = []
    for model in models:
        for test in ("english_critique", "math", "tool_call"):
            for concurrency in (1, 4):
                for prompt_idx in range(2):
                    for _ in range(concurrency):
                        silent = test == "tool_call"
                        results.append(
                            legacy_row(
                                model,
                                test,
                                concurrency,
                                prompt_idx,
                                rng,
                                tokens_out=0 if silent else None,
                            )
                        )
    failing = next(
        r for r in results if (r["model"], r["test"], r["concurrency"]) == ("dense_b", "math", 4)
    )
    failing.update(
        error="HTTP 503: Service Unavailable", tokens_out=0, tok_per_sec=0, quality_score=0.0
    )
    body = {
        "metadata": {
            "date": "2026-04-16 21:07",
            "gpu": "NVIDIA RTX PRO 6000 Blackwell (96GB)",
            "context_length": 131072,
            "models": models,
            "vram_mb": {
                "before": {"0": 92862, "1": 92470, "2": 1360},
                "after": {"0": 92866, "1": 92478, "2": 1156},
            },
        },
        "summary": seed_summary(results),
        "results": results,
    }
    path.write_text(json.dumps(body, indent=2), encoding="utf-8")
    return body

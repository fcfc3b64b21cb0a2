"""Events, snapshots and legacy files built for the replay, export, import and compare tests."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from nvfp4_tui.core.events import (
    Event,
    GpuSample,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RunFinished,
    RunStarted,
)
from tests.support.factories import T0, Shift, endpoint_info, request, seeded_run


def timeline_run(seconds: int = 60, t0: float = T0) -> list[Event]:
    """One endpoint, one phase; a request sent every second (2 s long), a GPU sample every second.

    The timeline (request events at their end) then has an event at every whole second of
    run time from 0 to ``seconds``, which makes positions easy to check.
    """
    info = endpoint_info("a", 0)
    events: list[Event] = [
        RunStarted(t0, "timeline", "timeline", (info,), (PhasePlan("a", "english", 1, seconds),)),
        PhaseStarted(t0, "a", "english", 1, 0),
    ]
    for i in range(1, seconds + 1):
        events.append(GpuSample(t0 + i, 0, vram_used_mib=1000.0 + i, source="sim"))
    for i in range(seconds - 2 + 1):
        events.append(
            request(
                "a",
                t=t0 + i,
                prompt_id=f"p{i}",
                request_index=i,
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


SUITES = ("english", "math", "coding")
NOISY_ENDPOINTS = (
    endpoint_info("a", 0, label="Alpha"),
    endpoint_info("b", 1, label="Beta"),
    endpoint_info("c", 2, label="Gamma"),
)


def noisy_run(
    run_id: str, seed: int, *, n: int = 24, shift: Shift | None = None, t0: float = T0
) -> list[Event]:
    """Three endpoints x three suites, ``n`` requests per cell (``factories.seeded_run``)."""
    return seeded_run(run_id, seed, NOISY_ENDPOINTS, SUITES, n=n, shift=shift, prompts=3, t0=t0)


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

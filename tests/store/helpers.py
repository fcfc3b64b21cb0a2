"""Events shared by the store tests (and the crash subprocess): one of every kind, and
deterministic requests."""

from __future__ import annotations

from nvfp4_tui.core.events import (
    EndpointConfig,
    EndpointStatus,
    Event,
    GpuSample,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RunFinished,
    RunStarted,
    ServerSample,
)
from tests.support.factories import T0, endpoint_info, request


def request_event(index: int, t: float | None = None) -> RequestFinished:
    """A deterministic RequestFinished for ``index`` (odd ones are errors with None metrics)."""
    ok = index % 2 == 0
    return request(
        f"gpu{index % 7}",
        t=T0 + index * 0.01 if t is None else t,
        suite="japanese" if index % 3 else "english",
        prompt_id=f"p{index}",
        concurrency=4,
        phase_index=index // 100,
        request_index=index,
        status="ok" if ok else "error",
        queue_s=0.001 * index,
        ttft_s=0.0123 + index / 7 if ok else None,
        e2e_s=3.25 + index if ok else None,
        tokens_out=512 if ok else None,
        first_chunk_tokens=9 if ok else None,
        decode_tps=144.125 if ok else None,
        answer_text=f"答え {index} — ok" if ok else "",
        error_kind=None if ok else "http_5xx",
        error_message=None if ok else "HTTP 503: überlastet",
    )


def one_of_each(t: float = T0) -> list[Event]:
    """One event of every persisted type, each with its own ``t``, in ``t`` order."""
    endpoint = endpoint_info("gpu0", 0, label="Qwen3.6 35B", url="http://127.0.0.1:8016")
    return [
        RunStarted(
            t,
            "r1",
            "demo «7»",
            (endpoint,),
            (PhasePlan("gpu0", "english", 1, 2),),
            (EndpointConfig("gpu0", "0.11.0", kv_cache_dtype="fp8", gpu_name="RTX PRO 6000"),),
        ),
        PhaseStarted(t + 1, "gpu0", "english", 1, 0),
        GpuSample(t + 2, 0, name="RTX PRO 6000", vram_used_mib=92316.0, power_w=301.5),
        ServerSample(t + 3, "gpu0", kv_cache_pct=12.5, requests_running=1.0),
        request_event(0, t=t + 4),
        EndpointStatus(t + 5, "gpu0", "error", "connection refused: 日本"),
        PhaseFinished(t + 6, "gpu0", "english", 1, 0, 2, 0, 1024, 8.5),
        RunFinished(t + 7, "complete", None),
    ]

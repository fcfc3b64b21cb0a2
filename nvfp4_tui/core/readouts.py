"""What the reducer shows: the points of its history rings (``events.HISTORY_LEN`` each), the
rows of an endpoint's recent requests, its last error and answer, and the progress of each phase.
Frozen values, made by ``EndpointState`` and ``GpuTrack`` and read by every view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nvfp4_tui.core.events import ErrorKind, RequestStatus
from nvfp4_tui.core.figures.scores import DEFAULT_SCORE
from nvfp4_tui.core.slo import Load

PhaseState = Literal["pending", "running", "finished"]


@dataclass(frozen=True, slots=True)
class TpsPoint:
    """One point of the decode tok/s history (per stream: comparable across concurrency)."""

    t: float
    decode_tps: float


@dataclass(frozen=True, slots=True)
class TtftPoint:
    """One request's TTFT as the client measured it, placed when its first token arrived."""

    t: float
    ttft_s: float


@dataclass(frozen=True, slots=True)
class GpuPoint:
    t: float
    vram_used_mib: float | None
    power_w: float | None
    util_gpu_pct: float | None


@dataclass(frozen=True, slots=True)
class ServerPoint:
    t: float
    kv_cache_pct: float | None
    requests_waiting: float | None
    ttft_mean_s: float | None
    requests_running: float | None = None
    ttft_count: int | None = None  # first tokens the mean is over, to weigh it across scrapes
    ttft_p50_low_s: float | None = None  # the bucket the scrape's p50 lies in: (low, high]
    ttft_p50_high_s: float | None = None


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    t: float  # when the failed request ended
    kind: ErrorKind | None
    message: str | None
    suite: str
    prompt_id: str


@dataclass(frozen=True, slots=True)
class AnswerText:
    t: float  # when the request ended
    suite: str
    prompt_id: str
    status: RequestStatus
    answer_text: str
    reasoning_text: str
    tool_calls_json: str | None


@dataclass(frozen=True, slots=True)
class RequestRow:
    """One line of the detail table; the answer text is kept only for the latest request."""

    t: float  # when the request was sent
    suite: str
    prompt_id: str
    concurrency: int
    phase_index: int
    request_index: int
    status: RequestStatus
    ttft_s: float | None
    e2e_s: float | None
    decode_tps: float | None
    e2e_tps: float | None
    tokens_out: int | None
    error_kind: ErrorKind | None
    error_message: str | None
    scores: tuple[tuple[str, float], ...]  # (score name, value) for the scores present

    def score(self, name: str = DEFAULT_SCORE) -> float | None:
        return next((value for key, value in self.scores if key == name), None)


@dataclass(frozen=True, slots=True)
class PhaseRef:
    suite: str
    concurrency: int
    phase_index: int
    started_t: float
    rate_rps: float | None = None  # open loop: the planned rate (``concurrency`` caps, 0: none)

    @property
    def load(self) -> Load:
        return Load.of(self.concurrency, self.rate_rps)


@dataclass(frozen=True, slots=True)
class PhaseProgress:
    """One planned (or observed) phase of an endpoint, with its progress and, once over, totals."""

    phase_index: int
    suite: str
    concurrency: int
    planned_requests: int | None
    duration_s: float | None
    state: PhaseState
    requests_done: int
    errors: int
    fraction: float  # 0..1; duration-bound phases need ``now`` to move before they finish
    started_t: float | None
    finished_t: float | None
    output_tokens: int | None  # from PhaseFinished
    wall_s: float | None
    throughput_tps: float | None  # aggregate: output tokens / wall time
    rate_rps: float | None = None

    @property
    def load(self) -> Load:
        return Load.of(self.concurrency, self.rate_rps)

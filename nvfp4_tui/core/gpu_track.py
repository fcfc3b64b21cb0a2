"""GpuTrack: the telemetry of one GPU (latest sample, a ring of points, first and last VRAM)."""

from __future__ import annotations

from collections import deque

from nvfp4_tui.core.events import HISTORY_LEN, GpuSample
from nvfp4_tui.core.readouts import GpuPoint
from nvfp4_tui.core.stats import finite

TELEMETRY_STALE_S = 5.0  # a GPU's or a server's latest sample older than this is stale


class GpuTrack:
    """Telemetry of one GPU: the latest sample, a ring of points, first and last VRAM seen."""

    __slots__ = (
        "first_vram_mib",
        "first_vram_t",
        "gpu",
        "history",
        "last_vram_mib",
        "last_vram_t",
        "latest",
        "samples",
    )

    def __init__(self, gpu: int) -> None:
        self.gpu = gpu
        self.latest: GpuSample | None = None
        self.history: deque[GpuPoint] = deque(maxlen=HISTORY_LEN)
        self.samples = 0
        self.first_vram_mib: float | None = None
        self.first_vram_t: float | None = None
        self.last_vram_mib: float | None = None
        self.last_vram_t: float | None = None

    def apply(self, sample: GpuSample) -> None:
        self.samples += 1
        # Latest / first / last go by sample time, not arrival, so a replay agrees with the live run.
        if self.latest is None or sample.t >= self.latest.t:
            self.latest = sample
        self.history.append(
            GpuPoint(sample.t, sample.vram_used_mib, sample.power_w, sample.util_gpu_pct)
        )
        vram = finite(sample.vram_used_mib)
        if vram is None:
            return
        if self.first_vram_t is None or sample.t < self.first_vram_t:
            self.first_vram_mib, self.first_vram_t = vram, sample.t
        if self.last_vram_t is None or sample.t >= self.last_vram_t:
            self.last_vram_mib, self.last_vram_t = vram, sample.t

    def stale(self, now: float, max_age_s: float = TELEMETRY_STALE_S) -> bool:
        """True when no sample arrived yet or the latest is older than ``max_age_s``."""
        return self.latest is None or now - self.latest.t > max_age_s

"""The one small interface every GPU telemetry source implements (NVML, DCGM exporter, simulator)."""

from __future__ import annotations

from typing import Protocol

from nvfp4_tui.events import GpuSample


class GpuSource(Protocol):
    """A blocking source of GPU samples; callers run ``sample`` in a worker thread."""

    def sample(self, t: float) -> list[GpuSample]:
        """One sample per GPU this source can see, stamped ``t`` (Unix seconds)."""
        ...

    def close(self) -> None: ...

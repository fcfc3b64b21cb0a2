"""The one small interface every GPU telemetry source implements (NVML, DCGM exporter, simulator)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from nvfp4_tui.core.events import GpuSample, ServerSample


class GpuSource(Protocol):
    """A blocking source of GPU samples; callers run ``sample`` in a worker thread."""

    def sample(self, t: float) -> list[GpuSample]:
        """One sample per GPU this source can see, stamped ``t`` (Unix seconds)."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class GpuIdentity:
    """What a GPU is and how it is set up, read once at run start for the manifest; a field
    the source cannot tell is None."""

    gpu: int
    name: str | None = None
    uuid: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None  # the CUDA version the driver supports, "13.0"
    power_limit_w: float | None = None
    max_sm_clock_mhz: float | None = None
    max_mem_clock_mhz: float | None = None


@runtime_checkable
class DescribesGpus(Protocol):
    """A GpuSource that can also say what its GPUs are (blocking, like ``sample``)."""

    def identities(self) -> list[GpuIdentity]: ...


@runtime_checkable
class ReportsServers(Protocol):
    """A GpuSource that also reads the servers' own gauges (a Prometheus server holds both)."""

    def server_samples(self, t: float) -> list[ServerSample]: ...

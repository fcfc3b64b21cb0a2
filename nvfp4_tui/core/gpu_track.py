"""GpuTrack: the telemetry of one GPU (latest sample, a ring of points, first and last VRAM)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from nvfp4_tui.core.events import HISTORY_LEN, EndpointInfo, GpuSample
from nvfp4_tui.core.readouts import GpuPoint
from nvfp4_tui.core.stats import finite

TELEMETRY_STALE_S = 5.0  # a GPU's or a server's latest sample older than this is stale

GpuKey = tuple[str, int]  # (node, GPU index); node "" in a run whose endpoints share one node


@dataclass(frozen=True)
class GpuKeys:
    """Which card a GPU index names under one run's endpoints: each node of a fleet has a
    GPU 0, so across nodes a card is its node and index.

    On one node the index alone names a card, whatever host a source reports (NVML names none,
    DCGM its own hostname). Across nodes, a sample from a node of the run is that node's card;
    one naming no such node (local NVML) is the card of the one node using that index, if only
    one does, and otherwise kept apart under node "".
    """

    nodes: frozenset[str] = frozenset()  # the run's nodes, when there are several
    node_of_index: Mapping[int, str] = field(default_factory=dict)

    @classmethod
    def of(cls, endpoints: Iterable[EndpointInfo]) -> GpuKeys:
        endpoints = tuple(endpoints)
        nodes = {info.node for info in endpoints}
        if len(nodes) < 2:
            return cls()
        users: dict[int, set[str]] = {}
        for info in endpoints:
            if info.gpu is not None:
                users.setdefault(info.gpu, set()).add(info.node)
        only = {gpu: next(iter(on)) for gpu, on in users.items() if len(on) == 1}
        return cls(frozenset(nodes), only)

    def endpoint(self, info: EndpointInfo) -> GpuKey | None:
        if info.gpu is None:
            return None
        return (info.node if self.nodes else "", info.gpu)

    def sampled(self, gpu: int, host: str | None) -> GpuKey:
        if not self.nodes:
            return ("", gpu)
        if host in self.nodes:
            return (host, gpu)
        return (self.node_of_index.get(gpu, ""), gpu)


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
        "node",
        "samples",
    )

    def __init__(self, gpu: int, node: str = "") -> None:
        self.gpu = gpu
        self.node = node  # "" in a run on one node
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

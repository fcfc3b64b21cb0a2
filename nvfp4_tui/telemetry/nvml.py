"""NVML telemetry: this box's GPUs and their processes, read through ``pynvml`` (nvidia-ml-py).

``NvmlSource.open`` either returns a working source or raises ``TelemetryUnavailable`` whose
text is the one line to show ("GPU telemetry unavailable: …"). After that, a query NVML refuses
for one GPU (not supported, no permission, GPU lost) blanks that one field and nothing else.
``resolve_gpu`` maps an endpoint to a GPU index: the profile's index, a UUID, or ``"auto"``,
the GPU on which the process serving the endpoint's port (or one of its children) holds memory.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar
from urllib.parse import urlparse

from nvfp4_tui.config.profile import Endpoint
from nvfp4_tui.core.events import GpuSample
from nvfp4_tui.telemetry.source import GpuIdentity

_MIB = 1024 * 1024
_T = TypeVar("_T")
# Fields a GPU will never answer, so asking again each sample only costs time.
_PERMANENT_ERRORS = ("NVML_ERROR_NOT_SUPPORTED", "NVML_ERROR_FUNCTION_NOT_FOUND")
_TCP_LISTEN = "0A"


class TelemetryUnavailable(Exception):
    """GPU telemetry cannot be read here; ``str()`` is the one line to show."""

    def __init__(self, reason: str) -> None:
        self.reason = " ".join(reason.split()) or "unknown reason"
        super().__init__(f"GPU telemetry unavailable: {self.reason}")


@dataclass(frozen=True, slots=True)
class GpuProcess:
    """A process holding memory on a GPU, as NVML lists it."""

    pid: int
    name: str | None
    vram_used_mib: float | None  # None where the driver does not say (e.g. Windows WDDM)


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


class NvmlSource:
    """A GpuSource over every GPU NVML sees; thread-safe, ``close`` is idempotent."""

    def __init__(self, nvml: ModuleType, handles: list[Any]) -> None:
        self._nvml = nvml
        self._handles = handles
        self._lock = threading.Lock()
        self._closed = False
        self._unsupported: set[tuple[int, str]] = set()
        self._selected: frozenset[int] | None = None
        self._names = [
            self._query(i, "name", lambda h: _text(nvml.nvmlDeviceGetName(h)))
            for i in range(len(handles))
        ]
        self._uuids = [
            self._query(i, "uuid", lambda h: _text(nvml.nvmlDeviceGetUUID(h)))
            for i in range(len(handles))
        ]

    @classmethod
    def open(cls) -> NvmlSource:
        """Initialise NVML; raises TelemetryUnavailable (one line) when there is no GPU to read."""
        try:
            nvml = importlib.import_module("pynvml")
        except ImportError as exc:
            raise TelemetryUnavailable(f"the pynvml module is not installed ({exc})") from None
        try:
            nvml.nvmlInit()
        except nvml.NVMLError as exc:
            raise TelemetryUnavailable(f"NVML init failed: {exc}") from None
        try:
            count = nvml.nvmlDeviceGetCount()
            handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        except nvml.NVMLError as exc:
            nvml.nvmlShutdown()
            raise TelemetryUnavailable(f"NVML could not list the GPUs: {exc}") from None
        if not handles:
            nvml.nvmlShutdown()
            raise TelemetryUnavailable("NVML sees no GPU")
        return cls(nvml, handles)

    @property
    def gpu_count(self) -> int:
        return len(self._handles)

    def name(self, index: int) -> str | None:
        return self._names[index]

    def uuid(self, index: int) -> str | None:
        return self._uuids[index]

    def index_of_uuid(self, uuid: str) -> int | None:
        return self._uuids.index(uuid) if uuid in self._uuids else None

    def select(self, indices: Iterable[int] | None) -> None:
        """Sample only these GPUs from now on (None: all); unknown indices are ignored."""
        self._selected = None if indices is None else frozenset(indices)

    def sample(self, t: float) -> list[GpuSample]:
        with self._lock:
            if self._closed:
                return []
            return [
                self._sample_one(t, i)
                for i in range(len(self._handles))
                if self._selected is None or i in self._selected
            ]

    def identities(self) -> list[GpuIdentity]:
        """Each GPU's name, UUID and limits, and the driver's versions; a refused query is None."""
        with self._lock:
            if self._closed:
                return []
            driver = self._system(lambda nvml: _text(nvml.nvmlSystemGetDriverVersion()))
            cuda = self._system(lambda nvml: cuda_version(nvml.nvmlSystemGetCudaDriverVersion()))
            return [self._identity(i, driver, cuda) for i in range(len(self._handles))]

    def _identity(self, i: int, driver: str | None, cuda: str | None) -> GpuIdentity:
        nvml = self._nvml
        limit_mw = self._query(i, "power_limit", nvml.nvmlDeviceGetEnforcedPowerLimit)
        return GpuIdentity(
            gpu=i,
            name=self._names[i],
            uuid=self._uuids[i],
            driver_version=driver,
            cuda_driver_version=cuda,
            power_limit_w=None if limit_mw is None else limit_mw / 1000,
            max_sm_clock_mhz=self._number(
                i, "max_sm_clock", lambda h: nvml.nvmlDeviceGetMaxClockInfo(h, nvml.NVML_CLOCK_SM)
            ),
            max_mem_clock_mhz=self._number(
                i,
                "max_mem_clock",
                lambda h: nvml.nvmlDeviceGetMaxClockInfo(h, nvml.NVML_CLOCK_MEM),
            ),
        )

    def _system(self, read: Callable[[ModuleType], str]) -> str | None:
        try:
            return read(self._nvml)
        except self._nvml.NVMLError:
            return None

    def processes(self, index: int) -> list[GpuProcess]:
        """Compute and graphics processes on GPU ``index``, one per pid; [] when NVML refuses."""
        nvml = self._nvml
        with self._lock:
            if self._closed:
                return []
            found: dict[int, GpuProcess] = {}
            for what, query in (
                ("compute_processes", nvml.nvmlDeviceGetComputeRunningProcesses),
                ("graphics_processes", nvml.nvmlDeviceGetGraphicsRunningProcesses),
            ):
                for info in self._query(index, what, query) or ():
                    pid = int(info.pid)
                    if pid in found:
                        continue
                    used = getattr(info, "usedGpuMemory", None)
                    found[pid] = GpuProcess(
                        pid=pid,
                        name=self._process_name(pid),
                        vram_used_mib=None if used is None else used / _MIB,
                    )
            return sorted(found.values(), key=lambda p: p.pid)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            # Shutting down a library that is already gone leaves nothing to undo.
            with contextlib.suppress(self._nvml.NVMLError):
                self._nvml.nvmlShutdown()

    def _process_name(self, pid: int) -> str | None:
        try:
            return _text(self._nvml.nvmlSystemGetProcessName(pid))
        except self._nvml.NVMLError:
            return None

    def _query(self, index: int, field: str, read: Callable[[Any], _T]) -> _T | None:
        if (index, field) in self._unsupported:
            return None
        nvml = self._nvml
        try:
            return read(self._handles[index])
        except nvml.NVMLError as exc:
            if any(exc.value == getattr(nvml, code, None) for code in _PERMANENT_ERRORS):
                self._unsupported.add((index, field))
            return None

    def _sample_one(self, t: float, i: int) -> GpuSample:
        nvml = self._nvml
        memory = self._query(i, "memory", nvml.nvmlDeviceGetMemoryInfo)
        util = self._query(i, "utilization", nvml.nvmlDeviceGetUtilizationRates)
        power_mw = self._query(i, "power", nvml.nvmlDeviceGetPowerUsage)
        limit_mw = self._query(i, "power_limit", nvml.nvmlDeviceGetEnforcedPowerLimit)
        return GpuSample(
            t=t,
            gpu=i,
            name=self._names[i],
            uuid=self._uuids[i],
            vram_used_mib=None if memory is None else memory.used / _MIB,
            vram_total_mib=None if memory is None else memory.total / _MIB,
            util_gpu_pct=None if util is None else float(util.gpu),
            util_mem_pct=None if util is None else float(util.memory),
            power_w=None if power_mw is None else power_mw / 1000,
            power_limit_w=None if limit_mw is None else limit_mw / 1000,
            temperature_c=self._number(
                i,
                "temperature",
                lambda h: nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU),
            ),
            sm_clock_mhz=self._number(
                i, "sm_clock", lambda h: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM)
            ),
            mem_clock_mhz=self._number(
                i, "mem_clock", lambda h: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_MEM)
            ),
            source="nvml",
        )

    def _number(self, index: int, field: str, read: Callable[[Any], Any]) -> float | None:
        value = self._query(index, field, read)
        return None if value is None else float(value)


def cuda_version(encoded: int) -> str:
    """NVML's CUDA driver version as people write it: 12080 is "12.8", 13000 is "13.0"."""
    return f"{encoded // 1000}.{encoded % 1000 // 10}"


def resolve_gpu(
    endpoint: Endpoint, source: NvmlSource | None, proc: Path = Path("/proc")
) -> int | None:
    """The GPU index serving ``endpoint``: its ``gpu`` index, its UUID, or for ``"auto"`` the
    lowest-numbered GPU on which the process listening on its port, or a descendant, holds memory.
    None when that cannot be found (no NVML, unknown UUID, the port not served from this box)."""
    gpu = endpoint.gpu
    if isinstance(gpu, int):
        return gpu
    if gpu is None or source is None:
        return None
    if gpu != "auto":
        return source.index_of_uuid(gpu)
    port = endpoint_port(endpoint.url)
    if port is None:
        return None
    serving = descendant_pids(listening_pids(port, proc), proc)
    if not serving:
        return None
    for index in range(source.gpu_count):
        if any(p.pid in serving for p in source.processes(index)):
            return index
    return None


def endpoint_port(url: str) -> int | None:
    parsed = urlparse(url)
    try:
        port = parsed.port
    except ValueError:
        return None
    if port is not None:
        return port
    return {"http": 80, "https": 443}.get(parsed.scheme)


def _listening_inodes(port: int, proc: Path) -> set[str]:
    inodes: set[str] = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            # cols: sl, local "ADDR:PORT" in hex, remote, state, queues, timers, retr, uid, timeout, inode
            if len(cols) < 10 or cols[3] != _TCP_LISTEN:
                continue
            if int(cols[1].rsplit(":", 1)[1], 16) == port and cols[9] != "0":
                inodes.add(cols[9])
    return inodes


def _numbered(proc: Path) -> list[Path]:
    try:
        return [p for p in proc.iterdir() if p.name.isdigit()]
    except OSError:
        return []


def listening_pids(port: int, proc: Path = Path("/proc")) -> set[int]:
    """Pids holding a TCP socket that listens on ``port`` (Linux /proc; empty elsewhere or when
    the owner's file descriptors are not readable by this user)."""
    wanted = {f"socket:[{inode}]" for inode in _listening_inodes(port, proc)}
    if not wanted:
        return set()
    pids: set[int] = set()
    for pid_dir in _numbered(proc):
        try:
            fds = list((pid_dir / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = str(fd.readlink())
            except OSError:
                continue
            if target in wanted:
                pids.add(int(pid_dir.name))
                break
    return pids


def _parent_pid(stat_text: str) -> int | None:
    # The command name (field 2) is parenthesised and may hold spaces or ')', so read after the
    # last ')': state, then the parent pid.
    rest = stat_text.rsplit(")", 1)[-1].split()
    return int(rest[1]) if len(rest) > 1 and rest[1].isdigit() else None


def descendant_pids(roots: set[int], proc: Path = Path("/proc")) -> set[int]:
    """``roots`` and every process below them (vLLM's engine core is the API server's child)."""
    if not roots:
        return set()
    children: dict[int, list[int]] = {}
    for pid_dir in _numbered(proc):
        try:
            parent = _parent_pid((pid_dir / "stat").read_text())
        except OSError:
            continue
        if parent is not None:
            children.setdefault(parent, []).append(int(pid_dir.name))
    found = set(roots)
    frontier = list(roots)
    while frontier:
        for child in children.get(frontier.pop(), ()):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found

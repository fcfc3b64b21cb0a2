"""Test doubles for telemetry: a fake NVML installed over the real pynvml functions, fixture
texts in vLLM's and dcgm-exporter's exposition formats, and a tiny threaded HTTP server."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pynvml
import pytest

from nvfp4_tui.config.profile import Endpoint, Profile, RunPlan
from nvfp4_tui.config.telemetry_choice import Telemetry, parse_telemetry

MIB = 1024 * 1024


@dataclass
class FakeGpu:
    """What one fake GPU answers; ``fail`` maps a pynvml function name to the NVML error code
    that function raises for this GPU."""

    uuid: str
    name: str | bytes = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    used_bytes: int = 92316 * MIB
    total_bytes: int = 97887 * MIB
    util_gpu: int = 97
    util_mem: int = 41
    power_mw: int = 452_250
    limit_mw: int = 600_000
    temp_c: int = 66
    sm_mhz: int = 2430
    mem_mhz: int = 14001
    max_sm_mhz: int = 2617
    max_mem_mhz: int = 14001
    compute: list[tuple[int, int | None]] = field(default_factory=list)  # (pid, used bytes)
    graphics: list[tuple[int, int | None]] = field(default_factory=list)
    fail: dict[str, int] = field(default_factory=dict)


@dataclass
class FakeNvml:
    gpus: list[FakeGpu]
    process_names: dict[int, str | bytes] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    shutdowns: int = 0


def install_fake_nvml(
    monkeypatch: pytest.MonkeyPatch,
    gpus: list[FakeGpu],
    *,
    init_error: int | None = None,
    process_names: dict[int, str | bytes] | None = None,
    driver_version: str | bytes = "580.95.05",
    cuda_driver_version: int = 13000,
    system_error: int | None = None,
) -> FakeNvml:
    """Replace the pynvml functions NvmlSource calls with ones answering from ``gpus``."""
    fake = FakeNvml(gpus=gpus, process_names=process_names or {})

    def per_gpu(fn_name: str, answer: Callable[..., Any]) -> None:
        def call(handle: int, *args: Any) -> Any:
            fake.calls[fn_name] = fake.calls.get(fn_name, 0) + 1
            code = gpus[handle].fail.get(fn_name)
            if code is not None:
                raise pynvml.NVMLError(code)
            return answer(gpus[handle], *args)

        monkeypatch.setattr(pynvml, fn_name, call)

    def init() -> None:
        if init_error is not None:
            raise pynvml.NVMLError(init_error)

    def shutdown() -> None:
        fake.shutdowns += 1

    def handle_by_index(i: int) -> int:
        if not 0 <= i < len(gpus):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return i

    def process_name(pid: int) -> str | bytes:
        if pid not in fake.process_names:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)
        return fake.process_names[pid]

    def system(answer: Any) -> Callable[[], Any]:
        def call() -> Any:
            if system_error is not None:
                raise pynvml.NVMLError(system_error)
            return answer

        return call

    def max_clock(g: FakeGpu, kind: int) -> int:
        return {pynvml.NVML_CLOCK_SM: g.max_sm_mhz, pynvml.NVML_CLOCK_MEM: g.max_mem_mhz}[kind]

    def clock(g: FakeGpu, kind: int) -> int:
        return {pynvml.NVML_CLOCK_SM: g.sm_mhz, pynvml.NVML_CLOCK_MEM: g.mem_mhz}[kind]

    def temperature(g: FakeGpu, sensor: int) -> int:
        assert sensor == pynvml.NVML_TEMPERATURE_GPU
        return g.temp_c

    def processes(entries: list[tuple[int, int | None]]) -> list[SimpleNamespace]:
        # pynvml hands back friendly objects whose usedGpuMemory is None when not available.
        return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, used in entries]

    monkeypatch.setattr(pynvml, "nvmlInit", init)
    monkeypatch.setattr(pynvml, "nvmlShutdown", shutdown)
    monkeypatch.setattr(pynvml, "nvmlDeviceGetCount", lambda: len(gpus))
    monkeypatch.setattr(pynvml, "nvmlDeviceGetHandleByIndex", handle_by_index)
    monkeypatch.setattr(pynvml, "nvmlSystemGetProcessName", process_name)
    monkeypatch.setattr(pynvml, "nvmlSystemGetDriverVersion", system(driver_version))
    monkeypatch.setattr(pynvml, "nvmlSystemGetCudaDriverVersion", system(cuda_driver_version))
    per_gpu("nvmlDeviceGetName", lambda g: g.name)
    per_gpu("nvmlDeviceGetUUID", lambda g: g.uuid)
    per_gpu(
        "nvmlDeviceGetMemoryInfo",
        lambda g: pynvml.c_nvmlMemory_t(
            total=g.total_bytes, free=g.total_bytes - g.used_bytes, used=g.used_bytes
        ),
    )
    per_gpu(
        "nvmlDeviceGetUtilizationRates",
        lambda g: pynvml.c_nvmlUtilization_t(gpu=g.util_gpu, memory=g.util_mem),
    )
    per_gpu("nvmlDeviceGetPowerUsage", lambda g: g.power_mw)
    per_gpu("nvmlDeviceGetEnforcedPowerLimit", lambda g: g.limit_mw)
    per_gpu("nvmlDeviceGetTemperature", temperature)
    per_gpu("nvmlDeviceGetClockInfo", clock)
    per_gpu("nvmlDeviceGetMaxClockInfo", max_clock)
    per_gpu("nvmlDeviceGetComputeRunningProcesses", lambda g: processes(g.compute))
    per_gpu("nvmlDeviceGetGraphicsRunningProcesses", lambda g: processes(g.graphics))
    return fake


def endpoint(
    endpoint_id: str,
    url: str = "http://127.0.0.1:8016",
    *,
    gpu: int | str | None = None,
    telemetry: str = "nvml",
) -> Endpoint:
    return Endpoint(
        id=endpoint_id,
        label=endpoint_id,
        url=url,
        model="current",
        gpu=gpu,
        model_class="moe",
        telemetry=_telemetry(telemetry),
    )


def _telemetry(text: str) -> Telemetry:
    parsed = parse_telemetry(text, lambda url: url.startswith("http"))
    assert parsed is not None, text
    return parsed


def profile_of(*endpoints: Endpoint) -> Profile:
    return Profile(
        path=Path("fleet.toml"), run=RunPlan(name="t", suites=()), endpoints=tuple(endpoints)
    )


# --- vLLM /metrics in the exposition format vLLM's prometheus_client registry writes ---

TTFT_BOUNDS = (0.1, 0.25, 0.5)
ITL_BOUNDS = (0.01, 0.025, 0.05)
E2E_BOUNDS = (1.0, 2.5, 5.0)


@dataclass
class EngineState:
    """One engine's (one label set's) counters; histograms as cumulative counts per bound,
    with the +Inf bucket last."""

    engine: str = "0"
    running: float = 0
    waiting: float = 0
    kv_usage: float = 0.0  # 0..1
    preemptions: float = 0
    prompt_tokens: float = 0
    generation_tokens: float = 0
    prefix_queries: float = 0
    prefix_hits: float = 0
    ttft: tuple[float, ...] = (0, 0, 0, 0)
    itl: tuple[float, ...] = (0, 0, 0, 0)
    e2e: tuple[float, ...] = (0, 0, 0, 0)
    # Each histogram's _sum; None: 0.1 s per observation.
    ttft_sum_s: float | None = None
    itl_sum_s: float | None = None
    e2e_sum_s: float | None = None


def _labels(state: EngineState, model: str) -> str:
    return f'engine="{state.engine}",model_name="{model}"'


def _histogram(
    name: str,
    help_text: str,
    bounds: tuple[float, ...],
    engines: list[EngineState],
    attr: str,
    model: str,
) -> list[str]:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} histogram"]
    for state in engines:
        counts: tuple[float, ...] = getattr(state, attr)
        labels = _labels(state, model)
        sum_s: float | None = getattr(state, f"{attr}_sum_s")
        lines.append(f"{name}_sum{{{labels}}} {counts[-1] * 0.1 if sum_s is None else sum_s}")
        for bound, count in zip((*bounds, "+Inf"), counts, strict=True):
            # prometheus_client writes le before model_name: labels are sorted by name.
            lines.append(
                f'{name}_bucket{{engine="{state.engine}",le="{bound}",model_name="{model}"}} '
                f"{float(count)}"
            )
        lines.append(f"{name}_count{{{labels}}} {float(counts[-1])}")
    return lines


def vllm_metrics_text(engines: list[EngineState], model: str = "current") -> str:
    """A /metrics body with vLLM's current (V1) metric names, one label set per engine."""

    def series(name: str, kind: str, help_text: str, attr: str) -> list[str]:
        lines = [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        sample_name = f"{name}_total" if kind == "counter" else name
        for state in engines:
            lines.append(f"{sample_name}{{{_labels(state, model)}}} {float(getattr(state, attr))}")
        if kind == "counter":
            for state in engines:
                lines.append(f"{name}_created{{{_labels(state, model)}}} 1.7e9")
        return lines

    lines = [
        "# HELP python_gc_objects_collected_total Objects collected during gc",
        "# TYPE python_gc_objects_collected_total counter",
        'python_gc_objects_collected_total{generation="0"} 1234.0',
    ]
    lines += series(
        "vllm:num_requests_running",
        "gauge",
        "Number of requests in model execution batches.",
        "running",
    )
    lines += series(
        "vllm:num_requests_waiting",
        "gauge",
        "Number of requests waiting to be processed.",
        "waiting",
    )
    lines += series(
        "vllm:kv_cache_usage_perc",
        "gauge",
        "KV-cache usage. 1 means 100 percent usage.",
        "kv_usage",
    )
    lines += series(
        "vllm:num_preemptions",
        "counter",
        "Cumulative number of preemption from the engine.",
        "preemptions",
    )
    lines += series(
        "vllm:prefix_cache_queries",
        "counter",
        "Prefix cache queries, in terms of number of queried tokens.",
        "prefix_queries",
    )
    lines += series(
        "vllm:prefix_cache_hits",
        "counter",
        "Prefix cache hits, in terms of number of cached tokens.",
        "prefix_hits",
    )
    lines += series(
        "vllm:prompt_tokens", "counter", "Number of prefill tokens processed.", "prompt_tokens"
    )
    lines += series(
        "vllm:generation_tokens",
        "counter",
        "Number of generation tokens processed.",
        "generation_tokens",
    )
    lines += _histogram(
        "vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        TTFT_BOUNDS,
        engines,
        "ttft",
        model,
    )
    lines += _histogram(
        "vllm:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.",
        ITL_BOUNDS,
        engines,
        "itl",
        model,
    )
    lines += _histogram(
        "vllm:e2e_request_latency_seconds",
        "Histogram of e2e request latency in seconds.",
        E2E_BOUNDS,
        engines,
        "e2e",
        model,
    )
    return "\n".join(lines) + "\n"


# Older vLLM (V0 engine) names, as its /metrics printed them; written out literally.
OLD_VLLM_METRICS = """\
# HELP vllm:num_requests_running Number of requests currently running on GPU.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="current"} 3.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="current"} 1.0
# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="current"} 0.25
# HELP vllm:gpu_prefix_cache_hit_rate GPU prefix cache block hit rate.
# TYPE vllm:gpu_prefix_cache_hit_rate gauge
vllm:gpu_prefix_cache_hit_rate{model_name="current"} 0.4
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{model_name="current"} 7.0
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{model_name="current"} GEN
# HELP vllm:time_per_output_token_seconds Histogram of time per output token in seconds.
# TYPE vllm:time_per_output_token_seconds histogram
vllm:time_per_output_token_seconds_sum{model_name="current"} ITL_SUM
vllm:time_per_output_token_seconds_bucket{le="0.01",model_name="current"} ITL1
vllm:time_per_output_token_seconds_bucket{le="0.025",model_name="current"} ITL2
vllm:time_per_output_token_seconds_bucket{le="0.05",model_name="current"} ITL3
vllm:time_per_output_token_seconds_bucket{le="+Inf",model_name="current"} ITL3
vllm:time_per_output_token_seconds_count{model_name="current"} ITL3
"""


def old_vllm_text(
    generation_tokens: float, itl: tuple[float, float, float], itl_sum_s: float = 1.5
) -> str:
    text = OLD_VLLM_METRICS.replace("GEN", f"{generation_tokens:.1f}")
    text = text.replace("ITL_SUM", repr(itl_sum_s))
    for i, count in enumerate(itl, start=1):
        text = text.replace(f"ITL{i}", f"{count:.1f}")
    return text


# --- dcgm-exporter's default counters, as it prints them for two GPUs on node7 ---

_DCGM_LABELS = (
    'gpu="{gpu}",UUID="{uuid}",pci_bus_id="00000000:{bus}:00.0",device="nvidia{gpu}",'
    'modelName="NVIDIA RTX PRO 6000 Blackwell Server Edition",Hostname="{host}",'
    'DCGM_FI_DRIVER_VERSION="575.57.08"'
)
DCGM_UUIDS = (
    "GPU-5a1f03f2-8a4e-b7a0-1c1e-0f6f0e8b1d11",
    "GPU-9c2d7e41-3b6a-4d2e-a1f0-77c8a2e5f0b2",
)


def dcgm_text(hosts: tuple[str, ...] = ("node7",), with_total: bool = False) -> str:
    """dcgm-exporter's body for two GPUs on each of ``hosts`` (as a federating scrape sees it)."""
    rows = {
        "DCGM_FI_DEV_SM_CLOCK": ("gauge", "SM clock frequency (in MHz).", (2430, 1965)),
        "DCGM_FI_DEV_MEM_CLOCK": ("gauge", "Memory clock frequency (in MHz).", (14001, 14001)),
        "DCGM_FI_DEV_GPU_TEMP": ("gauge", "GPU temperature (in C).", (66, 41)),
        "DCGM_FI_DEV_POWER_USAGE": ("gauge", "Power draw (in W).", (452.25, 88.5)),
        "DCGM_FI_DEV_GPU_UTIL": ("gauge", "GPU utilization (in %).", (97, 0)),
        "DCGM_FI_DEV_MEM_COPY_UTIL": ("gauge", "Memory utilization (in %).", (41, 0)),
        "DCGM_FI_DEV_FB_FREE": ("gauge", "Framebuffer memory free (in MiB).", (5042, 96981)),
        "DCGM_FI_DEV_FB_USED": ("gauge", "Framebuffer memory used (in MiB).", (92316, 377)),
        "DCGM_FI_DEV_FB_RESERVED": ("gauge", "Framebuffer memory reserved (in MiB).", (529, 529)),
        "DCGM_FI_DEV_XID_ERRORS": ("gauge", "Value of the last XID error encountered.", (0, 0)),
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": (
            "counter",
            "Total energy consumption since boot (in mJ).",
            (812345678, 22345678),
        ),
    }
    if with_total:
        rows["DCGM_FI_DEV_FB_TOTAL"] = (
            "gauge",
            "Framebuffer memory total (in MiB).",
            (97887, 97887),
        )
    lines: list[str] = []
    for name, (kind, help_text, values) in rows.items():
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        for host in hosts:
            for gpu, value in enumerate(values):
                labels = _DCGM_LABELS.format(
                    gpu=gpu, uuid=DCGM_UUIDS[gpu], bus=f"{0x3B + gpu:02X}", host=host
                )
                lines.append(f"{name}{{{labels}}} {value}")
    return "\n".join(lines) + "\n"


# --- a threaded HTTP server answering from a table the test can change ---

Route = Callable[[], tuple[int, str]]


@contextmanager
def http_server(routes: dict[str, Route]) -> Iterator[str]:
    """Serve ``routes`` (path -> () -> (status, body)) on 127.0.0.1; yields the base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            route = routes.get(self.path)
            status, body = route() if route else (404, "Not Found")
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)

"""`nvfp4-tui gpus`: a one-shot table of the GPUs and metrics sources this host can see.

NVML's GPUs with their processes; with a profile, also where each endpoint's GPU resolves, each
DCGM exporter it names, and one read of each endpoint's /metrics. Anything missing is one line
saying why; the command exits 0 whatever it could or could not see.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import aiohttp

from nvfp4_tui.config.profile import Endpoint, Profile
from nvfp4_tui.core.events import GpuSample, ServerSample
from nvfp4_tui.telemetry.dcgm import DcgmSource, DcgmUnavailable
from nvfp4_tui.telemetry.nvml import NvmlSource, TelemetryUnavailable, resolve_gpu
from nvfp4_tui.telemetry.prometheus import MetricsStatus, PrometheusScraper
from nvfp4_tui.telemetry.sampler import by_url

DASH = "—"


def _num(value: float | None, digits: int = 0) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def _pair(used: float | None, total: float | None) -> str:
    return f"{_num(used)} / {_num(total)}"


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def gpu_table(samples: Sequence[GpuSample]) -> list[str]:
    """Aligned lines, a header then one row per GPU sample; host shown when any sample has one."""
    with_host = any(s.host for s in samples)
    header = [
        "GPU",
        "NAME",
        "UUID",
        "VRAM MiB (used / total)",
        "UTIL %",
        "MEM %",
        "POWER W (draw / limit)",
        "TEMP °C",
        "SM MHz",
        "MEM MHz",
    ]
    rows = [(["HOST"] if with_host else []) + header]
    for s in samples:
        rows.append(
            ([s.host or DASH] if with_host else [])
            + [
                str(s.gpu),
                s.name or DASH,
                s.uuid or DASH,
                _pair(s.vram_used_mib, s.vram_total_mib),
                _num(s.util_gpu_pct),
                _num(s.util_mem_pct),
                _pair(s.power_w, s.power_limit_w),
                _num(s.temperature_c),
                _num(s.sm_clock_mhz),
                _num(s.mem_clock_mhz),
            ]
        )
    return _table(rows)


def _print_nvml(source: NvmlSource, t: float) -> None:
    print(f"NVML: {source.gpu_count} GPU(s)")
    for line in gpu_table(source.sample(t)):
        print(f"  {line}")
    for index in range(source.gpu_count):
        processes = source.processes(index)
        if not processes:
            print(f"  GPU {index}: no processes")
            continue
        print(f"  GPU {index} processes:")
        for line in _table(
            [("PID", "NAME", "VRAM MiB")]
            + [(str(p.pid), p.name or DASH, _num(p.vram_used_mib)) for p in processes]
        ):
            print(f"    {line}")


def _resolved(endpoint: Endpoint, nvml: NvmlSource | None) -> str:
    if endpoint.telemetry.kind != "nvml" or nvml is None or endpoint.gpu is None:
        return DASH
    index = resolve_gpu(endpoint, nvml)
    if index is None or index >= nvml.gpu_count:
        return "not found"
    return f"GPU {index}"


def _print_endpoints(profile: Profile, nvml: NvmlSource | None) -> None:
    print(f"Profile {profile.path}: {len(profile.endpoints)} endpoint(s)")
    rows = [("ENDPOINT", "URL", "TELEMETRY", "GPU", "ON THIS HOST")]
    for e in profile.endpoints:
        rows.append(
            (
                e.id,
                e.url,
                str(e.telemetry),
                DASH if e.gpu is None else str(e.gpu),
                _resolved(e, nvml),
            )
        )
    for line in _table(rows):
        print(f"  {line}")


def _print_dcgm(profile: Profile, t: float) -> None:
    for url in sorted(by_url(e for e in profile.endpoints if e.telemetry.kind == "dcgm")):
        source = DcgmSource(url)
        try:
            samples = source.sample(t)
        except DcgmUnavailable as exc:
            print(str(exc))
            continue
        print(f"DCGM exporter {url}: {len(samples)} GPU(s)")
        for line in gpu_table(samples):
            print(f"  {line}")


async def _scrape_once(profile: Profile) -> tuple[list[ServerSample], list[MetricsStatus]]:
    statuses: list[MetricsStatus] = []
    async with aiohttp.ClientSession() as session:
        scraper = PrometheusScraper(profile.endpoints, session, on_status=statuses.append)
        samples = await scraper.scrape_once()
    return samples, statuses


def _print_server_metrics(profile: Profile) -> None:
    samples, statuses = asyncio.run(_scrape_once(profile))
    by_id = {s.endpoint_id: s for s in samples}
    problems = {s.endpoint_id: s.message for s in statuses}
    print("Server metrics (/metrics):")
    rows = [("ENDPOINT", "RUNNING", "WAITING", "KV CACHE %", "PREEMPTIONS", "STATUS")]
    for e in profile.endpoints:
        sample = by_id.get(e.id)
        if sample is None:
            rows.append((e.id, DASH, DASH, DASH, DASH, problems.get(e.id, "no server metrics")))
            continue
        rows.append(
            (
                e.id,
                _num(sample.requests_running),
                _num(sample.requests_waiting),
                _num(sample.kv_cache_pct, 1),
                _num(sample.preemptions_total),
                "ok",
            )
        )
    for line in _table(rows):
        print(f"  {line}")


def gpus_command(profile: Profile | None) -> int:
    """Print what GPU and server telemetry this host can see; always returns 0."""
    t = time.time()
    try:
        nvml: NvmlSource | None = NvmlSource.open()
    except TelemetryUnavailable as exc:
        print(str(exc))
        nvml = None
    try:
        if nvml is not None:
            _print_nvml(nvml, t)
        if profile is not None:
            _print_endpoints(profile, nvml)
            _print_dcgm(profile, t)
            _print_server_metrics(profile)
    finally:
        if nvml is not None:
            nvml.close()
    return 0

"""DCGM exporter telemetry: GPUs on another node, read from dcgm-exporter's Prometheus endpoint.

``dcgm_samples`` is the pure part (exporter text -> GpuSample per GPU); ``DcgmSource`` fetches
the text with a blocking urllib call, which is fine in the sampler's worker thread. Framebuffer
fields are in MiB, power in W, clocks in MHz, utilisation in percent, as the exporter reports.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nvfp4_tui.core.events import GpuSample
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.telemetry.exposition import samples
from nvfp4_tui.telemetry.prometheus import MAX_METRICS_BYTES, STATUS_MESSAGE_CHARS
from nvfp4_tui.telemetry.reply_deadline import REPLY_DEADLINE_S, read_within


class DcgmUnavailable(Exception):
    """The exporter could not be read; ``str()`` is one line naming its URL."""


@dataclass(frozen=True, slots=True)
class _GpuKey:
    host: str | None
    gpu: int
    uuid: str | None
    name: str | None


def _gpu_key(labels: dict[str, str]) -> _GpuKey | None:
    raw = labels.get("gpu", "")
    if not raw.isdigit():
        return None
    return _GpuKey(
        host=labels.get("Hostname") or None,
        gpu=int(raw),
        uuid=labels.get("UUID") or None,
        name=labels.get("modelName") or None,
    )


def _wanted(key: _GpuKey, gpus: Sequence[int | str] | None, host: str | None) -> bool:
    if host is not None and key.host != host:
        return False
    return gpus is None or key.gpu in gpus or (key.uuid is not None and key.uuid in gpus)


def dcgm_samples(
    text: str, t: float, gpus: Sequence[int | str] | None = None, host: str | None = None
) -> list[GpuSample]:
    """One GpuSample per GPU in the exporter's text, ordered by (host, index); ``gpus`` keeps
    only these indices or UUIDs, ``host`` only that ``Hostname``. Raises ValueError when the
    text is not Prometheus exposition."""
    fields: dict[_GpuKey, dict[str, float]] = {}
    for sample in samples(text):
        if not sample.name.startswith("DCGM_FI_"):
            continue
        key = _gpu_key(sample.labels())
        if key is None or not _wanted(key, gpus, host):
            continue
        # The first series wins: Kubernetes pod labels can repeat a GPU's value.
        fields.setdefault(key, {}).setdefault(
            sample.name.removeprefix("DCGM_FI_DEV_"), sample.value
        )
    return [_sample(t, key, values) for key, values in sorted(fields.items(), key=_order)]


def _order(item: tuple[_GpuKey, dict[str, float]]) -> tuple[str, int]:
    return (item[0].host or "", item[0].gpu)


def _sample(t: float, key: _GpuKey, values: dict[str, float]) -> GpuSample:
    used, free = values.get("FB_USED"), values.get("FB_FREE")
    total = values.get("FB_TOTAL")
    if total is None and used is not None and free is not None:
        total = used + free + values.get("FB_RESERVED", 0.0)
    return GpuSample(
        t=t,
        gpu=key.gpu,
        name=key.name,
        uuid=key.uuid,
        vram_used_mib=used,
        vram_total_mib=total,
        util_gpu_pct=values.get("GPU_UTIL"),
        util_mem_pct=values.get("MEM_COPY_UTIL"),
        power_w=values.get("POWER_USAGE"),
        power_limit_w=_first(values, ("ENFORCED_POWER_LIMIT", "POWER_MGMT_LIMIT")),
        temperature_c=values.get("GPU_TEMP"),
        sm_clock_mhz=values.get("SM_CLOCK"),
        mem_clock_mhz=values.get("MEM_CLOCK"),
        source="dcgm",
        host=key.host,
    )


def _first(values: dict[str, float], names: Iterable[str]) -> float | None:
    return next((values[n] for n in names if n in values), None)


class DcgmSource:
    """A GpuSource reading one dcgm-exporter URL; ``sample`` raises DcgmUnavailable on failure."""

    def __init__(
        self,
        url: str,
        gpus: Sequence[int | str] | None = None,
        *,
        host: str | None = None,
        timeout_s: float = 2.0,
        deadline_s: float = REPLY_DEADLINE_S,
    ) -> None:
        self.url = url
        self._gpus = None if gpus is None else tuple(gpus)
        self._host = host
        self._timeout_s = timeout_s
        self._deadline_s = deadline_s

    def __repr__(self) -> str:
        return f"DcgmSource({self.url!r})"

    def sample(self, t: float) -> list[GpuSample]:
        text = self.fetch()
        try:
            return dcgm_samples(text, t, self._gpus, self._host)
        except ValueError as exc:
            # The exporter's own line, quoted: scrubbed here, as `gpus` prints it as it is.
            reason = outside_line(str(exc), STATUS_MESSAGE_CHARS)
            raise DcgmUnavailable(f"DCGM exporter {self.url}: {reason}") from None

    def fetch(self) -> str:
        """The exporter's body; raises DcgmUnavailable with a one-line reason."""
        started = time.monotonic()
        try:
            with urllib.request.urlopen(self.url, timeout=self._timeout_s) as response:
                data = read_within(response, MAX_METRICS_BYTES, self._deadline_s, started=started)
        except urllib.error.HTTPError as exc:
            raise DcgmUnavailable(f"DCGM exporter {self.url}: HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            text = " ".join(str(reason).split()) or type(exc).__name__
            raise DcgmUnavailable(f"DCGM exporter {self.url}: {text}") from None
        if len(data) > MAX_METRICS_BYTES:
            limit = MAX_METRICS_BYTES / 2**20
            raise DcgmUnavailable(f"DCGM exporter {self.url}: body over {limit:g} MiB")
        return data.decode(errors="replace")

    def close(self) -> None:
        """Nothing is held between samples."""

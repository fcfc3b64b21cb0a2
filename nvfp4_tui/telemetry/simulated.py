"""GPU telemetry from the simulator: each simulated endpoint's ``GET /sim/gpu``, as GpuSamples.

Blocking by design: ``sample`` runs in a worker thread like the NVML source. An endpoint that
does not answer (down, stalled, gone) yields no sample for its GPU this round.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import fields

from nvfp4_tui.config.profile import Endpoint
from nvfp4_tui.core.events import GpuSample
from nvfp4_tui.telemetry.source import GpuIdentity

DEFAULT_TIMEOUT_S = 0.5
_FIELDS = frozenset(f.name for f in fields(GpuSample)) - {"t"}


class SimGpuSource:
    """Polls ``/sim/gpu`` on each base URL; implements ``telemetry.source.GpuSource``."""

    def __init__(
        self,
        base_urls: Iterable[str],
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        hosts: Sequence[str | None] = (),
    ) -> None:
        self.base_urls = tuple(url.rstrip("/") for url in base_urls)
        # The node each simulated card stands for (its endpoint's): a fleet's nodes each have
        # a GPU 0.
        self.hosts = tuple(hosts) or (None,) * len(self.base_urls)
        self.timeout_s = timeout_s
        # Loopback servers: never route through an HTTP proxy from the environment.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    @classmethod
    def for_endpoints(
        cls, endpoints: Sequence[Endpoint], *, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> SimGpuSource:
        """A source for the endpoints whose telemetry is ``sim``."""
        simulated = [e for e in endpoints if e.telemetry.kind == "sim"]
        return cls(
            [e.url for e in simulated],
            timeout_s=timeout_s,
            hosts=[e.node or None for e in simulated],
        )

    def _fetch(self, base_url: str, host: str | None, t: float) -> GpuSample | None:
        try:
            with self._opener.open(f"{base_url}/sim/gpu", timeout=self.timeout_s) as reply:
                body = json.loads(reply.read())
        except (OSError, ValueError):  # URLError, timeouts and resets are OSErrors
            return None
        if not isinstance(body, dict) or not isinstance(body.get("gpu"), int):
            return None
        fields = {k: v for k, v in body.items() if k in _FIELDS}
        return GpuSample(t=t, **{**fields, "host": host})

    def sample(self, t: float) -> list[GpuSample]:
        samples = (
            self._fetch(url, host, t) for url, host in zip(self.base_urls, self.hosts, strict=True)
        )
        return [s for s in samples if s is not None]

    def identities(self) -> list[GpuIdentity]:
        """What a sample tells of each simulated card; a simulator has no driver to name."""
        return [
            GpuIdentity(gpu=s.gpu, name=s.name, uuid=s.uuid, power_limit_w=s.power_limit_w)
            for s in self.sample(0.0)
        ]

    def close(self) -> None:
        """Nothing to release: every poll opens and closes its own connection."""

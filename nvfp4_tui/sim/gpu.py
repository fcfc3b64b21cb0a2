"""A simulated GPU behind one simulated endpoint: load-driven utilization, power and temperature.

Utilization is the share of the last sampling window in which any request ran (as NVML
reports it), scaled by how full the batch was. Power moves toward a load-dependent target within
about a second; temperature follows power with a time constant of half a minute, so it lags.
Both time constants are in simulated seconds (``time_scale`` speeds them up with the rest).
A card with no request in flight reads idle at once, utilization and power both: a real one
drops to idle power within a fraction of a second of its last kernel, well inside a sampling
period, and a finished endpoint's card must not read busy in its last sample.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections.abc import Callable
from random import Random
from typing import Any

from nvfp4_tui.config.profile import SimSpec
from nvfp4_tui.sim.kv_cache import vram_used_mib

POWER_TAU_S = 1.0
TEMPERATURE_TAU_S = 30.0
AMBIENT_C = 28.0
MAX_RISE_C = 57.0  # at the power limit
BOOST_CLOCK_MHZ = 2617.0
IDLE_CLOCK_MHZ = 180.0
MEM_CLOCK_MHZ = 14001.0
IDLE_MEM_CLOCK_MHZ = 405.0
THROTTLE_FROM_C = 80.0
FULL_BATCH = 8  # requests at which the batch draws its full decode power


def gpu_uuid(name: str, index: int, seed: int) -> str:
    """A stable ``GPU-xxxxxxxx-xxxx-...`` for a simulated card."""
    digest = hashlib.sha256(f"{name}|{index}|{seed}".encode()).digest()
    return f"GPU-{uuid.UUID(bytes=digest[:16])}"


class SimGpu:
    """One simulated card, sampled on demand from its endpoint's load integrals and the
    requests it has in flight now."""

    def __init__(
        self,
        spec: SimSpec,
        index: int,
        integrals: Callable[[], tuple[float, float]],
        clock: Callable[[], float],
        in_flight: Callable[[], int],
        time_scale: float = 1.0,
    ) -> None:
        self.spec = spec
        self.index = index
        self.uuid = gpu_uuid(spec.gpu_name, index, spec.seed)
        self._vram_used_mib = vram_used_mib(spec)
        self._integrals = integrals
        self._in_flight = in_flight
        self._clock = clock
        self._time_scale = time_scale
        self._rng = Random(f"gpu|{spec.seed}|{index}")
        self.idle_power_w = 30.0 + self._rng.uniform(0.0, 25.0)
        self._power_w = self.idle_power_w
        self._temperature_c = AMBIENT_C + MAX_RISE_C * self.idle_power_w / spec.power_limit_w
        self._last_t = clock()
        self._last_busy_s, self._last_running_s = integrals()

    def sample(self) -> dict[str, Any]:
        """The card's state now: the fields of ``events.GpuSample`` except ``t`` and ``host``."""
        now = self._clock()
        busy_s, running_s = self._integrals()
        window_s = now - self._last_t
        if window_s > 1e-6:
            busy = (busy_s - self._last_busy_s) / window_s
            batch = (running_s - self._last_running_s) / window_s
        else:
            busy, batch = 0.0, 0.0
        self._last_t, self._last_busy_s, self._last_running_s = now, busy_s, running_s
        busy = min(max(busy, 0.0), 1.0)
        if self._in_flight() == 0:
            busy, batch = 0.0, 0.0
        fill = min(batch / max(busy, 1e-9), FULL_BATCH) / FULL_BATCH if busy > 0 else 0.0

        sim_dt = window_s * self._time_scale
        limit = self.spec.power_limit_w
        target_w = self.idle_power_w + (0.9 * limit - self.idle_power_w) * busy * (
            0.55 + 0.45 * fill
        )
        if busy > 0:
            self._power_w += (target_w - self._power_w) * (1 - math.exp(-sim_dt / POWER_TAU_S))
        else:
            self._power_w = self.idle_power_w
        target_c = AMBIENT_C + MAX_RISE_C * self._power_w / limit
        self._temperature_c += (target_c - self._temperature_c) * (
            1 - math.exp(-sim_dt / TEMPERATURE_TAU_S)
        )
        jitter = self._rng.uniform(-1.0, 1.0)
        util = busy * (93.0 + 6.0 * fill) + (jitter if busy > 0 else 0.0)
        throttle_mhz = max(0.0, self._temperature_c - THROTTLE_FROM_C) * 15.0
        active = busy > 0
        return {
            "gpu": self.index,
            "name": self.spec.gpu_name,
            "uuid": self.uuid,
            "vram_used_mib": self._vram_used_mib + round(min(batch, FULL_BATCH)) * 2.0,
            "vram_total_mib": self.spec.vram_total_mib,
            "util_gpu_pct": round(min(max(util, 0.0), 100.0), 1),
            "util_mem_pct": round(busy * (55.0 + 25.0 * fill), 1),
            "power_w": round(self._power_w + jitter * 2.0, 1),
            "power_limit_w": limit,
            "temperature_c": round(self._temperature_c, 1),
            "sm_clock_mhz": round(BOOST_CLOCK_MHZ - throttle_mhz) if active else IDLE_CLOCK_MHZ,
            "mem_clock_mhz": MEM_CLOCK_MHZ if active else IDLE_MEM_CLOCK_MHZ,
            "source": "sim",
        }

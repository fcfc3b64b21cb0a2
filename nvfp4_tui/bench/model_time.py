"""Modelled time: what a run records against a simulator that serves its GPU's token schedule
``time_scale`` times faster than real time (``demo --time-scale``).

The runner keeps its own clock in real seconds: it sleeps, times out and measures its event
loop's lag in them. What it reads from the plan and what it records are in modelled seconds,
the simulated GPU's: a phase of 10 s at ×10 runs for 1 s of real time (as do warm-up and
cool-down windows, ``max_duration_s`` and an open loop's schedule), every duration it records
is ``scale`` times the real one and every rate ``1 / scale`` of it. A scaled run's figures are
then the modelled GPU's wherever they are shown, and so is the event loop's lag: a 3 ms stall
at ×10 is 30 ms of modelled time, which the timing doubt then flags as a client that could not
keep up.

Timeouts and the server's Retry-After stay in real seconds: they guard the client, not the model.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields, replace

from nvfp4_tui.bench.client import Measurement

# The real-time fields of a measurement: none is a modelled duration.
_REAL_SECONDS = frozenset({"retry_after_s"})
_DURATIONS = tuple(
    f.name for f in fields(Measurement) if f.name.endswith("_s") and f.name not in _REAL_SECONDS
)
_RATES = tuple(f.name for f in fields(Measurement) if f.name.endswith("_tps"))


@dataclass(frozen=True)
class ModelTime:
    """An endpoint's clock: ``scale`` modelled seconds pass in one real second (1: a real
    server)."""

    scale: float = 1.0

    def now(self) -> float:
        """The modelled clock: ``perf_counter`` times ``scale``."""
        return time.perf_counter() * self.scale

    def seconds(self, real_s: float) -> float:
        """Modelled seconds in ``real_s`` real ones."""
        return real_s * self.scale

    def real_s(self, modelled_s: float) -> float:
        """Real seconds that ``modelled_s`` modelled ones take."""
        return modelled_s / self.scale

    def rate(self, per_real_s: float) -> float:
        """A rate per real second as a rate per modelled second."""
        return per_real_s / self.scale

    def measurement(self, m: Measurement) -> Measurement:
        """``m`` in modelled time: every duration times ``scale``, every tok/s over it."""
        if self.scale == 1.0:
            return m
        durations = {
            name: value * self.scale
            for name in _DURATIONS
            if (value := getattr(m, name)) is not None
        }
        rates = {
            name: value / self.scale for name in _RATES if (value := getattr(m, name)) is not None
        }
        return replace(m, **durations, **rates)

"""The arrival shapes an open-loop phase may name (``[run] arrivals``, ``--arrivals``).

Their schedules are drawn by ``bench.load.ARRIVAL_SHAPES``, one entry per name here (a test
keeps the two the same). Adding a shape is its name here and its draw there. This module loads
nothing else, so the command line can offer the choices without loading profile code.
"""

from __future__ import annotations

from typing import Literal, get_args

Arrivals = Literal["constant", "poisson", "gamma"]
ARRIVALS: tuple[Arrivals, ...] = get_args(Arrivals)
# gamma arrivals: the gaps' shape (1: Poisson; below 1 burstier, above 1 more even).
MAX_BURSTINESS = 1000.0

"""Axis ticks a reader can count by: steps of 1, 2 or 5 times a power of ten, written with the
decimals the step needs (plotext's own ticks split the range evenly: 448.7, 373.9, …)."""

from __future__ import annotations

import math

from textual_plotext.plot import Plot

STEPS = (1.0, 2.0, 5.0, 10.0)  # of a power of ten; a step of 10 always fits most
ROWS_PER_TICK = 2  # a y tick every other row at most: a label never touches the next
COLUMNS_PER_TICK = 10  # an x tick label is up to 7 characters wide, with room between two


def nice_ticks(low: float, high: float, most: int) -> list[float]:
    """About ``most`` ticks inside [low, high], a 1-2-5 step apart: the widest step that gives
    at most ``most``, or one more where that step would leave a single tick (208 to 268 at
    most two: 220, 240, 260 rather than 250 alone); ``[low]`` for a range without width."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    most = max(2, most)
    raw = (high - low) / (most - 1)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    steps = [multiple * magnitude for multiple in (0.5, *STEPS)]
    counts = [_tick_range(low, high, step) for step in steps]
    index = next(i for i, found in enumerate(counts) if _count(found) <= most)
    if _count(counts[index]) < 2 and index > 0 and _count(counts[index - 1]) <= most + 1:
        index -= 1
    (first, last), step = counts[index], steps[index]
    # To 12 significant digits: 3 × 0.1 is 0.3 here, not 0.30000000000000004.
    return [float(f"{i * step:.12g}") for i in range(first, last + 1)]


def _tick_range(low: float, high: float, step: float) -> tuple[int, int]:
    """The first and last multiples of ``step`` inside [low, high]."""
    return math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)


def _count(tick_range: tuple[int, int]) -> int:
    return tick_range[1] - tick_range[0] + 1


def tick_labels(ticks: list[float]) -> list[str]:
    """Each tick with as many decimals as the step between them needs, and no more."""
    if len(ticks) < 2:
        return [f"{t:g}" for t in ticks]
    step = ticks[1] - ticks[0]
    digits = max(0, -math.floor(math.log10(step) + 1e-9))
    return [f"{t:.{digits}f}" for t in ticks]


def nice_yticks(plt: Plot, low: float, high: float, rows: int, *, right: bool = False) -> None:
    """Ticks on the y axis of a plot ``rows`` high showing [low, high]."""
    ticks = nice_ticks(low, high, rows // ROWS_PER_TICK + 1)
    side = "right" if right else "left"
    # textual_plotext's stub types a side as float; plotext takes "left" or "right".
    plt.yticks(ticks, tick_labels(ticks), yside=side)  # type: ignore[arg-type]


def nice_xticks(plt: Plot, low: float, high: float, columns: int, *, unit: str = "") -> None:
    """Ticks on the x axis of a plot ``columns`` wide showing [low, high]; ``unit`` after each
    (a time axis: "30s"), so that the axis says what it counts without a row of its own."""
    ticks = nice_ticks(low, high, columns // COLUMNS_PER_TICK + 1)
    plt.xticks(ticks, [f"{label}{unit}" for label in tick_labels(ticks)])

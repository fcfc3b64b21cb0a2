"""How numbers read on screen: one format per quantity, and an em dash for what is unknown."""

from __future__ import annotations

import math
from collections.abc import Iterable

DASH = "—"


def tps(value: float | None, column: Iterable[float | None] = ()) -> str:
    """Tokens per second: one decimal below 1000, none above; in a table, as its ``column``'s
    largest value has them, so that the column's numbers align on their decimal point."""
    if value is None:
        return DASH
    largest = max((v for v in column if v is not None), default=value)
    return f"{value:.0f}" if max(value, largest) >= 1000 else f"{value:.1f}"


def rate(value_per_s: float | None) -> str:
    """Events per second (requests, goodput): two decimals below 10, one below 100, none above."""
    if value_per_s is None:
        return DASH
    if value_per_s >= 100:
        return f"{value_per_s:.0f}"
    return f"{value_per_s:.1f}" if value_per_s >= 10 else f"{value_per_s:.2f}"


def seconds_as_ms(value_s: float | None) -> str:
    """A latency in milliseconds below 10 s, else in seconds."""
    if value_s is None:
        return DASH
    if value_s >= 10:
        return f"{value_s:.1f} s"
    return f"{value_s * 1000:.0f} ms"


def clock(value_s: float | None) -> str:
    """Elapsed or remaining time as H:MM:SS, or M:SS under an hour."""
    if value_s is None or not math.isfinite(value_s):  # a damaged snapshot's NaN or inf
        return DASH
    total = max(0, round(value_s))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def mib(value: float | None) -> str:
    """MiB with thousands separators, as nvidia-smi prints them."""
    return DASH if value is None else f"{value:,.0f}"


def pct(value: float | None, digits: int = 0) -> str:
    return DASH if value is None else f"{value:.{digits}f}%"


def watts(value: float | None) -> str:
    return DASH if value is None else f"{value:.0f} W"


def celsius(value: float | None) -> str:
    return DASH if value is None else f"{value:.0f} °C"


def score(value: float | None) -> str:
    """A quality score in 0..1, two decimals as the seed prints them."""
    return DASH if value is None else f"{value:.2f}"


def score_ci(half_width: float | None) -> str:
    """The half width of a 95% CI of a score, e.g. ``±.04``; empty when there is none."""
    if half_width is None:
        return ""
    text = f"{half_width:.2f}"
    return "±" + (text[1:] if text.startswith("0.") else text)


def relative(ratio: float | None) -> str:
    """A speed ratio as the seed writes it: ``+11%`` or ``-58%`` below double, ``2.6×`` beyond."""
    if ratio is None:
        return DASH
    if ratio >= 2:
        return f"{ratio:.1f}×"
    change = (ratio - 1) * 100
    return "±0%" if round(change) == 0 else f"{change:+.0f}%"


def figure(value: float | None) -> str:
    """A statistic in a table of many: three significant figures, whole numbers from 100 up
    (with thousands separated), so that every column stays five or six wide."""
    if value is None or not math.isfinite(value):
        return DASH
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if abs(value) >= 1 or value == 0 else f"{value:.3f}"

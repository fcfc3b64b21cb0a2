"""Plain-text line charts for the report (plotext), one marked line per endpoint: they must
read without colour, in a CI log or a file."""

from __future__ import annotations

from collections.abc import Sequence

import plotext as plt

CHART_WIDTH = 72
CHART_HEIGHT = 18
CHART_MARKERS = "o+x*#@%&$=~^"  # one per endpoint


def line_chart(
    lines: Sequence[tuple[str, Sequence[float], Sequence[float]]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    xticks: tuple[list[float], list[str]] | None = None,
) -> str:
    """``lines`` of (label, xs, ys), each with its own marker, as plain text."""
    plt.clear_figure()
    plt.theme("clear")
    plt.plotsize(CHART_WIDTH, CHART_HEIGHT)
    for n, (label, xs, ys) in enumerate(lines):
        plt.plot(list(xs), list(ys), label=label, marker=CHART_MARKERS[n % len(CHART_MARKERS)])
    if xticks is not None:
        plt.xticks(*xticks)
    plt.title(title)
    plt.xlabel(xlabel)
    plt.ylabel(ylabel)
    text = plt.uncolorize(plt.build())
    plt.clear_figure()
    return "\n".join(line.rstrip() for line in text.splitlines())

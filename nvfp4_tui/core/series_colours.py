"""One colour per endpoint, the same in every chart, legend and exported figure.

An endpoint's colour is its place in the run's endpoint order, so a figure exported from a
snapshot and the live leaderboard draw the same model in the same hue.
"""

from __future__ import annotations

# Told apart also by colour-blind readers (Okabe and Ito's palette); themes rarely define seven
# distinct hues of their own (textual-dark's accent is its warning).
SERIES_HEX = ("#56B4E9", "#E69F00", "#009E73", "#F0E442", "#CC79A7", "#D55E00", "#0072B2")


def series_hex(index: int) -> str:
    """The colour of the ``index``-th endpoint, as ``#rrggbb``."""
    return SERIES_HEX[index % len(SERIES_HEX)]

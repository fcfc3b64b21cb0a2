"""One colour per endpoint, the same in every chart, legend and exported figure.

An endpoint's colour is its place in the run's endpoint order, so a figure exported from a
snapshot and the live leaderboard draw the same model in the same hue.
"""

from __future__ import annotations

# Nine hues, each exactly a colour of the xterm 256-colour cube (0, 95, 135, 175, 215, 255 per
# channel), so a 256-colour terminal shows what a true-colour one does instead of rounding two
# neighbours onto one. Each pair is at least 30 apart in CIE Lab (ΔE76) and each stays readable
# on a dark and a light background (mid lightness, L 59-81). The order puts the most different
# hues first: a run of seven never meets the violet and lime ones, nearest the blue and green.
SERIES_HEX = (
    "#5FAFFF",  # sky blue (75)
    "#FF8700",  # orange (208)
    "#00AF5F",  # green (35)
    "#D75FD7",  # orchid (170)
    "#D7AF00",  # gold (178)
    "#FF5F5F",  # salmon red (203)
    "#00AFAF",  # teal (37)
    "#8787FF",  # violet (105)
    "#AFD75F",  # lime (149)
)


def series_hex(index: int) -> str:
    """The colour of the ``index``-th endpoint, as ``#rrggbb``."""
    return SERIES_HEX[index % len(SERIES_HEX)]

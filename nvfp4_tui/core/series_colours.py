"""One colour per model, the same in every chart, legend and exported figure, in every run.

A model's hue is keyed by its endpoint's id (the profile's name for the model it serves, which
``compare`` pairs runs by first; a served name is often vLLM's ``current`` and a label changes
between runs): the id hashes to a preferred hue, and where ids collide the one first in sorted
order keeps it and the other takes the next free hue. Two runs of the same models colour them
alike, whatever their order or their number (but for collisions, which one would lose).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

# Nine hues, each exactly a colour of the xterm 256-colour cube (0, 95, 135, 175, 215, 255 per
# channel), so a 256-colour terminal shows what a true-colour one does instead of rounding two
# neighbours onto one. Each pair is at least 30 apart in CIE Lab (ΔE76) and each stays readable
# on a dark and a light background (mid lightness, L 59-81). The violet and lime ones are
# nearest the blue and green: a marker beside each colour tells those apart too.
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
    """The colour of hue ``index`` (see ``colour_indices``), as ``#rrggbb``."""
    return SERIES_HEX[index % len(SERIES_HEX)]


def colour_indices(endpoint_ids: Iterable[str]) -> dict[str, int]:
    """Each endpoint id's hue index. Past nine ids every hue is taken and a second round of
    the same rule begins: hues repeat, and the charts' markers tell those series apart."""
    hues = len(SERIES_HEX)
    taken: set[int] = set()
    out: dict[str, int] = {}
    for endpoint_id in sorted(set(endpoint_ids)):
        if len(taken) == hues:
            taken.clear()
        hue = zlib.crc32(endpoint_id.encode()) % hues  # stable across processes, unlike hash()
        while hue in taken:
            hue = (hue + 1) % hues
        taken.add(hue)
        out[endpoint_id] = hue
    return out

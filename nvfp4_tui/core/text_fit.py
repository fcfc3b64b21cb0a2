"""Names cut to a width at a word boundary, so no screen or figure shows half a word."""

from __future__ import annotations

import re

ELLIPSIS = "…"
# Where a model name may be cut: after a space, a hyphen, a slash, an underscore or a dot.
_BOUNDARY = re.compile(r"[ \-/_.]")


def fit_words(text: str, width: int) -> str:
    """``text`` if it fits in ``width`` cells, else its longest head ending at a word boundary
    with an ellipsis ("Huihui Gemma4-26B-A4B" in 16: "Huihui Gemma4…"); a first word longer
    than the room is cut inside, the only way it fits."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    room = width - 1
    cuts = [m.start() for m in _BOUNDARY.finditer(text) if 0 < m.start() <= room]
    head = text[: cuts[-1]] if cuts else text[:room]
    return head.rstrip(" -/_.·") + ELLIPSIS

"""Published figures: PNG and SVG files of a snapshot's figures (``export --format figures``),
drawn with matplotlib, an optional extra. Nothing here imports matplotlib until a figure is
drawn, so the base install, the monitor and the text report never load it.
"""

from __future__ import annotations

INSTALL_HINT = "figures need matplotlib: pip install 'nvfp4-tui[figures]'"


class FiguresExtraMissing(Exception):
    """matplotlib is not installed; the message is the one line that says how to install it."""

    def __init__(self) -> None:
        super().__init__(INSTALL_HINT)

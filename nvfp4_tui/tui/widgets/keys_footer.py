"""KeysFooter: Textual's Footer with its keys in the screen's first frame.

Textual's Footer composes empty and fills itself only once the screen signals its bindings, a
refresh later: a pushed screen (the detail) showed a frame with a blank footer first. The
screen's bindings are known when the footer composes, so this one lists them at once; later
changes (a binding enabled or hidden) still come through the signal.
"""

from __future__ import annotations

from textual.widgets import Footer


class KeysFooter(Footer):
    def __init__(self) -> None:
        super().__init__()
        self._bindings_ready = True

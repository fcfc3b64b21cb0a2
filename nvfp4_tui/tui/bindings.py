"""The app's own key bindings, each with an id: the footer, the help screen and the command
palette all read their keys and actions from here."""

from __future__ import annotations

from collections.abc import Mapping

from textual.binding import Binding
from textual.keys import format_key

GENERAL_BINDINGS: list[Binding] = [
    Binding("q", "request_quit", "Quit", id="quit"),
    Binding("p", "toggle_pause", "Pause/resume", id="pause"),
    Binding("l", "leaderboard", "Leaderboard", id="leaderboard"),
    Binding("g", "grid", "Grid", id="grid"),
    Binding("v", "toggle_scores", "Quality score", id="scores"),
    Binding("question_mark", "help", "Keys", key_display="?", id="help"),
]
# Bound only while the source offers playback (``FleetApp.check_action``).
REPLAY_BINDINGS: list[Binding] = [
    Binding("space", "replay('toggle')", "Play/pause", id="replay-pause"),
    Binding("plus,equals_sign", "replay('faster')", "Faster", key_display="+", id="replay-faster"),
    Binding("minus", "replay('slower')", "Slower", key_display="-", id="replay-slower"),
    Binding(
        "left", "replay('seek:-10')", "Back 10 s", key_display="←", show=False, id="replay-back"
    ),
    Binding(
        "right", "replay('seek:+10')", "Forward 10 s", key_display="→", show=False, id="replay-fwd"
    ),
    # Priority: a table in focus (the compact and table views, the detail's requests) would
    # take Home and End for its own scrolling, and a replay's seek would do nothing.
    Binding("home", "replay('home')", "To the start", show=False, id="replay-home", priority=True),
    Binding("end", "replay('end')", "To the end", show=False, id="replay-end", priority=True),
]


def app_binding(binding_id: str) -> Binding:
    """The app's binding with this id."""
    return next(b for b in (*GENERAL_BINDINGS, *REPLAY_BINDINGS) if b.id == binding_id)


# Textual shows enter as "⏎", which few people read as a key name next to "esc" and "space".
KEY_NAMES = {"enter": "enter"}


def key_label(binding: Binding, keymap: Mapping[str, str] | None = None) -> str:
    """The key as a person reads it: its display form, else each of its keys by Textual's
    display name ("esc / q / ?", not "escape,q,question_mark"); the user's keys where their
    ``keymap`` (config.keymap) gives the binding others."""
    mapped = (keymap or {}).get(binding.id or "")
    if mapped is None and binding.key_display:
        return binding.key_display
    keys = (k.strip() for k in (mapped or binding.key).split(","))
    return " / ".join(KEY_NAMES.get(k) or format_key(k) for k in keys)

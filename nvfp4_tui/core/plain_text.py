"""Model and server text made safe to show: no escape sequences, no control characters, no
invisible formatting.

A model's answer can contain anything, including ANSI colour codes, OSC 8 hyperlinks or a
terminal-title sequence. Shown raw they would restyle or take over the user's terminal, so every
text that came from a model or a server passes through ``plain_text`` before it reaches a widget,
and widgets show it as plain text (never as markup). Bidi overrides and isolates (U+202E shows
``exe.txt`` as ``txt.exe``) and other invisible format characters go too; the joiners that
scripts and emoji need (U+200C, U+200D) stay. Text from outside that may also hold a key goes
through ``core.outside_text``, which ends here.
"""

from __future__ import annotations

import hashlib
import re

# ESC-initiated sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), DCS/SOS/PM/APC
# (ESC P|X|^|_ ... ST), and two-byte escapes. The 8-bit C1 forms (CSI 0x9b, OSC 0x9d) as well.
_ESCAPES = re.compile(
    r"""
    (?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]             # CSI
    | (?:\x1b\]|\x9d).*?(?:\x07|\x1b\\|\x9c|$)   # OSC, ended by BEL or ST (or the text's end)
    | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f]).*?(?:\x1b\\|\x9c|$)  # DCS, SOS, PM, APC
    | \x1b[ -/]*[0-~]?                            # other escapes (nF, Fp, Fe, Fs), a lone ESC
    """,
    re.VERBOSE | re.DOTALL,
)
# C0 controls except tab and newline, DEL, the C1 range; lone surrogates (print fails on them);
# and invisible format characters: Arabic letter mark, zero-width space, LRM/RLM, the bidi
# embeddings, overrides and isolates, word joiner and invisible operators, BOM, interlinear
# annotation marks, tag characters.
_CONTROLS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200b\u200e\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_LINE_SEPARATORS = re.compile("[\u2028\u2029\x85]")


def plain_text(raw: str | None) -> str:
    """``raw`` without escape sequences, control characters or invisible formatting; ``\\r\\n``,
    ``\\r`` and the Unicode line separators become ``\\n``."""
    if not raw:
        return ""
    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    text = _ESCAPES.sub("", text)
    text = _LINE_SEPARATORS.sub("\n", text)
    return _CONTROLS.sub("", text)


def one_line(raw: str | None) -> str:
    """``plain_text`` on one line: newlines and tabs become spaces, runs of spaces collapse."""
    return " ".join(plain_text(raw).split())


_NOT_IN_AN_ID = re.compile(r"[^A-Za-z0-9_-]")


def widget_id(prefix: str, name: str) -> str:
    """A Textual widget id for ``name`` (an endpoint id: dots and more are allowed there).

    Characters an id cannot hold become ``_``, and a short digest keeps names that differ
    only in those characters apart (``qwen3.6`` and ``qwen3_6``).
    """
    safe = _NOT_IN_AN_ID.sub("_", name)
    if safe == name:
        return f"{prefix}-{name}"
    digest = hashlib.blake2s(name.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"{prefix}-{safe}-{digest}"

"""A profile being written by ``init``: endpoint drafts, and the file saved once it loads.

Every text in a draft came from outside (a server's model list, a compose file), so it is made
one safe line (``safe_text``) before it is kept, and written as an escaped TOML string; a model
id cannot end a string, open a table or hide a line behind a bidi control.
"""

from __future__ import annotations

import os
import re
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.core.plain_text import one_line
from nvfp4_tui.profile_init.model_class import ClassGuess

_MAX_TEXT = 200
_NOT_IN_AN_ID = re.compile(r"[^A-Za-z0-9_.-]+")
_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f"}


def is_count(text: str) -> bool:
    """Whether ``text`` is a plain decimal number a port or a GPU index can be: ``isdigit``
    alone takes "²" (which ``int`` refuses) and numbers of thousands of digits."""
    return text.isascii() and text.isdecimal() and len(text) <= 10


def safe_text(raw: object) -> str:
    """Outside text as one printable line: no escapes, controls, bidi or other format
    characters (``Cf``, which can reorder how a line reads), at most 200 characters."""
    text = "".join(c for c in one_line(str(raw)) if unicodedata.category(c) not in ("Cf", "Cs"))
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string; anything not printable is written as ``\\uXXXX``."""
    out: list[str] = []
    for char in text:
        if char in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[char])
        elif not char.isprintable() or unicodedata.category(char) == "Cf":
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def an_id(raw: str, fallback: str = "endpoint") -> str:
    """``raw`` made an endpoint id (letters, digits, ``_ . -``)."""
    return _NOT_IN_AN_ID.sub("_", raw).strip("_.-") or fallback


@dataclass(frozen=True, slots=True)
class EndpointDraft:
    """One ``[[endpoint]]`` table to write; every text already passed ``safe_text``."""

    id: str
    label: str
    url: str
    model: str
    gpu: int | str  # an index, a UUID, or "auto" (resolved at run time: NVML + port owner)
    notes: tuple[str, ...] = ()  # comment lines written above the table
    api_key_env: str | None = None
    model_note: str | None = None  # written beside ``model`` when the name is a guess
    wants_api_key: bool = False  # the server was started with a key (from any source)
    class_guess: ClassGuess | None = None  # from the model's names; written as a guess
    max_model_len: int | None = None  # the server's context, where it or its compose file says


def settle(drafts: Sequence[EndpointDraft], suffixes: Sequence[str]) -> list[EndpointDraft]:
    """The drafts made to load together and read apart: ids and labels that repeat get their
    suffix (e.g. the port: a fleet often serves one name everywhere); a GPU index already
    taken becomes "auto", since a profile gives a GPU one pane."""
    ids = Counter(d.id for d in drafts)
    labels = Counter(d.label for d in drafts)
    taken_ids: set[str] = set()
    gpus: dict[int, str] = {}
    settled: list[EndpointDraft] = []
    for draft, suffix in zip(drafts, suffixes, strict=True):
        candidate, n = draft.id if ids[draft.id] == 1 else f"{draft.id}-{suffix}", 2
        while candidate in taken_ids:
            candidate, n = f"{draft.id}-{suffix}-{n}", n + 1
        taken_ids.add(candidate)
        label = draft.label if labels[draft.label] == 1 else f"{draft.label} ({suffix})"
        draft = replace(draft, id=candidate, label=label)
        gpu = draft.gpu
        if isinstance(gpu, int):
            if gpu in gpus:
                note = f"shares GPU {gpu} with {gpus[gpu]}"
                draft = replace(draft, gpu="auto", notes=(*draft.notes, note))
            else:
                gpus[gpu] = candidate
        settled.append(draft)
    return settled


def check_out(out: Path, force: bool) -> None:
    """Refuse an ``out`` that exists (without ``force``) or cannot be created."""
    if out.exists() and not force:
        raise ConfigError([f"{out}: already exists; pass --force to overwrite it"])
    if not out.parent.is_dir():
        raise ConfigError([f"{out}: the directory {out.parent} does not exist"])


def write_profile(text: str, out: Path, force: bool) -> None:
    """Write ``text`` to ``out`` once it loads as a profile; never over a file without ``force``."""
    check_out(out, force)
    temporary: Path | None = None
    try:
        # A new file (O_EXCL) of a name no one could have prepared, never one already there.
        fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".init-tmp", dir=out.parent)
        temporary = Path(name)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            os.fchmod(file.fileno(), 0o644)  # a profile, not a secret: readable as usual
            file.write(text)
        # The written file must run unchanged; loading it here catches a draft that would not.
        load_profile(temporary)
        os.replace(temporary, out)
    except OSError as e:
        raise ConfigError([f"{out}: cannot write: {e.strerror or e}"]) from None
    finally:
        if temporary is not None:
            temporary.unlink(missing_ok=True)

"""A profile being written by ``init``: endpoint drafts, rendered as commented TOML and saved.

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
from datetime import UTC, datetime
from pathlib import Path

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.core.plain_text import one_line
from nvfp4_tui.profile_init.model_class import ClassGuess

# The seed's two load levels; a level above a server's max_num_seqs only queues in the server.
SEED_CONCURRENCY = (1, 4)
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


def _endpoint_lines(draft: EndpointDraft) -> list[str]:
    lines = [f"# {note}" for note in draft.notes]
    lines += [
        "[[endpoint]]",
        f"id = {toml_string(draft.id)}",
        f"label = {toml_string(draft.label)}",
        f"url = {toml_string(draft.url)}",
        f"model = {toml_string(draft.model)}"
        + (f"  # {draft.model_note}" if draft.model_note else ""),
    ]
    if isinstance(draft.gpu, int):
        lines.append(f"gpu = {draft.gpu}")
    elif draft.gpu == "auto":
        lines.append('gpu = "auto"  # the GPU where the process serving this port holds memory')
    else:
        lines.append(f"gpu = {toml_string(draft.gpu)}")
    if draft.api_key_env:
        lines.append(f"api_key_env = {toml_string(draft.api_key_env)}  # the key is read from it")
    elif draft.wants_api_key:
        lines += [
            "# The server wants an API key, written in the compose file itself: put it in an",
            "# environment variable, name it here and remove the '#'.",
            '# api_key_env = "VLLM_API_KEY"',
        ]
    return lines + _class_lines(draft.class_guess)


def _class_lines(guess: ClassGuess | None) -> list[str]:
    if guess is None:
        return [
            '# class = "moe"  # or "dense" (the default); active_params_b, experts: for figures'
        ]
    lines = [
        f"# A guess from the name {toml_string(guess.name)} ({guess.why}): check it.",
        f"class = {toml_string(guess.model_class)}",
    ]
    if guess.active_params_b is not None:
        lines.append(f"active_params_b = {guess.active_params_b}")
    if guess.experts is not None:
        lines.append(f"experts = {guess.experts}")
    return lines


def render_profile(
    name: str, origin: str, drafts: Sequence[EndpointDraft], max_concurrency: int | None = None
) -> str:
    """The profile's text. ``max_concurrency``, the smallest server-side cap known, trims the
    seed's levels so no phase measures a queue inside the server instead of the model."""
    suites = sorted(p.stem for p in BUILTIN_SUITES.glob("*.toml"))
    levels = [c for c in SEED_CONCURRENCY if max_concurrency is None or c <= max_concurrency]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# Written by `nvfp4-tui init` from {safe_text(origin)} on {stamp}.",
        "# Check each endpoint's label, gpu and class, then: nvfp4-tui run THIS_FILE",
        "[run]",
        f"name = {toml_string(name)}",
        "# The built-in suites; a suites/ folder beside this file adds or replaces them by name.",
        "suites = [" + ", ".join(toml_string(s) for s in suites) + "]",
        "concurrency = [" + ", ".join(str(c) for c in levels) + "]",
        "requests = 2  # per prompt per phase",
    ]
    for draft in drafts:
        lines += ["", *_endpoint_lines(draft)]
    return "\n".join(lines) + "\n"


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

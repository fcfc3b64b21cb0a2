"""A user's own keys: ``keymap.toml`` names, under ``[keys]``, a binding by its id (the Keys
screen lists each id beside its key) and the keys that should run it instead::

    [keys]
    leaderboard = "L"
    quit = "q,ctrl+q"

It is read from ``$NVFP4_TUI_KEYMAP`` when that is set (then it must exist), else from
``$XDG_CONFIG_HOME/nvfp4-tui/keymap.toml`` (``~/.config/...``) when there is one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from pathlib import Path

from nvfp4_tui.config.tomlcheck import Problems, Table, load_toml

KEYMAP_ENV = "NVFP4_TUI_KEYMAP"
# One of Textual's key names: "l", "L", "ctrl+q", "f5", "question_mark".
_KEY = re.compile(r"[A-Za-z0-9_+]+")
_EXPECTED = 'key names joined by commas, such as "L" or "q,ctrl+q"'


def keymap_path(environ: Mapping[str, str] = os.environ) -> tuple[Path, bool]:
    """Where the keymap is read from, and whether the user named it (then it must exist)."""
    named = environ.get(KEYMAP_ENV)
    if named:
        return Path(named), True
    config = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "nvfp4-tui" / "keymap.toml", False


def load_keymap(path: Path, binding_ids: Collection[str], *, required: bool) -> dict[str, str]:
    """The keys by binding id; {} when there is no file and none was named. ConfigError, one
    line per problem naming the file and key, for an id no binding has or keys no key names."""
    if not required and not path.exists():
        return {}
    problems = Problems(path)
    root = Table(load_toml(path), "", problems)
    keys = root.table("keys", required=True)
    keymap: dict[str, str] = {}
    if keys is not None:
        for binding_id in sorted(binding_ids):
            value = keys.get(binding_id, _key_names, _EXPECTED, None)
            if value is not None:
                keymap[binding_id] = value
        keys.finish()
    root.finish()
    problems.raise_if_any()
    return keymap


def _key_names(raw: object) -> str | None:
    if not isinstance(raw, str):
        return None
    keys = [key.strip() for key in raw.split(",")]
    return ",".join(keys) if all(_KEY.fullmatch(key) for key in keys) else None

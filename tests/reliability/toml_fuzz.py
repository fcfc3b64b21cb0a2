"""Random TOML documents for property tests of the profile and suite readers.

``discover_keys`` finds every key a reader knows, at every depth, by asking the reader itself: a
table given an unknown key answers ``unknown key; known keys: ...``, and a key given a table with
an unknown key says whether it is a table, and which keys that table knows. So keys that other
modules add later are fuzzed too, without a list to keep up to date here.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable
from datetime import date, datetime, time
from typing import Any

from hypothesis import strategies as st

from nvfp4_tui.config.tomlcheck import ConfigError

Path_ = tuple[str | int, ...]  # keys and array indices from the document's root
Loader = Callable[[dict[str, Any]], object]

PROBE_KEY = "zzzqqq_not_a_key"
DELETE = object()  # a mutation that removes the key
_KNOWN = re.compile(rf"{PROBE_KEY}: unknown key; known keys: (.*)$")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
MAX_DEPTH = 4


# ---- TOML text -------------------------------------------------------------------------------


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _string(key)


def _string(text: str) -> str:
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_value(value: Any) -> str:
    """``value`` as one line of TOML (tables inline)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {value!r}")


def toml_document(doc: dict[str, Any]) -> str:
    return "".join(f"{_key(k)} = {toml_value(v)}\n" for k, v in doc.items())


# ---- random values ---------------------------------------------------------------------------

INT64 = 2**63 - 1
NAMED_STRINGS = st.sampled_from(
    ["", " ", "auto", "GPU-0", "moe", "dense", "sim", "none", "nvml", "dcgm:http://127.0.0.1:9400",
     "http://127.0.0.1:1", "https://[::1]:99999", "text", "tool_call", "poisson", "constant",
     "../../etc/passwd", "\x1b[31mred\x1b[0m", "[bold]markup[/]", "x" * 500]
)  # fmt: skip
SCALARS = st.one_of(
    st.text(max_size=20),
    NAMED_STRINGS,
    st.integers(min_value=-INT64 - 1, max_value=INT64),
    st.sampled_from([0, 1, -1, 2, 7, 10**9, 2**53 + 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.datetimes(),
    st.dates(),
    st.times(),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


# ---- documents -------------------------------------------------------------------------------


def get_in(doc: Any, path: Path_) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def set_in(doc: dict[str, Any], path: Path_, value: Any) -> bool:
    """Set (or with DELETE, remove) ``path`` in ``doc``; False if an earlier step is gone."""
    parent: Any = doc
    for step in path[:-1]:
        try:
            parent = parent[step]
        except (KeyError, IndexError, TypeError):
            return False
    last = path[-1]
    if isinstance(parent, dict) and isinstance(last, str):
        if value is DELETE:
            parent.pop(last, None)
        else:
            parent[last] = value
        return True
    return False


def mutated(doc: dict[str, Any], mutations: list[tuple[Path_, Any]]) -> dict[str, Any]:
    result = copy.deepcopy(doc)
    for path, value in mutations:
        set_in(result, path, value)
    return result


def _tables(doc: dict[str, Any]) -> list[Path_]:
    """Every table in ``doc``: the root, sub-tables and each element of an array of tables."""
    found: list[Path_] = []

    def walk(value: Any, path: Path_) -> None:
        if isinstance(value, dict):
            found.append(path)
            for key, inner in value.items():
                walk(inner, (*path, key))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for index, inner in enumerate(value):
                walk(inner, (*path, index))

    walk(doc, ())
    return found


def _known_keys(load: Loader, doc: dict[str, Any], table: Path_) -> list[str] | None:
    probe = copy.deepcopy(doc)
    if not isinstance(get_in(probe, table), dict):
        return None
    get_in(probe, table)[PROBE_KEY] = 1
    try:
        load(probe)
    except ConfigError as error:
        for line in error.problems:
            match = _KNOWN.search(line)
            if match and line.split(": ")[1].startswith(_dotted(table)):
                return match.group(1).split(", ")
    return None


def _dotted(table: Path_) -> str:
    text = ""
    for step in table:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return f"{text}.{PROBE_KEY}" if text else PROBE_KEY


def discover_keys(load: Loader, doc: dict[str, Any]) -> list[Path_]:
    """Every key path the reader knows in ``doc``'s tables, sub-tables found by probing."""
    keys: list[Path_] = []
    pending = [(doc, table) for table in _tables(doc)]
    seen: set[Path_] = set()
    while pending:
        base, table = pending.pop()
        if table in seen or len(table) > 2 * MAX_DEPTH:
            continue
        seen.add(table)
        known = _known_keys(load, base, table) or list(get_in(base, table))
        for key in known:
            path = (*table, key)
            keys.append(path)
            current = get_in(base, table).get(key)
            if isinstance(current, dict | list):
                continue  # a table already in the document: walked by _tables
            probe = copy.deepcopy(base)
            set_in(probe, path, {})
            if _known_keys(load, probe, path) is not None:
                pending.append((probe, path))
    return sorted(set(keys), key=str)


def mutations(paths: list[Path_]) -> st.SearchStrategy[list[tuple[Path_, Any]]]:
    """1 to 4 changes: a known key set to a random value (or removed), or a random key added."""
    known = st.tuples(st.sampled_from(paths), VALUES | st.just(DELETE))
    tables = sorted({path[:-1] for path in paths}, key=str)
    unknown = st.tuples(
        st.builds(lambda t, k: (*t, k), st.sampled_from(tables), st.text(min_size=1, max_size=12)),
        VALUES,
    )
    return st.lists(known | unknown, min_size=1, max_size=4)


def shown(mutation: list[tuple[Path_, Any]]) -> str:
    return json.dumps([[list(p), repr(v)] for p, v in mutation], ensure_ascii=False)

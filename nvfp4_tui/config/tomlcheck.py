"""Checked reads of TOML tables: one-line errors that name the file, the key and the expectation.

Profiles and prompt suites are both read through ``Table``, so a bad value in either gets the same
kind of message, e.g. ``profiles/x.toml: endpoint[2].gpu: expected an integer >= 0, got "two"``.
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class ConfigError(Exception):
    """One or more one-line problems with a configuration file."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


# Characters that end a line (or drive a terminal) for some reader: C0 and C1 controls, DEL,
# and the Unicode line and paragraph separators.
_LINE_BREAKING = re.compile("[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029]")


def _escaped(text: str) -> str:
    return _LINE_BREAKING.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def shortened(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    text = _escaped(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def show(value: Any) -> str:
    """A value as the user wrote it in TOML, shortened, on one line whatever it holds."""
    # JSON leaves C1 controls (NEL, CSI) and Unicode line separators raw: escape them too.
    text = _escaped(json.dumps(value, ensure_ascii=False, default=str))
    return text if len(text) <= 60 else text[:57] + "..."


def load_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError([f"{path}: file not found"]) from None
    except IsADirectoryError:
        raise ConfigError([f"{path}: expected a TOML file, got a directory"]) from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError([f"{path}: not valid TOML: {e}"]) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError([f"{path}: cannot read: {e}"]) from None


class Problems:
    """Collects problems for one file; raises them together."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: list[str] = []

    def add(self, key: str, message: str) -> None:
        line = f"{self.path}: {key}: {message}" if key else f"{self.path}: {message}"
        # A message may quote the file (a key, a schema path): one line, whatever it holds.
        self.lines.append(_escaped(line))

    def raise_if_any(self) -> None:
        if self.lines:
            raise ConfigError(self.lines)


_MISSING = object()
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class Table:
    """A TOML table being read key by key; unread keys are reported as unknown by ``finish``."""

    def __init__(self, data: Any, key: str, problems: Problems) -> None:
        self.key = key
        self.problems = problems
        if not isinstance(data, dict):
            problems.add(key, f"expected a table, got {show(data)}")
            data = {}
        self.data: dict[str, Any] = data
        self.read: set[str] = set()

    def _name(self, key: str) -> str:
        # A quoted TOML key can hold anything, a newline included: show it quoted, on one line.
        shown = key if _BARE_KEY.fullmatch(key) else show(key)
        return f"{self.key}.{shown}" if self.key else shown

    def get(
        self,
        key: str,
        check: Callable[[Any], T | None],
        expected: str,
        default: Any = _MISSING,
    ) -> Any:
        """The value at ``key`` if ``check`` accepts it (returns non-None), else the default."""
        self.read.add(key)
        if key not in self.data:
            if default is _MISSING:
                self.problems.add(self._name(key), f"missing; expected {expected}")
                return None
            return default
        raw = self.data[key]
        value = check(raw)
        if value is None:
            self.problems.add(self._name(key), f"expected {expected}, got {show(raw)}")
            return None if default is _MISSING else default
        return value

    def table(self, key: str, required: bool = False) -> Table | None:
        self.read.add(key)
        if key not in self.data:
            if required:
                self.problems.add(self._name(key), "missing; expected a table")
            return None
        return Table(self.data[key], self._name(key), self.problems)

    def tables(self, key: str) -> list[Table]:
        """An array of tables (``[[key]]``), each named ``key[i]``."""
        self.read.add(key)
        raw = self.data.get(key, [])
        if not isinstance(raw, list):
            self.problems.add(self._name(key), f"expected an array of tables, got {show(raw)}")
            return []
        return [Table(item, f"{self._name(key)}[{i}]", self.problems) for i, item in enumerate(raw)]

    def finish(self, allowed_extra: Iterable[str] = ()) -> None:
        known = self.read | set(allowed_extra)
        for key in self.data:
            if key in known:
                continue
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = (
                f"; did you mean {close[0]!r}?"
                if close
                else f"; known keys: {', '.join(sorted(known))}"
            )
            self.problems.add(self._name(key), f"unknown key{hint}")


# Checkers: each returns the accepted value or None.


def a_string(raw: Any) -> str | None:
    return raw if isinstance(raw, str) and raw.strip() else None


def an_int(minimum: int | None = None, maximum: int | None = None) -> Callable[[Any], int | None]:
    def check(raw: Any) -> int | None:
        if isinstance(raw, bool) or not isinstance(raw, int):
            return None
        if minimum is not None and raw < minimum:
            return None
        return raw if maximum is None or raw <= maximum else None

    return check


def a_number(
    minimum: float | None = None, above: float | None = None, maximum: float | None = None
):
    def check(raw: Any) -> float | None:
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            return None
        value = float(raw)
        if value != value or value in (float("inf"), float("-inf")):
            return None
        if minimum is not None and value < minimum:
            return None
        if above is not None and value <= above:
            return None
        if maximum is not None and value > maximum:
            return None
        return value

    return check


def a_bool(raw: Any) -> bool | None:
    return raw if isinstance(raw, bool) else None


def spelt_out(choices: tuple[str, ...]) -> str:
    """``'"a", "b" or "c"'``: the choices as an error message names them."""
    quoted = [f'"{choice}"' for choice in choices]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def one_of(*choices: str) -> Callable[[Any], str | None]:
    def check(raw: Any) -> str | None:
        return raw if isinstance(raw, str) and raw in choices else None

    return check


def a_list_of(item: Callable[[Any], T | None], non_empty: bool = True):
    def check(raw: Any) -> tuple[T, ...] | None:
        if not isinstance(raw, list) or (non_empty and not raw):
            return None
        items = [item(x) for x in raw]
        if any(x is None for x in items):
            return None
        return tuple(x for x in items if x is not None)

    return check

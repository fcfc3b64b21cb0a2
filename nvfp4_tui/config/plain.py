"""A resolved plan's records as JSON-ready values and back, by their type annotations.

The worker is another process and runs the plan the launcher resolved, not a plan of its own:
the profile and the suites travel whole, each record by its dataclass fields, and come back as
the same frozen records. ``from_plain`` reads only what ``to_plain`` wrote, so a value that
does not fit its annotation is a bug, raised as TypeError.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar

T = TypeVar("T")


def to_plain(value: Any) -> Any:
    """``value`` as JSON would hold it: records as objects of their fields, tuples as lists,
    paths as strings."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_plain(item) for key, item in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


def from_plain(kind: type[T], raw: Any) -> T:
    """The record of type ``kind`` that ``to_plain`` made ``raw`` of."""
    return _typed(kind, raw)


@cache
def _hints(kind: type) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def _typed(annotation: Any, raw: Any) -> Any:
    if annotation is Any:
        return raw
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        if not isinstance(raw, dict):
            raise TypeError(f"{annotation.__name__}: expected an object, got {raw!r:.60}")
        hints = _hints(annotation)
        return annotation(
            **{
                f.name: _typed(hints[f.name], raw[f.name])
                for f in dataclasses.fields(annotation)
                if f.init and f.name in raw
            }
        )
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (types.UnionType, typing.Union):
        return _union(args, raw)
    if origin is Literal:
        if raw not in args:
            raise TypeError(f"expected one of {args}, got {raw!r:.60}")
        return raw
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_typed(args[0], item) for item in raw)
        return tuple(_typed(arg, item) for arg, item in zip(args, raw, strict=True))
    if origin is dict:
        key_type, value_type = args
        return {_typed(key_type, key): _typed(value_type, item) for key, item in raw.items()}
    if annotation is Path:
        return Path(raw)
    if annotation is float and type(raw) is int:
        return float(raw)
    if annotation in (str, int, float, bool) and type(raw) is annotation:
        return raw
    raise TypeError(f"expected {annotation}, got {raw!r:.60}")


def _union(members: tuple[Any, ...], raw: Any) -> Any:
    if raw is None and type(None) in members:
        return None
    present = [m for m in members if m is not type(None)]
    for member in present:
        try:
            return _typed(member, raw)
        except (TypeError, KeyError, ValueError):
            continue
    raise TypeError(f"expected one of {present}, got {raw!r:.60}")

"""Reading files that come from outside (snapshots, legacy JSON) without hanging or running out of
memory: regular files only, with a size cap, and JSON whose nesting is bounded.

A path may name a FIFO (opening it for reading waits for a writer, forever), a device
(``/dev/zero`` never ends), a directory, or a symlink to any of these. Each file is opened
non-blocking and its type checked on the opened descriptor (``fstat``), so a file swapped
between the check and the read is still the one checked. Every failure is an ``OSError`` whose
text is one line without the path; callers name the file.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

# manifest.json and other JSON beside a snapshot: a real manifest is a few KiB.
JSON_MAX_BYTES = 4 * 1024 * 1024
# Deeper than any manifest or event nests; far below where Python's recursion gives out.
JSON_MAX_DEPTH = 64

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class UnsafeFile(OSError):
    """The path is not a regular file, or it is larger than its cap."""


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def _size_text(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MiB" if size >= 1024 * 1024 else f"{size} bytes"


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading if it is a regular file (after symlinks), else UnsafeFile.

    Raises FileNotFoundError as ``open`` does, and OSError for the rest.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafeFile(f"{_kind(mode)}, not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``; UnsafeFile if it holds more than ``max_bytes``."""
    with open_regular(path) as file:
        size = os.fstat(file.fileno()).st_size
        data = b"" if size > max_bytes else file.read(max_bytes + 1)
    if size > max_bytes or len(data) > max_bytes:
        shown = _size_text(max(size, len(data)))
        raise UnsafeFile(f"too large ({shown}; at most {_size_text(max_bytes)} is read)")
    return data


def _too_deep(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in item)
    return False


def parse_json(text: str | bytes, max_depth: int = JSON_MAX_DEPTH) -> Any:
    """``text`` as JSON; ValueError (one line) if it is not JSON or nests deeper than
    ``max_depth`` (Python's parser itself fails on deep nesting with RecursionError)."""
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {max_depth} levels") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise ValueError(f"not readable JSON ({' '.join(str(exc).split())[:120]})") from None
    if _too_deep(body, max_depth):
        raise ValueError(f"JSON nested deeper than {max_depth} levels")
    return body


def read_json_file(path: Path, max_bytes: int = JSON_MAX_BYTES) -> Any:
    """The JSON in the regular file ``path``, read through ``read_bounded`` and ``parse_json``.

    Raises FileNotFoundError, OSError (UnsafeFile among them) when the file cannot be read,
    UnicodeDecodeError when it is not UTF-8, and ValueError when it is not bounded JSON.
    """
    return parse_json(read_bounded(path, max_bytes).decode("utf-8"))

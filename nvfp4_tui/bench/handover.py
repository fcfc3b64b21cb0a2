"""What a process hands a child it starts (a worker, a shard, a detached demo): its spec as
JSON in a private file, named on the child's command line as ``@PATH``; the child reads the
file and removes it.

A command line cannot carry it: one argument holds at most 128 KiB on Linux, and a plan travels
whole, its suites with it (HumanEval's is 370 KB of JSON). A spec given as JSON itself, not
``@PATH``, is read as it is.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FILE_MARK = "@"


def hand_over(spec: Mapping[str, Any]) -> str:
    """The argument that hands ``spec`` to a child: ``@PATH`` of a file only this user reads."""
    fd, name = tempfile.mkstemp(prefix="nvfp4-tui-spec-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(spec, f, ensure_ascii=False)
    return FILE_MARK + name


def taken(argument: str) -> Any:
    """The spec that ``argument`` hands over; its file is removed once read."""
    if not argument.startswith(FILE_MARK):
        return json.loads(argument)
    path = Path(argument.removeprefix(FILE_MARK))
    try:
        text = path.read_text(encoding="utf-8")
    finally:
        path.unlink(missing_ok=True)
    return json.loads(text)


def discard(argument: str) -> None:
    """Remove the file of a hand-over whose child is gone (taken or not: one that died before
    reading it would otherwise leave it behind)."""
    if argument.startswith(FILE_MARK):
        Path(argument.removeprefix(FILE_MARK)).unlink(missing_ok=True)


@contextmanager
def discarded_on_failure(argument: str) -> Iterator[str]:
    """``argument``, its file removed if the block raises: the child it was meant for did not
    start, or not far enough to take it."""
    try:
        yield argument
    except BaseException:
        discard(argument)
        raise

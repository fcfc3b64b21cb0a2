"""Trace replay: requests sent at the times of a JSONL trace, with prompts that share their
prefixes where the trace's requests do, so a server's prefix cache sees what production saw.

Two formats, told apart line by line:

- Mooncake's (the FAST '25 traces): ``{"timestamp": 27482, "input_length": 6955,
  "output_length": 52, "hash_ids": [46, 47, 48]}`` — ``timestamp`` in milliseconds, each hash id
  a block of ``block_tokens`` prompt tokens (512 in Mooncake's traces): requests that share
  leading ids share that much prefix.
- Ours: ``{"at_s": 0.25, "input_tokens": 300, "output_tokens": 40}``, with ``hash_ids`` if
  prefixes are shared.

Send times are relative to the trace's first line, divided by ``speedup``. Each prompt is
built when it is sent (``TraceBlocks``): a trace of many long requests is held as its lengths
and ids, never as text. A line that cannot be used is an error naming the file, the line and
the field: a trace is a schedule, and a gap in it would misplace every later send.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nvfp4_tui.config.datasets import MAX_ROWS, DatasetError, jsonl_lines
from nvfp4_tui.config.synthetic import MAX_LENGTH, Asked, TraceBlocks
from nvfp4_tui.config.tomlcheck import ConfigError, show

TRACE_SUITE = "trace"  # the suite ``--trace`` and ``[run] trace`` make
TRACE_ARRIVALS = "trace"  # its phase's arrivals: the trace's own send times
MOONCAKE_BLOCK_TOKENS = 512
MAX_BLOCK_TOKENS = 1 << 16
MAX_SPEEDUP = 1e6
MAX_SPAN_S = 7 * 86400.0  # a replay longer than a week (sped up) is a unit mistake
_MAX_PROBLEMS = 10  # lines named before "and N more"
# Each format's fields: send time (and its unit in seconds), input and output tokens.
_FORMATS = (
    ("timestamp", 1e-3, "input_length", "output_length"),
    ("at_s", 1.0, "input_tokens", "output_tokens"),
)


@dataclass(frozen=True)
class TraceSpec:
    """Where the trace is and how it is replayed."""

    path: Path
    speedup: float = 1.0
    block_tokens: int = MOONCAKE_BLOCK_TOKENS
    ignore_eos: bool = True  # ask for each output length exactly, as synthetic prompts do
    # Where it was named, for its errors: the option, or the profile's key.
    origin: str = field(default="--trace", compare=False)


@dataclass(frozen=True)
class TraceLine:
    """One request of the trace: when it is sent (seconds from the first, sped up) and what."""

    at_s: float
    asked: Asked
    blocks: TraceBlocks


class _LineError(ValueError):
    pass


def _count(body: dict[str, Any], field: str, low: int) -> int:
    value = body.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_LENGTH:
        raise _LineError(
            f"field {field!r}: expected an integer from {low} to {MAX_LENGTH}, got {show(value)}"
        )
    return value


def _hash_ids(body: dict[str, Any]) -> tuple[int, ...]:
    raw = body.get("hash_ids", [])
    if not isinstance(raw, list) or not all(
        isinstance(h, int) and not isinstance(h, bool) and h >= 0 for h in raw
    ):
        raise _LineError(f"field 'hash_ids': expected a list of integers >= 0, got {show(raw)}")
    return tuple(raw)


def _line(raw: bytes | None, number: int, spec: TraceSpec) -> tuple[float, Asked, TraceBlocks]:
    if raw is None:
        raise _LineError("longer than 1 MiB")
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise _LineError(f"not JSON: {getattr(e, 'msg', e)}") from None
    if not isinstance(body, dict):
        raise _LineError(f"expected a JSON object, got {show(body)}")
    for time_field, unit_s, input_field, output_field in _FORMATS:
        if time_field in body:
            at = body[time_field]
            if isinstance(at, bool) or not isinstance(at, int | float) or not 0 <= at < 1e15:
                raise _LineError(f"field {time_field!r}: expected a number >= 0, got {show(at)}")
            asked = Asked(_count(body, input_field, 1), _count(body, output_field, 1))
            ids = _hash_ids(body)
            return at * unit_s, asked, TraceBlocks(ids, spec.block_tokens, asked.tokens_in, number)
    raise _LineError("expected a 'timestamp' (Mooncake's, in ms) or an 'at_s' field")


def read_trace(spec: TraceSpec, where: str) -> list[TraceLine]:
    """The trace's requests in send order; ConfigError names ``where``, the file and the lines
    that cannot be used (or the file that cannot be read)."""
    problems: list[str] = []
    read: list[tuple[float, Asked, TraceBlocks]] = []
    try:
        for number, raw in jsonl_lines(spec.path):
            if not (raw is None or isinstance(raw, bytes)) or len(read) >= MAX_ROWS:
                problems.append(f"{spec.path}: line {number}: past {MAX_ROWS} requests or 256 MiB")
                break
            if raw is not None and not raw.strip():
                continue
            try:
                read.append(_line(raw, number, spec))
            except _LineError as e:
                problems.append(f"{spec.path}: line {number}: {e}")
    except DatasetError as e:
        raise ConfigError([f"{where}: {e}"]) from None
    if not read and not problems:
        problems.append(f"{spec.path}: no requests")
    if problems:
        more = len(problems) - _MAX_PROBLEMS
        shown = problems[:_MAX_PROBLEMS] + ([f"{spec.path}: and {more} more"] if more > 0 else [])
        raise ConfigError([f"{where}: {line}" for line in shown])
    read.sort(key=lambda line: line[0])  # stable: lines sent at one time keep the file's order
    first = read[0][0]
    span_s = (read[-1][0] - first) / spec.speedup
    if span_s > MAX_SPAN_S:
        raise ConfigError(
            [
                f"{where}: {spec.path}: line {read[-1][2].line}: sent {span_s / 86400:.0f} days "
                f"after the first line (speed-up {spec.speedup:g}); expected a replay of at most "
                f"{MAX_SPAN_S / 86400:.0f} days: a timestamp in seconds, not milliseconds?"
            ]
        )
    return [TraceLine((at - first) / spec.speedup, asked, blocks) for at, asked, blocks in read]

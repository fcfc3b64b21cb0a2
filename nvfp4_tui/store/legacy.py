"""Importing the seed's benchmark JSON (DESIGN.md "Legacy import") into a snapshot.

The legacy file holds no per-request times, so the importer lays a timeline out itself: the
run starts at ``metadata.date`` (read as UTC), each model's phases (test x concurrency, in file
order) follow one another, and a phase's requests are all sent when it starts, as the seed's
script did, so the phase lasts as long as its slowest request. Endpoint ``i`` of
``metadata.models`` is taken to sit on GPU ``i`` (the script served model ``i`` from port
8016 + i on GPU i), and ``metadata.vram_mb`` becomes one GPU sample per GPU at the start
("before") and one at the end ("after").

The script's "concurrency N" was no closed loop: it launched every prompt x N of a phase at
once, so its "concurrency 1" ran 2 requests at a time on a two-prompt test. The imported rows keep
the script's N (the key of its summary table, which the report reproduces), and the manifest
records under ``legacy.in_flight`` how many requests each level really had in flight, for
``compare`` and readers to label the level honestly.

A row with 0 output tokens and no error is the script's silent HTTP failure (DESIGN.md): it is
written as ``status="error"``, ``error_kind="suspect"`` so reports count it apart and never
average its zero score. Bad input raises LegacyError, one line naming the file and the key.

The script kept 500 characters of each answer, so a file far larger than its runs made, or a
string far longer than it wrote, is refused with the key that holds it: memory stays bounded
(about twice the file) whatever the file holds.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from nvfp4_tui.core.events import (
    SUSPECT_ERROR_KIND,
    EndpointInfo,
    ErrorKind,
    Event,
    GpuSample,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RequestStatus,
    RunFinished,
    RunStarted,
)
from nvfp4_tui.store.manifest import error_text, write_manifest
from nvfp4_tui.store.outside_files import parse_json, read_bounded
from nvfp4_tui.store.writer import SnapshotWriter

SUSPECT_MESSAGE = (
    "suspect: 0 output tokens and no error recorded (the legacy script's silent failure)"
)
GPU_SOURCE = "legacy"
FILE_MAX_BYTES = 256 * 1024 * 1024
TEXT_MAX_CHARS = 100_000
_HTTP_STATUS = re.compile(r"\b([45])\d\d\b")
_LINE_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")

T = TypeVar("T")


class LegacyError(Exception):
    """The legacy file cannot be imported; the message is one line naming the file and key."""

    def __init__(self, message: str) -> None:
        # Keys and values come from the file: a newline or an escape in one stays escaped.
        super().__init__(_LINE_BREAKING.sub(lambda m: f"\\u{ord(m.group()):04x}", message))


@dataclass(frozen=True)
class LegacyResult:
    """One validated row of ``results``."""

    model: str
    test: str
    prompt_idx: int
    concurrency: int
    tokens_in: int
    tokens_out: int
    latency_ms: float
    tok_per_sec: float
    content: str
    error: str
    quality_score: float
    quality_notes: str

    @property
    def suspect(self) -> bool:
        return self.tokens_out == 0 and not self.error


@dataclass(frozen=True)
class LegacyModel:
    key: str
    name: str
    url: str
    served_name: str
    desc: str


@dataclass(frozen=True)
class LegacyRun:
    """The validated content of a legacy file."""

    date: datetime
    gpu_name: str | None
    models: tuple[LegacyModel, ...]
    vram_before_mib: dict[int, float]
    vram_after_mib: dict[int, float]
    results: tuple[LegacyResult, ...]
    metadata: dict[str, Any]


# ---- checked reads -------------------------------------------------------------------------


class _Reader:
    """Typed reads of JSON values, each failure a LegacyError naming the file and the key."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, expected: str, value: Any) -> LegacyError:
        if isinstance(value, str) and len(value) > 60:
            value = value[:60]  # a huge string is not copied whole to be cut
        shown = json.dumps(value, ensure_ascii=False)
        if len(shown) > 60:
            shown = shown[:59] + "…"
        return LegacyError(f"{self.source}: {where}: expected {expected}, got {shown}")

    def typed(
        self,
        body: dict[str, Any],
        key: str,
        where: str,
        check: Callable[[Any], T | None],
        what: str,
    ) -> T:
        path = f"{where}.{key}" if where else key
        if key not in body:
            raise LegacyError(f"{self.source}: {path}: missing (expected {what})")
        value = check(body[key])
        if value is None:
            raise self.fail(path, what, body[key])
        return value


def _object(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _list(value: Any) -> list[Any] | None:
    return value if isinstance(value, list) else None


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _text(value: Any) -> str | None:
    # The script wrote "" for "no error" and "no content"; null reads the same.
    if value is None:
        return ""
    return value if isinstance(value, str) else None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _level(value: Any) -> int | None:
    count = _count(value)
    return count if count else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def _date(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    # The script wrote local time without a zone; UTC is the honest guess without one.
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _vram(reader: _Reader, metadata: dict[str, Any], moment: str) -> dict[int, float]:
    if metadata.get("vram_mb") is None:
        return {}
    table = reader.typed(metadata, "vram_mb", "metadata", _object, "an object")
    if moment not in table:
        return {}
    per_gpu = reader.typed(table, moment, "metadata.vram_mb", _object, "an object of GPU: MB")
    readings: dict[int, float] = {}
    for gpu in per_gpu:
        if not gpu.isdigit():
            raise reader.fail(f"metadata.vram_mb.{moment}", "GPU indices as keys", gpu)
        readings[int(gpu)] = reader.typed(
            per_gpu, gpu, f"metadata.vram_mb.{moment}", _number, "a number of MB >= 0"
        )
    return readings


def _check_sizes(body: Any, source: str) -> None:
    """LegacyError naming the first string (or key) longer than TEXT_MAX_CHARS."""
    pending: list[tuple[str, Any]] = [("top level", body)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, str):
            if len(value) > TEXT_MAX_CHARS:
                raise LegacyError(
                    f"{source}: {where}: a string of {len(value):,} characters; the legacy "
                    f"script wrote at most a few hundred (limit {TEXT_MAX_CHARS:,})"
                )
        elif isinstance(value, dict):
            for key, inner in value.items():
                if len(key) > TEXT_MAX_CHARS:
                    raise LegacyError(f"{source}: {where}: a key of {len(key):,} characters")
                pending.append((key if where == "top level" else f"{where}.{key}", inner))
        elif isinstance(value, list):
            pending.extend((f"{where}[{i}]", inner) for i, inner in enumerate(value))


def parse_legacy(body: Any, source: str) -> LegacyRun:
    """Validate a decoded legacy file; ``source`` names it in error messages."""
    _check_sizes(body, source)
    reader = _Reader(source)
    if not isinstance(body, dict):
        raise reader.fail("top level", "an object with metadata and results", type(body).__name__)
    metadata = reader.typed(body, "metadata", "", _object, "an object")
    date = reader.typed(metadata, "date", "metadata", _date, 'a date such as "2026-04-16 21:07"')
    gpu_name = metadata.get("gpu") if isinstance(metadata.get("gpu"), str) else None
    models_table = reader.typed(metadata, "models", "metadata", _object, "an object of models")
    models = []
    for key, value in models_table.items():
        where = f"metadata.models.{key}"
        entry = _object(value)
        if entry is None:
            raise reader.fail(where, "an object", value)
        models.append(
            LegacyModel(
                key=key,
                name=reader.typed(entry, "name", where, _string, "a string"),
                url=reader.typed(entry, "url", where, _string, "a string"),
                served_name=reader.typed(entry, "served_name", where, _string, "a string"),
                desc=_text(entry.get("desc")) or "",
            )
        )
    if not models:
        raise reader.fail("metadata.models", "at least one model", models_table)
    known = {m.key for m in models}
    raw_results = reader.typed(body, "results", "", _list, "a list of result rows")
    results = tuple(
        _result(reader, row, f"results[{i}]", known) for i, row in enumerate(raw_results)
    )
    return LegacyRun(
        date=date,
        gpu_name=gpu_name,
        models=tuple(models),
        vram_before_mib=_vram(reader, metadata, "before"),
        vram_after_mib=_vram(reader, metadata, "after"),
        results=results,
        metadata=metadata,
    )


def _result(reader: _Reader, row: Any, where: str, known: set[str]) -> LegacyResult:
    body = _object(row)
    if body is None:
        raise reader.fail(where, "an object", row)
    model = reader.typed(body, "model", where, _string, "a string")
    if model not in known:
        raise reader.fail(f"{where}.model", f"one of metadata.models {sorted(known)}", model)
    return LegacyResult(
        model=model,
        test=reader.typed(body, "test", where, _string, "a string"),
        prompt_idx=reader.typed(body, "prompt_idx", where, _count, "an integer"),
        concurrency=reader.typed(body, "concurrency", where, _level, "an integer >= 1"),
        tokens_in=reader.typed(body, "tokens_in", where, _count, "an integer"),
        tokens_out=reader.typed(body, "tokens_out", where, _count, "an integer"),
        latency_ms=reader.typed(body, "latency_ms", where, _number, "a number >= 0"),
        tok_per_sec=reader.typed(body, "tok_per_sec", where, _number, "a number >= 0"),
        content=reader.typed(body, "content", where, _text, "a string"),
        error=reader.typed(body, "error", where, _text, "a string"),
        quality_score=reader.typed(body, "quality_score", where, _number, "a number >= 0"),
        quality_notes=reader.typed(body, "quality_notes", where, _text, "a string"),
    )


def read_legacy(path: Path) -> LegacyRun:
    """Read and validate a legacy file; LegacyError (one line) if it cannot be imported."""
    source = str(path)
    try:
        text = read_bounded(path, FILE_MAX_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LegacyError(f"{source}: cannot read ({error_text(exc)})") from None
    try:
        body = parse_json(text)
    except ValueError as exc:
        raise LegacyError(f"{source}: {exc}; expected the seed script's benchmark JSON") from None
    return parse_legacy(body, source)


# ---- events ----------------------------------------------------------------------------------


def _model_class(model: LegacyModel) -> str:
    words = f"{model.key} {model.name}".lower()
    return "moe" if "moe" in words else "dense"


def _error_kind(message: str) -> ErrorKind:
    """A best guess at the kind of a legacy error message."""
    status = _HTTP_STATUS.search(message)
    if status:
        return "http_4xx" if status.group(1) == "4" else "http_5xx"
    lowered = message.lower()
    if "timeout" in lowered or "timed out" in lowered:
        return "timeout"
    if "reset" in lowered:
        return "reset"
    if "connect" in lowered or "refused" in lowered:
        return "connect"
    return "protocol"


def _request(result: LegacyResult, t: float, phase_index: int, request_index: int) -> Event:
    e2e_s = result.latency_ms / 1000
    status: RequestStatus
    kind: str | None
    if result.error:
        status, kind, message = "error", _error_kind(result.error), result.error
    elif result.suspect:
        status, kind, message = "error", SUSPECT_ERROR_KIND, SUSPECT_MESSAGE
    else:
        status, kind, message = "ok", None, None
    return RequestFinished(
        t=t,
        endpoint_id=result.model,
        suite=result.test,
        prompt_id=f"{result.test}-{result.prompt_idx}",
        concurrency=result.concurrency,
        phase_index=phase_index,
        request_index=request_index,
        status=status,
        queue_s=0.0,
        e2e_s=e2e_s,
        tokens_in=result.tokens_in,
        tokens_out=result.tokens_out,
        e2e_tps=result.tok_per_sec,
        answer_text=result.content,
        error_kind=kind,
        error_message=message,
        score_heuristic=result.quality_score,
        score_heuristic_detail=result.quality_notes or None,
    )


def _gpu_samples(run: LegacyRun, readings: dict[int, float], t: float) -> list[Event]:
    return [
        GpuSample(t=t, gpu=gpu, name=run.gpu_name, vram_used_mib=mib, source=GPU_SOURCE)
        for gpu, mib in sorted(readings.items())
    ]


def legacy_events(run: LegacyRun, run_id: str, run_name: str) -> list[Event]:
    """The run as events on the importer's timeline (see the module docstring)."""
    endpoints = tuple(
        EndpointInfo(
            id=m.key,
            label=m.name,
            url=m.url,
            model=m.served_name,
            gpu=i if i in run.vram_before_mib or i in run.vram_after_mib else None,
            model_class=_model_class(m),
        )
        for i, m in enumerate(run.models)
    )
    # Phases per model in file order: (test, concurrency) -> its rows.
    phases: dict[str, dict[tuple[str, int], list[LegacyResult]]] = {m.key: {} for m in run.models}
    for result in run.results:
        phases[result.model].setdefault((result.test, result.concurrency), []).append(result)
    plans = tuple(
        PhasePlan(model, test, concurrency, len(rows))
        for model, by_phase in phases.items()
        for (test, concurrency), rows in by_phase.items()
    )
    t = run.date.timestamp()
    events: list[Event] = [RunStarted(t, run_id, run_name, endpoints, plans)]
    events.extend(_gpu_samples(run, run.vram_before_mib, t))
    for model, by_phase in phases.items():
        for phase_index, ((test, concurrency), rows) in enumerate(by_phase.items()):
            wall_s = max(r.latency_ms for r in rows) / 1000
            events.append(PhaseStarted(t, model, test, concurrency, phase_index))
            events.extend(_request(r, t, phase_index, i) for i, r in enumerate(rows))
            failed = sum(1 for r in rows if r.error or r.suspect)
            tokens = sum(r.tokens_out for r in rows)
            t += wall_s
            events.append(
                PhaseFinished(
                    t, model, test, concurrency, phase_index, len(rows), failed, tokens, wall_s
                )
            )
    events.extend(_gpu_samples(run, run.vram_after_mib, t))
    events.append(RunFinished(t, "complete", None))
    return events


def in_flight(run: LegacyRun) -> dict[int, tuple[int, ...]]:
    """Per seed concurrency, the distinct numbers of requests its phases launched at once (a
    phase's every row: the script sent them together), lowest first."""
    counts: dict[tuple[str, str, int], int] = {}
    for r in run.results:
        key = (r.model, r.test, r.concurrency)
        counts[key] = counts.get(key, 0) + 1
    levels: dict[int, set[int]] = {}
    for (_, _, concurrency), n in counts.items():
        levels.setdefault(concurrency, set()).add(n)
    return {c: tuple(sorted(ns)) for c, ns in sorted(levels.items())}


def recorded_in_flight(manifest: dict[str, Any]) -> dict[int, tuple[int, ...]]:
    """``in_flight`` as an import recorded it in the manifest; empty for a run that is no import
    (or an import made before it was recorded)."""
    legacy = manifest.get("legacy")
    table = legacy.get("in_flight") if isinstance(legacy, dict) else None
    if not isinstance(table, dict):
        return {}
    return {
        int(level): tuple(n for n in counts if isinstance(n, int) and not isinstance(n, bool))
        for level, counts in table.items()
        if level.isascii() and level.isdecimal() and len(level) <= 6 and isinstance(counts, list)
    }


def in_flight_note(levels: dict[int, tuple[int, ...]]) -> str:
    """``the script's concurrency 1 held 2 requests in flight, 4 held 8`` (a range where its
    tests had different numbers of prompts)."""
    held = [
        f"{c} held {ns[0] if len(ns) == 1 else f'{ns[0]}–{ns[-1]}'}" for c, ns in levels.items()
    ]
    return "the script's concurrency " + ", ".join(held) + " requests in flight"


def import_legacy(path: Path, out: Path) -> Path:
    """Write the legacy file at ``path`` as the snapshot directory ``out``; returns ``out``.

    Raises LegacyError for bad input, SnapshotError when ``out`` cannot be written (for
    instance, it already holds files).
    """
    run = read_legacy(path)
    out = Path(out)
    run_id = out.name
    events = legacy_events(run, run_id, run_name=f"legacy {Path(path).stem}")
    started = run.date.astimezone(UTC)
    ended = datetime.fromtimestamp(events[-1].t, UTC)
    manifest = {
        "profile": None,
        "legacy": {
            "source_file": Path(path).name,
            "metadata": run.metadata,
            # JSON keys are strings: the seed's concurrency -> requests launched at once.
            "in_flight": {str(c): list(ns) for c, ns in in_flight(run).items()},
        },
        "started_at": started.isoformat(timespec="milliseconds"),
    }
    writer = SnapshotWriter(out.parent, run_id, manifest)
    writer.open()
    for event in events:
        writer.add(event)
    writer.close("complete")
    # close() stamps the import's own time; the run ended when its timeline does.
    write_manifest(
        writer.path, {**writer.manifest, "ended_at": ended.isoformat(timespec="milliseconds")}
    )
    return writer.path

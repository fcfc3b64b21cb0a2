"""Snapshot identity and manifest: run ids, ``manifest.json`` reads and atomic writes, errors.

The manifest holds what the caller resolved (the profile, secrets removed) plus what the writer
adds: ``schema_version``, ``run_id``, ``host``, ``versions``, ``started_at``, ``ended_at`` and
``status`` (``running`` | ``complete`` | ``aborted``) and ``writer`` (the host and pid of the
process writing it, so a reader can tell a run still going from one whose writer died). It is
always replaced whole, through a temporary file and a rename, so a reader sees either the old or
the new manifest.
"""

from __future__ import annotations

import json
import os
import platform
import re
import socket
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from nvfp4_tui.store.outside_files import read_json_file

SCHEMA_VERSION = 1
MANIFEST_NAME = "manifest.json"
RUN_STATUSES = ("running", "complete", "aborted")
_RUN_ID = re.compile(r"^[A-Za-z0-9_.-]+$")
_RUN_ID_MAX_CHARS = 200
_NAME_MAX_CHARS = 64
_VERSIONED_PACKAGES = ("nvfp4-tui", "polars", "aiohttp", "textual")


class SnapshotError(Exception):
    """A snapshot cannot be written or read; the message is one line naming the path."""


def check_run_id(run_id: str) -> str:
    """``run_id`` if it is a safe single directory name, else SnapshotError."""
    if not _RUN_ID.fullmatch(run_id) or run_id.startswith(".") or len(run_id) > _RUN_ID_MAX_CHARS:
        shown = repr(run_id) if len(run_id) <= 60 else repr(run_id[:57]) + "..."
        raise SnapshotError(
            f"invalid run id {shown}: expected letters, digits, '_', '.', '-' "
            f"(not starting with '.', at most {_RUN_ID_MAX_CHARS} characters)"
        )
    return run_id


def new_run_id(name: str, now: datetime) -> str:
    """A run id such as ``20261202-093000-demo-7gpu``: ``now`` as given, then ``name`` sanitised."""
    slug = re.sub(r"[^A-Za-z0-9_.]+", "-", name).strip("-.")[:_NAME_MAX_CHARS].strip("-.")
    stamp = now.strftime("%Y%m%d-%H%M%S")
    return check_run_id(f"{stamp}-{slug}" if slug else stamp)


def utc_now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for package in _VERSIONED_PACKAGES:
        try:
            versions[package.replace("-", "_")] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package.replace("-", "_")] = None
    return versions


def build_manifest(given: dict[str, Any], run_id: str) -> dict[str, Any]:
    """The first manifest of a run: ``given`` plus the writer's keys.

    ``schema_version``, ``run_id``, ``status`` and ``ended_at`` always come from the writer;
    ``host``, ``versions`` and ``started_at`` only where ``given`` lacks them (an importer
    supplies the original run's).
    """
    body = dict(given)
    body.setdefault("host", socket.gethostname())
    body.setdefault("versions", _package_versions())
    body.setdefault("started_at", utc_now_iso())
    body.update(
        schema_version=SCHEMA_VERSION,
        run_id=run_id,
        status="running",
        ended_at=None,
        writer={"host": socket.gethostname(), "pid": os.getpid()},
    )
    return body


def fsync_dir(directory: Path) -> None:
    """Make a rename inside ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: a dot-named ``.tmp`` beside it, fsync, rename.

    Raises OSError; the temporary file is removed on failure.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    """Replace ``directory/manifest.json`` atomically; raises OSError or TypeError."""
    text = json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    write_atomic(directory / MANIFEST_NAME, text.encode())


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of the snapshot in ``directory``; SnapshotError names what is wrong."""
    path = directory / MANIFEST_NAME
    expected = "expected a JSON object written by nvfp4-tui"
    try:
        body = read_json_file(path)
    except FileNotFoundError:
        raise SnapshotError(f"{path}: missing; {directory} is not a snapshot directory") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"{path}: cannot read ({error_text(exc)}); {expected}") from None
    except ValueError as exc:
        raise SnapshotError(f"{path}: {exc}; {expected}") from None
    if not isinstance(body, dict):
        raise SnapshotError(f"{path}: {type(body).__name__} at top level; {expected}")
    version = body.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SnapshotError(f"{path}: key 'schema_version' is {version!r}; expected an integer")
    if version > SCHEMA_VERSION:
        raise SnapshotError(
            f"{path}: schema_version {version} is newer than this nvfp4-tui reads "
            f"({SCHEMA_VERSION}); upgrade nvfp4-tui"
        )
    if body.get("status") not in RUN_STATUSES:
        raise SnapshotError(
            f"{path}: key 'status' is {body.get('status')!r}; expected one of {list(RUN_STATUSES)}"
        )
    run_id = body.get("run_id")
    if not isinstance(run_id, str):
        raise SnapshotError(f"{path}: key 'run_id' is {run_id!r}; expected a string")
    try:
        check_run_id(run_id)  # it names files and titles: no path, no escape sequence
    except SnapshotError as exc:
        raise SnapshotError(f"{path}: key 'run_id': {exc}") from None
    return body


def error_text(exc: BaseException) -> str:
    """An exception as one short line without the path: ``[Errno 28] No space left on device``."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"[Errno {exc.errno}] {exc.strerror}"
    return " ".join(str(exc).split()) or type(exc).__name__

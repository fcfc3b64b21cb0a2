"""Profiles with hostile endpoints, and small recorded runs of them, for the reliability tests."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from nvfp4_tui.bench.session import Session, SessionResult
from nvfp4_tui.config.profile import Profile, load_profile
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.events import EndpointStatus, Event
from nvfp4_tui.store.reader import Snapshot, open_snapshot
from nvfp4_tui.store.writer import list_parts
from tests.integration.fleet_files import write_suite

MAX_TOKENS = 24
ROWS_WAIT_S = 60.0


def hostile_endpoint_toml(
    endpoint_id: str,
    url: str,
    *,
    api_key_env: str | None = None,
    verify_tls: bool | None = None,
) -> str:
    """An endpoint served by a test's own server: no [sim] table, no GPU telemetry."""
    lines = [
        "[[endpoint]]",
        f'id = "{endpoint_id}"',
        f'url = "{url}"',
        'model = "current"',
        'telemetry = "none"',
    ]
    if api_key_env:
        lines.append(f'api_key_env = "{api_key_env}"')
    if verify_tls is not None:
        lines.append(f"verify_tls = {str(verify_tls).lower()}")
    return "\n" + "\n".join(lines) + "\n"


def write_run_profile(
    directory: Path,
    endpoints: Sequence[str],
    *,
    requests: int,
    concurrency: int = 1,
    timeout_s: float = 1.0,
    retries: int = 0,
    max_tokens: int = MAX_TOKENS,
    outage_give_up_s: float = 600.0,
) -> Path:
    """``directory/profile.toml`` running one short essay suite against ``endpoints``."""
    write_suite(directory / "suites", "essay", max_tokens=max_tokens)
    run = f"""
[run]
name = "reliability"
suites = ["essay"]
concurrency = [{concurrency}]
requests = {requests}
timeout_s = {timeout_s}
warmup = false
retries = {retries}
outage_give_up_s = {outage_give_up_s}
"""
    path = directory / "profile.toml"
    path.write_text(run + "".join(endpoints))
    return path


async def record_run(
    profile: Profile, out_root: Path, subscribers: Sequence = ()
) -> tuple[SessionResult, Snapshot]:
    """Run ``profile`` in this process (no GPU telemetry) and open what it recorded."""
    suites = load_suites(profile.suite_dirs, profile.run.suites)
    session = Session(profile, suites, out_root, subscribers=subscribers)
    session.open()
    result = await session.run()
    return result, open_snapshot(result.snapshot)


def rows_of(snapshot: Snapshot) -> dict[str, pl.DataFrame]:
    """The requests table split by endpoint id."""
    return {
        str(eid): frame
        for (eid,), frame in snapshot.requests().group_by("endpoint_id", maintain_order=True)
    }


def statuses_of(events: Sequence[Event], endpoint_id: str) -> list[EndpointStatus]:
    return [e for e in events if isinstance(e, EndpointStatus) and e.endpoint_id == endpoint_id]


def pointed_at(path: Path, urls: dict[str, str]) -> Path:
    """A copy of the profile whose simulated endpoints point where the simulator really listens
    (endpoints it does not serve keep their own URL)."""
    text = path.read_text()
    for endpoint in load_profile(path).endpoints:
        url = urls.get(endpoint.id, endpoint.url)
        text = text.replace(f'url = "{endpoint.url}"', f'url = "{url}"')
    live = path.with_name("live.toml")
    live.write_text(text)
    return live


def wait_for_rows(snapshot_root: Path) -> Path:
    """The one snapshot under ``snapshot_root``, once some requests are on disk in it."""
    deadline = time.monotonic() + ROWS_WAIT_S
    while time.monotonic() < deadline:
        runs = [p for p in snapshot_root.glob("*") if p.is_dir()] if snapshot_root.is_dir() else []
        if runs and list_parts(runs[0] / "requests"):
            return runs[0]
        time.sleep(0.1)
    raise AssertionError(f"no requests written under {snapshot_root}")

"""The tool as a user runs it against a real server: a profile, `nvfp4-tui run` in a process of
its own, its snapshot, `report --format json`; and the server's own counters."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvfp4_tui.core.events import ProbeFinished
from nvfp4_tui.store.reader import Snapshot, open_snapshot

PREFIX_HITS = "vllm:prefix_cache_hits_total"
RUN_TIMEOUT_S = 600.0
METRICS_TIMEOUT_S = 10.0
MAX_TOKENS = 32  # a random model never stops early: every answer is this long
ENDPOINT_ID = "real"


@dataclass(frozen=True)
class ToolRun:
    returncode: int
    output: str
    snapshot: Snapshot

    def probes(self) -> list[ProbeFinished]:
        return [e for e in self.snapshot.events() if isinstance(e, ProbeFinished)]


def cli(*args: str, timeout_s: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nvfp4_tui.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def write_profile(
    path: Path,
    url: str,
    *,
    suites: list[str],
    concurrency: list[int],
    requests: int = 1,
    max_tokens: int = MAX_TOKENS,
    model: str = "tiny",
    temperature: float | None = None,
    extra_body: dict[str, bool | int | float | str] | None = None,
    outage_give_up_s: float | None = None,
) -> Path:
    run_lines = "" if temperature is None else f"temperature = {temperature!r}\n"
    if outage_give_up_s is not None:
        run_lines += f"outage_give_up_s = {outage_give_up_s!r}\n"
    endpoint_lines = ""
    if extra_body:
        pairs = ", ".join(f"{key} = {json.dumps(value)}" for key, value in extra_body.items())
        endpoint_lines = f"extra_body = {{ {pairs} }}\n"
    path.write_text(
        f"""[run]
name = "real"
suites = {json.dumps(suites)}
concurrency = {json.dumps(concurrency)}
requests = {requests}
max_tokens = {max_tokens}
timeout_s = 120
{run_lines}
[[endpoint]]
id = "{ENDPOINT_ID}"
url = "{url}"
model = {json.dumps(model)}
telemetry = "none"
{endpoint_lines}"""
    )
    return path


def run(profile: Path, out: Path, *extra: str) -> ToolRun:
    """`nvfp4-tui run PROFILE --headless`, and the one snapshot it wrote under ``out``."""
    done = cli("run", str(profile), "--headless", "--out", str(out), *extra)
    output = done.stdout + done.stderr
    written = sorted(p for p in out.glob("*") if p.is_dir()) if out.is_dir() else []
    assert len(written) == 1, f"expected one snapshot under {out}:\n{output}"
    return ToolRun(done.returncode, output, open_snapshot(written[0]))


def report_rows(snapshot: Snapshot) -> list[dict[str, Any]]:
    done = cli("report", str(snapshot.path), "--format", "json", timeout_s=120)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads(done.stdout)
    assert isinstance(rows, list)
    return rows


def vllm_counters(url: str) -> dict[str, float]:
    """vLLM's token counters (prompt, generated, prefix cache hits), summed over their labels."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=METRICS_TIMEOUT_S) as reply:
        text = reply.read().decode()
    totals = dict.fromkeys(
        ("vllm:prompt_tokens_total", "vllm:generation_tokens_total", PREFIX_HITS), 0.0
    )
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in totals:
            totals[name] += float(line.rsplit(" ", 1)[1])
    return totals

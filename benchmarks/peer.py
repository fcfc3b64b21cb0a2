"""Peer (optional): GuideLLM against the same simulated endpoint, or a note saying why not.

GuideLLM pulls in torch and, for its synthetic prompts, a Hugging Face tokenizer fetched at run
time; neither is a dependency of this project and this benchmark never installs them. Where
``guidellm`` is importable, the script runs ``guidellm benchmark`` at concurrency 4 against one
simulated endpoint (in its own process) with a time limit, and keeps its exit code and the end of
its console report beside the simulator's schedule, for a reader to compare with fidelity.json.

Usage: ``python benchmarks/peer.py [--quick]``.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from importlib import metadata
from typing import Any

import harness
from harness import Target

from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.sim.schedule import decode_tps_at, expected_ttft_s

NAME = "peer"
CONCURRENCY = 4
PROMPT_TOKENS = 64
OUTPUT_TOKENS = 64
OUTPUT_TAIL_CHARS = 4000


def _guidellm_command(url: str, max_seconds: int) -> list[str] | None:
    executable = shutil.which("guidellm")
    if executable is None:
        return None
    return [
        executable,
        "benchmark",
        "--target",
        url,
        "--rate-type",
        "concurrent",
        "--rate",
        str(CONCURRENCY),
        "--max-seconds",
        str(max_seconds),
        "--data",
        f"prompt_tokens={PROMPT_TOKENS},output_tokens={OUTPUT_TOKENS}",
    ]


def run(quick: bool) -> dict[str, Any]:
    if importlib.util.find_spec("guidellm") is None:
        return {
            "skipped": True,
            "reason": "guidellm is not installed (it pulls torch; this benchmark does not "
            "install it). To compare by hand: pip install guidellm, serve the demo fleet with "
            "`nvfp4-tui sim nvfp4_tui/config/data/profiles/demo.toml`, then `guidellm benchmark --target URL "
            f"--rate-type concurrent --rate {CONCURRENCY} --data "
            f'"prompt_tokens={PROMPT_TOKENS},output_tokens={OUTPUT_TOKENS}"`.',
        }
    max_seconds = 20 if quick else 120
    profile = load_profile(DEMO_PROFILE)
    endpoint = next(e for e in profile.endpoints if e.sim is not None)
    assert endpoint.sim is not None
    with SimProcess(profile.path) as sim:
        url = sim.urls[endpoint.id]
        command = _guidellm_command(url, max_seconds)
        if command is None:
            return {"skipped": True, "reason": "guidellm is importable but has no CLI on PATH"}
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=max_seconds * 3, check=False
            )
            code, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as expired:
            code, output = None, str(expired.stdout or "") + str(expired.stderr or "")
    return {
        "skipped": False,
        "guidellm_version": metadata.version("guidellm"),
        "command": command,
        "exit_code": code,
        "output_tail": output[-OUTPUT_TAIL_CHARS:],
        "endpoint": endpoint.id,
        "schedule": {
            "ttft_ms_at_c": 1000 * expected_ttft_s(endpoint.sim, PROMPT_TOKENS, CONCURRENCY),
            "decode_tps_at_c": decode_tps_at(endpoint.sim, CONCURRENCY),
        },
    }


def report(numbers: dict[str, Any]) -> list[str]:
    if numbers["skipped"]:
        return [f"Peer (GuideLLM): skipped. {numbers['reason']}"]
    schedule = numbers["schedule"]
    lines = [
        f"Peer: GuideLLM {numbers['guidellm_version']} at concurrency {CONCURRENCY} on "
        f"{numbers['endpoint']} (exit code {numbers['exit_code']}); the schedule says TTFT "
        f"{schedule['ttft_ms_at_c']:.1f} ms (prompt of {PROMPT_TOKENS} tokens), decode "
        f"{schedule['decode_tps_at_c']:.1f} tok/s per request.",
        numbers["output_tail"],
    ]
    return ["\n".join(lines)]


def main(argv: list[str] | None = None) -> int:
    args = harness.parser(__doc__.splitlines()[0]).parse_args(argv)
    numbers = run(args.quick)
    verdicts = [
        Target(
            "peer comparison",
            "optional: GuideLLM on the same simulated endpoint",
            "skipped" if numbers["skipped"] else f"exit code {numbers['exit_code']}",
            None,
        )
    ]
    path = harness.write_result(
        NAME,
        args.results_dir,
        quick=args.quick,
        settings={"concurrency": CONCURRENCY, "prompt_tokens": PROMPT_TOKENS},
        numbers=numbers,
        targets=verdicts,
        notes=[],
    )
    harness.print_report(report(numbers), path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``nvfp4-tui ARGS`` run as its own process, as a user runs it: its exit status and output."""

from __future__ import annotations

import asyncio
import sys


async def cli_command(*args: str, env: dict[str, str], timeout_s: float) -> tuple[int, str, str]:
    """The exit status, stdout and stderr of ``nvfp4-tui ARGS``; this process's event loop
    goes on meanwhile (it may serve the endpoints the command talks to)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "nvfp4_tui.cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout_s)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()

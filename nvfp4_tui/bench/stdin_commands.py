"""The commands a runner process (the worker, or one shard of it) reads on its stdin, one a
line: ``pause`` and ``resume`` its sending, ``stop`` the run."""

from __future__ import annotations

import asyncio
import sys
from typing import Protocol


class Pausable(Protocol):
    def pause(self) -> None: ...

    def resume(self) -> None: ...


async def obey_stdin(runner: Pausable) -> bool:
    """Pause and resume ``runner`` as told until ``stop`` (True) or the end of stdin (False:
    whoever sent the commands went away)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        command = line.decode().strip()
        if command == "pause":
            runner.pause()
        elif command == "resume":
            runner.resume()
        elif command == "stop":
            return True
    return False

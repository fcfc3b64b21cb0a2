"""What a runner process (the worker, or one shard of it) does the same way: stop on a signal,
read the plan it was handed, and take commands on its stdin, one a line: ``pause`` and
``resume`` its sending, ``stop`` the run."""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any, Protocol

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Pausable(Protocol):
    def pause(self) -> None: ...

    def resume(self) -> None: ...


def cancel_on_stop_signals() -> asyncio.Task[Any]:
    """The running task, cancelled by any of ``STOP_SIGNALS`` from now on."""
    loop = asyncio.get_running_loop()
    main_task = asyncio.current_task()
    assert main_task is not None
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, main_task.cancel)
    return main_task


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

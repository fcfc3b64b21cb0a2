"""``nvfp4-tui serve``: the monitor in a browser, through textual-serve.

Every browser tab that connects starts its own ``nvfp4-tui ARGS…`` process with Textual's web
driver, so only commands that are a view (``demo``, ``replay``, ``follow``) may be served: a
served ``run`` would start a new benchmark for every tab. A long run is started with
``run --detach`` and served as ``follow``.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence

# The commands a browser tab may start: each shows the monitor and nothing else.
SERVABLE = ("demo", "replay", "follow")
# Options that take the monitor away (no UI to serve) or hand the run to another process.
NOT_SERVABLE_OPTIONS = ("--headless", "--detach", "--json")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class ServeError(Exception):
    """What is wrong with the command to serve, in one line."""


def served_command(args: Sequence[str]) -> str:
    """The shell command each browser tab runs, checked: ``args`` name a servable command."""
    if not args:
        raise ServeError(f"serve: name the command to serve ({', '.join(SERVABLE)})")
    command = args[0]
    if command not in SERVABLE:
        hint = "; start a run with `run --detach` and serve `follow`" if command == "run" else ""
        raise ServeError(
            f"serve: {command!r} cannot be served: expected one of {', '.join(SERVABLE)}{hint}"
        )
    for option in NOT_SERVABLE_OPTIONS:
        if option in args:
            raise ServeError(f"serve: {option} leaves nothing to show in a browser")
    # The same interpreter and package as this process, whatever PATH holds.
    return shlex.join([sys.executable, "-m", "nvfp4_tui.cli", *args])


def tunnel_hint(host: str, port: int) -> str:
    """How to reach the server from a laptop: the SSH tunnel for a loopback bind."""
    if host in LOOPBACK:
        return (
            f"from your laptop: ssh -N -L {port}:127.0.0.1:{port} USER@THIS_HOST, "
            f"then open http://127.0.0.1:{port}"
        )
    return (
        f"warning: bound to {host}: anyone who can reach port {port} can open the monitor and "
        "start its command; prefer the default 127.0.0.1 and an SSH tunnel"
    )


def serve(args: Sequence[str], host: str, port: int) -> int:
    """Serve ``nvfp4-tui ARGS…`` on ``host:port`` until interrupted."""
    command = served_command(args)
    try:
        from textual_serve.server import Server
    except ImportError:
        raise ServeError("serve needs textual-serve: pip install 'nvfp4-tui[serve]'") from None
    print(tunnel_hint(host, port), file=sys.stderr, flush=True)
    Server(command, host=host, port=port, title=f"nvfp4-tui {shlex.join(args)}").serve()
    return 0

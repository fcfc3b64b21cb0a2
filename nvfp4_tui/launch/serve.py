"""``nvfp4-tui serve``: the monitor in a browser, through textual-serve.

Every browser tab that connects starts its own ``nvfp4-tui ARGS…`` process with Textual's web
driver, so only commands that are a view (``demo``, ``replay``, ``follow``) may be served: a
served ``run`` would start a new benchmark for every tab. A long run is started with
``run --detach`` and served as ``follow``.

textual-serve itself accepts a session from any page: a site open in the same browser could
connect through the SSH tunnel (or a DNS-rebinding name) and start processes. So a session is
opened only for a page of this server (its Origin and Host name the bound address, or loopback
when it is bound there), and at most ``max_sessions`` at once.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from aiohttp import web

# The commands a browser tab may start: each shows the monitor and nothing else.
SERVABLE = ("demo", "replay", "follow")
# Options that take the monitor away (no UI to serve) or hand the run to another process.
NOT_SERVABLE_OPTIONS = ("headless", "detach", "json")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class ServeError(Exception):
    """What is wrong with the command to serve, in one line."""


def served_command(args: Sequence[str], parsed: argparse.Namespace) -> str:
    """The shell command each browser tab runs, checked: ``args`` (``parsed`` by the CLI's own
    parser, so that an abbreviated option reads as what it stands for) name a servable command
    that shows the monitor."""
    if not args:
        raise ServeError(f"serve: name the command to serve ({', '.join(SERVABLE)})")
    command = parsed.command
    if command not in SERVABLE:
        hint = "; start a run with `run --detach` and serve `follow`" if command == "run" else ""
        raise ServeError(
            f"serve: {command!r} cannot be served: expected one of {', '.join(SERVABLE)}{hint}"
        )
    for option in NOT_SERVABLE_OPTIONS:
        if getattr(parsed, option, False):
            raise ServeError(f"serve: --{option} leaves nothing to show in a browser")
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


def allowed_hosts(host: str) -> frozenset[str]:
    """The host names a page of this server is reached by."""
    return frozenset(LOOPBACK) if host in LOOPBACK else frozenset({host})


def is_own_page(headers: dict[str, str], hosts: frozenset[str], port: int) -> bool:
    """Whether a session request comes from a page of this server: its Origin and its Host both
    name an allowed host on this port. A browser always sends Origin with a WebSocket."""
    origin = urlsplit(headers.get("Origin", ""))
    host = urlsplit(f"//{headers.get('Host', '')}")
    try:
        named = [(origin.hostname, origin.port), (host.hostname, host.port)]
    except ValueError:  # a port that is no number
        return False
    return origin.scheme in ("http", "https") and all(
        name in hosts and at == port for name, at in named
    )


def serve(
    args: Sequence[str],
    parsed: argparse.Namespace,
    host: str,
    port: int,
    max_sessions: int,
) -> int:
    """Serve ``nvfp4-tui ARGS…`` on ``host:port`` until interrupted."""
    command = served_command(args, parsed)
    try:
        from aiohttp import web
        from textual_serve.server import Server
    except ImportError:
        raise ServeError("serve needs textual-serve: pip install 'nvfp4-tui[serve]'") from None

    hosts = allowed_hosts(host)

    class GuardedServer(Server):
        sessions = 0

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            if not is_own_page(dict(request.headers), hosts, port):
                raise web.HTTPForbidden(text="not a page of this server\n")
            if self.sessions >= max_sessions:
                raise web.HTTPServiceUnavailable(text=f"{max_sessions} sessions already open\n")
            self.sessions += 1
            try:
                return await super().handle_websocket(request)
            finally:
                self.sessions -= 1

    print(tunnel_hint(host, port), file=sys.stderr, flush=True)
    title = f"nvfp4-tui {shlex.join(args)}"
    GuardedServer(command, host=host, port=port, title=title).serve()
    return 0

"""``nvfp4-tui serve``: the monitor in a browser, through textual-serve.

Every browser tab that connects starts its own ``nvfp4-tui ARGS…`` process with Textual's web
driver, so only commands that are a view (``demo``, ``replay``, ``follow``) may be served: a
served ``run`` would start a new benchmark for every tab. A long run is started with
``run --detach`` and served as ``follow``.

A served ``demo`` runs simulated endpoints only: a profile naming a real endpoint, a judge or a
telemetry URL would send real requests (with their keys) from every tab.

textual-serve itself accepts a session from any page: a site open in the same browser could
connect through the SSH tunnel (or a DNS-rebinding name) and start processes. So a session, and
the index page, are only for a page of this server (its Origin and Host name one of its hosts:
``allowed_hosts``), and at most ``max_sessions`` at once (``serve_server``).
"""

from __future__ import annotations

import argparse
import shlex
import socket
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import urlsplit

# The commands a browser tab may start: each shows the monitor and nothing else.
SERVABLE = ("demo", "replay", "follow")
# Options that take the monitor away (no UI to serve) or hand the run to another process.
NOT_SERVABLE_OPTIONS = ("headless", "detach", "json")
LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::", "")
# The largest screen a browser can show: 7680 x 4320 pixels in cells of 12 x 18. A size past
# this is no screen, and Textual would allocate it whole (20000 x 20000 took 2 GiB).
MAX_COLUMNS = 640
MAX_ROWS = 240


class ServeError(Exception):
    """What is wrong with the command to serve, in one line."""


def served_command(args: Sequence[str], parsed: argparse.Namespace) -> str:
    """The shell command each browser tab runs, checked: ``args`` (``parsed`` by the CLI's own
    parser, which takes no abbreviation) name a servable command that shows the monitor."""
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
    if command == "demo":
        _check_simulated(parsed.profile)
    # The same interpreter and package as this process, whatever PATH holds.
    return shlex.join([sys.executable, "-m", "nvfp4_tui.cli", *args])


def _check_simulated(profile_path: Path) -> None:
    """A served demo's profile sends nothing off this box: every endpoint simulated, no judge,
    no telemetry read from a URL."""
    from nvfp4_tui.config.profile import load_profile
    from nvfp4_tui.config.tomlcheck import ConfigError

    try:
        profile = load_profile(profile_path)
    except ConfigError as error:
        raise ServeError(f"serve: {error.problems[0]}") from None
    real = [e.id for e in profile.endpoints if e.sim is None]
    if real:
        raise ServeError(
            f"serve: {profile_path}: endpoint {', '.join(real)} is not simulated; a served demo "
            "runs simulated endpoints only (benchmark real ones with `run --detach`, serve "
            "`follow`)"
        )
    if profile.judge is not None:
        raise ServeError(
            f"serve: {profile_path}: [judge] is a real endpoint; a served demo has none"
        )
    remote = [e.id for e in profile.endpoints if e.telemetry.url is not None]
    if remote:
        raise ServeError(
            f"serve: {profile_path}: endpoint {', '.join(remote)} reads telemetry from a URL; "
            "a served demo uses the simulator's"
        )


def tunnel_hint(host: str, port: int, hosts: Iterable[str] = ()) -> str:
    """How to reach the server from a laptop: the SSH tunnel for a loopback bind, and for any
    other which names a browser may use."""
    if host in LOOPBACK:
        return (
            f"from your laptop: ssh -N -L {port}:127.0.0.1:{port} USER@THIS_HOST, "
            f"then open http://127.0.0.1:{port}"
        )
    names = ", ".join(sorted(set(hosts) - set(LOOPBACK))) or host
    return (
        f"warning: bound to {host or '*'}: anyone who can reach port {port} can open the "
        f"monitor and start its command; prefer the default 127.0.0.1 and an SSH tunnel. "
        f"Browsers may open http://NAME:{port} for NAME in: {names}; add --allow-origin NAME "
        "for any other name of this host"
    )


def allowed_hosts(host: str, allow: Iterable[str] = ()) -> frozenset[str]:
    """The host names a page of this server is reached by: loopback's for a loopback bind, the
    bound address, or for a wildcard bind this host's own names and addresses; and ``allow``."""
    if host in LOOPBACK:
        named = set(LOOPBACK)
    elif host in WILDCARD:
        named = {*LOOPBACK, *own_names()}
    else:
        named = {host}
    return frozenset(named | {name.strip("[]").lower() for name in allow})


def own_names() -> set[str]:
    """This host's name, its fully qualified name and the addresses they resolve to."""
    names = {socket.gethostname().lower(), socket.getfqdn().lower()}
    addresses: set[str] = set()
    for name in names:
        try:
            found = socket.getaddrinfo(name, None)
        except OSError:
            continue
        addresses |= {str(info[4][0]).split("%")[0] for info in found}
    return names | addresses


def clamped_size(width: int, height: int) -> tuple[int, int]:
    """A terminal size a browser asked for, kept to what a screen can be."""
    return max(1, min(width, MAX_COLUMNS)), max(1, min(height, MAX_ROWS))


def _named(url: str) -> tuple[str | None, int | None] | None:
    """The host and port a URL (or ``//host:port``) names; None when its port is no number."""
    parts = urlsplit(url)
    try:
        return parts.hostname, parts.port
    except ValueError:
        return None


def is_own_host(headers: dict[str, str], hosts: frozenset[str], port: int) -> bool:
    """Whether a request names this server in its Host: an allowed host on this port (no
    DNS-rebinding name reaches the index page, which shows the served command)."""
    named = _named(f"//{headers.get('Host', '')}")
    return named is not None and named[0] in hosts and named[1] == port


def is_own_page(headers: dict[str, str], hosts: frozenset[str], port: int) -> bool:
    """Whether a session request comes from a page of this server: its Origin and its Host both
    name an allowed host on this port. A browser always sends Origin with a WebSocket."""
    origin = headers.get("Origin", "")
    named = _named(origin)
    return (
        urlsplit(origin).scheme in ("http", "https")
        and named is not None
        and named[0] in hosts
        and named[1] == port
        and is_own_host(headers, hosts, port)
    )


def serve(
    args: Sequence[str],
    parsed: argparse.Namespace,
    host: str,
    port: int,
    max_sessions: int,
    allow_origins: Sequence[str] = (),
) -> int:
    """Serve ``nvfp4-tui ARGS…`` on ``host:port`` until interrupted."""
    command = served_command(args, parsed)
    try:
        from nvfp4_tui.launch.serve_server import GuardedServer
    except ModuleNotFoundError as missing:
        if (missing.name or "").partition(".")[0] not in ("textual_serve", "aiohttp_jinja2"):
            raise
        raise ServeError("serve needs textual-serve: pip install 'nvfp4-tui[serve]'") from None
    hosts = allowed_hosts(host, allow_origins)
    print(tunnel_hint(host, port, hosts), file=sys.stderr, flush=True)
    title = f"nvfp4-tui {shlex.join(args)}"
    server = GuardedServer(
        command, hosts=hosts, max_sessions=max_sessions, host=host, port=port, title=title
    )
    server.serve()
    return 0

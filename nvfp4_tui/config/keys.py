"""API keys: read from the environment variables a profile names, never from the profile itself.

``api_key`` is how the package reads a key; ``run_secrets`` is every key a run sends, which
whatever reads that run's servers scrubs from what they say (``core.outside_text``).
``key_routes`` says at start which variable goes to which host, without the value.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from nvfp4_tui.config.profile import Profile
from nvfp4_tui.core.outside_text import Secrets, secrets_of


def api_key(env_name: str | None) -> str | None:
    """The key in ``env_name``; None when unnamed, unset or empty."""
    return os.environ.get(env_name) or None if env_name else None


def run_secrets(profile: Profile) -> Secrets:
    """Every key the profile's run sends, each endpoint's and the judge's: all of them are
    scrubbed from every reply, since a ``--workers`` shard sends only its endpoints' keys, yet
    a gateway they share can echo another endpoint's key into its replies."""
    names = [e.api_key_env for e in profile.endpoints]
    if profile.judge is not None:
        names.append(profile.judge.api_key_env)
    return secrets_of(*(api_key(name) for name in names))


def _host(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc.rpartition("@")[2] or url


def key_routes(profile: Profile) -> list[str]:
    """One line per endpoint (and judge) that names a key: which variable is sent to which host,
    or that it is unset."""
    named = [(e.api_key_env, e.url, e.id) for e in profile.endpoints]
    if profile.judge is not None:
        named.append((profile.judge.api_key_env, profile.judge.url, "judge"))
    lines = []
    for env_name, url, who in named:
        if not env_name:
            continue
        if api_key(env_name) is None:
            lines.append(f"${env_name} is not set: {_host(url)} ({who}) gets no key")
        else:
            lines.append(f"sending ${env_name} to {_host(url)} ({who})")
    return lines

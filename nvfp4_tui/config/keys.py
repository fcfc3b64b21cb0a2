"""API keys: read from the environment variables a profile names, never from the profile itself.

``api_key`` is how the package reads a key, and reading one makes it known to
``core.outside_text``, so every text from outside is scrubbed of every key this process sends.
``key_routes`` says at start which variable goes to which host, without the value.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from nvfp4_tui.config.profile import Profile
from nvfp4_tui.core.outside_text import remember_secrets


def api_key(env_name: str | None) -> str | None:
    """The key in ``env_name`` (None when unnamed, unset or empty), remembered to be scrubbed."""
    key = os.environ.get(env_name) or None if env_name else None
    remember_secrets(key)
    return key


def remember_keys(profile: Profile) -> None:
    """Read every key the profile's run sends (each endpoint's and the judge's) so that this
    process scrubs all of them: a ``--workers`` shard sends only its endpoints' keys, yet a
    gateway they share can echo another endpoint's key into its replies."""
    names = [e.api_key_env for e in profile.endpoints]
    if profile.judge is not None:
        names.append(profile.judge.api_key_env)
    for name in names:
        api_key(name)


def _host(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc.rpartition("@")[2] or url


def key_routes(profile: Profile) -> list[str]:
    """One line per endpoint (and judge) that names a key: which variable is sent to which host,
    or that it is unset. Reading them remembers every key before the first request leaves."""
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

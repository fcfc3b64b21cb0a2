"""Text from outside made safe to keep and to show: the one chokepoint it passes.

Servers (bodies, model ids, /metrics), judges, profiles and snapshots from elsewhere hand this
process text it did not write. Every such text passes ``outside_text`` or ``outside_line``
before it is cut to a length, stored, logged or printed: each of the ``secrets`` it is given,
and the ``user:password@`` of any URL, becomes ``SECRET_MARKER``; then escape sequences, control
characters and invisible formatting go (``plain_text``). The cut comes last, so a key that
straddles it is never half kept; a text cut earlier (a body read up to a byte count) that ends
with the start of a key loses that start as well.

The secrets are passed, never kept here: a run's are every key its profile names
(``config.keys.run_secrets``), handed by the runner to each part that talks to a server with a
key (the client, the judge, the /metrics scraper, the configuration probe) and to what prints
the run's notes. Text read where no key was sent (a snapshot, a GPU exporter) passes with none.
Model answers keep their text for scoring and pass ``without_secrets`` alone.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from nvfp4_tui.core.plain_text import plain_text

SECRET_MARKER = "***"
# The shortest start of a key taken for that key when it ends a text (the rest was cut off).
PARTIAL_KEY_MIN_CHARS = 4
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@]*@")

# The keys a text is scrubbed of; none by default, for text read where no key was sent.
Secrets = frozenset[str]
NO_SECRETS: Secrets = frozenset()


def secrets_of(*values: str | None) -> Secrets:
    """The keys among ``values``, empty and None ones skipped."""
    return frozenset(value for value in values if value)


def without_secrets(text: str, secrets: Collection[str]) -> str:
    """``text`` with each key replaced by ``SECRET_MARKER``, and a key's start that ends the
    text too."""
    for key in sorted(secrets, key=len, reverse=True):  # a key that holds another goes first
        text = _without_cut_key(text.replace(key, SECRET_MARKER), key)
    return text


def outside_text(raw: str | None, secrets: Collection[str] = NO_SECRETS) -> str:
    """``raw`` without keys, URL credentials, escapes, controls or invisible formatting; its
    line breaks kept."""
    if not raw:
        return ""
    # Keys are taken out before and after the escapes: an escape can hide a key's first
    # character from the second pass, and a key cut up by escapes is whole only after them.
    text = without_secrets(plain_text(without_secrets(raw, secrets)), secrets)
    return _USERINFO.sub(rf"\1{SECRET_MARKER}@", text)


def outside_line(
    raw: str | None, max_chars: int | None = None, secrets: Collection[str] = NO_SECRETS
) -> str:
    """``outside_text`` on one line (runs of white space become one space), then cut to
    ``max_chars`` with an ellipsis."""
    line = " ".join(outside_text(raw, secrets).split())
    if max_chars is None or len(line) <= max_chars:
        return line
    return line[: max_chars - 1] + "…"


def _without_cut_key(text: str, key: str) -> str:
    for size in range(min(len(key) - 1, len(text)), PARTIAL_KEY_MIN_CHARS - 1, -1):
        if text.endswith(key[:size]):
            return text[:-size] + SECRET_MARKER
    return text

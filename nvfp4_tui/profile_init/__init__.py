"""``nvfp4-tui init``: write a commented fleet profile from running endpoints or a compose file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nvfp4_tui.profile_init.compose import read_compose
from nvfp4_tui.profile_init.draft import (
    EndpointDraft,
    check_out,
    safe_text,
    write_profile,
)
from nvfp4_tui.profile_init.probe import addresses, drafts_from_probe, parse_ports
from nvfp4_tui.profile_init.render import render_profile


@dataclass(frozen=True, slots=True)
class Written:
    """What ``init`` wrote: the endpoints, and a line for each endpoint or service left out."""

    endpoints: tuple[EndpointDraft, ...]
    left_out: tuple[str, ...] = ()


# Where ``init`` looks when it is given no URL: the seed's servers listen on 8016-8022.
DEFAULT_HOSTS = ("127.0.0.1",)
DEFAULT_PORTS = "8000-8031"


def init_profile(
    out: Path,
    *,
    force: bool,
    compose: Path | None = None,
    hosts: Sequence[str] | None = None,
    ports: str | None = None,
    urls: Sequence[str] = (),
) -> Written:
    """Write the profile to ``out`` and return its endpoints; ConfigError on bad input.

    URLs alone are probed alone: a scan beside them would write servers no one named (someone
    else's, on a shared box). ``hosts`` or ``ports`` asks for a scan as well; with neither and
    no URL, the default ports of this box are scanned."""
    check_out(out, force)  # before probing, which takes seconds, as well as when writing
    if compose is not None:
        fleet = read_compose(compose)
        text = render_profile(
            safe_text(compose.stem), str(compose), fleet.drafts, fleet.max_num_seqs
        )
        written = Written(fleet.drafts, fleet.skipped)
    else:
        scan = not urls or hosts is not None or ports is not None
        hosts, ports = hosts or DEFAULT_HOSTS, ports or DEFAULT_PORTS
        scanned = f"{','.join(hosts)} ports {ports}" if scan else ""
        given = ", ".join(safe_text(url) for url in urls)
        described = " and ".join(part for part in (scanned, given) if part)
        bases = addresses(hosts if scan else (), parse_ports(ports) if scan else (), urls)
        drafts, left_out = drafts_from_probe(bases, described, addresses((), (), urls))
        text = render_profile(safe_text(out.stem), f"probing {described}", drafts)
        written = Written(tuple(drafts), tuple(left_out))
    write_profile(text, out, force)
    return written

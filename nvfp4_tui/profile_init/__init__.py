"""``nvfp4-tui init``: write a commented fleet profile from running endpoints or a compose file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nvfp4_tui.profile_init.compose import read_compose
from nvfp4_tui.profile_init.draft import (
    EndpointDraft,
    check_out,
    render_profile,
    safe_text,
    write_profile,
)
from nvfp4_tui.profile_init.probe import addresses, drafts_from_probe, parse_ports


@dataclass(frozen=True, slots=True)
class Written:
    """What ``init`` wrote: the endpoints, and a line for each endpoint or service left out."""

    endpoints: tuple[EndpointDraft, ...]
    left_out: tuple[str, ...] = ()


def init_profile(
    out: Path,
    *,
    force: bool,
    compose: Path | None = None,
    hosts: Sequence[str] = ("127.0.0.1",),
    ports: str = "8000-8031",
    urls: Sequence[str] = (),
) -> Written:
    """Write the profile to ``out`` and return its endpoints; ConfigError on bad input."""
    check_out(out, force)  # before probing, which takes seconds, as well as when writing
    if compose is not None:
        fleet = read_compose(compose)
        text = render_profile(
            safe_text(compose.stem), str(compose), fleet.drafts, fleet.max_num_seqs
        )
        written = Written(fleet.drafts, fleet.skipped)
    else:
        described = f"{','.join(hosts)} ports {ports}" + (f" and {len(urls)} URLs" if urls else "")
        drafts, left_out = drafts_from_probe(addresses(hosts, parse_ports(ports), urls), described)
        text = render_profile(safe_text(out.stem), f"probing {described}", drafts)
        written = Written(tuple(drafts), tuple(left_out))
    write_profile(text, out, force)
    return written

"""``init`` by probing: which of the given hosts and ports serve an OpenAI-compatible model list.

Each address gets ``GET /v1/models`` (and, where that answers, ``GET /version``) under a short
timeout, a bounded number at once, reading at most 1 MiB per reply. An endpoint found on this
box is mapped to its GPU through NVML: the GPU on which the process that owns the listening
port, or one of its children, holds memory. Elsewhere, or without NVML, it gets ``"auto"``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import aiohttp

from nvfp4_tui.config.profile import Endpoint
from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.profile_init.draft import EndpointDraft, an_id, is_count, safe_text, settle
from nvfp4_tui.profile_init.model_class import guess_class
from nvfp4_tui.telemetry.nvml import NvmlSource, TelemetryUnavailable, resolve_gpu
from nvfp4_tui.telemetry.prometheus import read_at_most

MAX_ADDRESSES = 4096  # e.g. 16 hosts x 256 ports; past it a typo probes half the internet
PROBES_AT_ONCE = 32
TIMEOUT_S = 2.0
_MAX_REPLY_BYTES = 1 << 20
_MODELS_NOTED = 5
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True, slots=True)
class ServedModel:
    id: str  # as ``safe_text`` shows it
    usable: bool  # the id is its own safe form: a profile can name it exactly and be run
    max_model_len: int | None
    root: str | None


@dataclass(frozen=True, slots=True)
class Found:
    """An address that answered ``/v1/models`` with at least one model."""

    url: str
    models: tuple[ServedModel, ...]
    version: str | None


def parse_ports(text: str) -> list[int]:
    """``8000-8031,9000`` -> the ports, in order, each once."""
    ports: dict[int, None] = {}
    for part in (p.strip() for p in text.split(",")):
        low, _, high = part.partition("-")
        if not (is_count(low) and (not high or is_count(high))):
            raise ConfigError([f"--ports: expected ports such as 8000-8031,9000, got {part!r}"])
        first, last = int(low), int(high or low)
        if not 1 <= first <= last <= 65535:
            raise ConfigError([f"--ports: expected ports from 1 to 65535, low-high, got {part!r}"])
        if len(ports) + last - first + 1 > MAX_ADDRESSES:
            raise ConfigError([f"--ports: more than {MAX_ADDRESSES} ports"])
        ports.update(dict.fromkeys(range(first, last + 1)))
    return list(ports)


def addresses(hosts: Sequence[str], ports: Sequence[int], urls: Sequence[str]) -> list[str]:
    """Base URLs to probe: every host x port, then the URLs given (``/v1`` taken off)."""
    bases = [f"http://{f'[{h}]' if ':' in h else h}:{p}" for h in hosts for p in ports]
    for url in urls:
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ConfigError([f"{url!r}: expected an http(s) URL such as http://127.0.0.1:8016"])
        if "@" in parsed.netloc:
            # Said without the URL: its user:password part would be echoed to the terminal.
            raise ConfigError(
                [
                    f"{parsed.hostname}: expected a URL without user:password@ "
                    "(keys belong in env vars: api_key_env)"
                ]
            )
        base = url.rstrip("/")
        bases.append(base.removesuffix("/v1"))
    if len(bases) > MAX_ADDRESSES:
        raise ConfigError([f"--hosts x --ports: {len(bases)} addresses; at most {MAX_ADDRESSES}"])
    return list(dict.fromkeys(bases))


async def _get_json(session: aiohttp.ClientSession, url: str) -> Any:
    """The JSON a GET answers, or None for any failure: a probe only asks whether it is there."""
    try:
        async with session.get(url, allow_redirects=False) as response:
            if response.status != 200:
                return None
            # The whole body (``read(n)`` gives what is buffered, which may be half of it).
            data = await read_at_most(response.content, _MAX_REPLY_BYTES + 1)
        if len(data) > _MAX_REPLY_BYTES:
            return None
        return json.loads(data)
    except (aiohttp.ClientError, OSError, TimeoutError, ValueError, RecursionError):
        return None


def _models(reply: Any) -> tuple[ServedModel, ...]:
    cards = reply.get("data") if isinstance(reply, dict) else None
    models: list[ServedModel] = []
    for card in cards if isinstance(cards, list) else []:
        if not isinstance(card, dict) or not isinstance(card.get("id"), str):
            continue
        length = card.get("max_model_len")
        root = card.get("root")
        shown = safe_text(card["id"])
        models.append(
            ServedModel(
                id=shown,
                usable=shown == card["id"],
                max_model_len=length if type(length) is int and length > 0 else None,
                root=safe_text(root) if isinstance(root, str) else None,
            )
        )
    return tuple(m for m in models if m.id)


async def _probe_one(
    session: aiohttp.ClientSession, slots: asyncio.Semaphore, url: str
) -> Found | None:
    async with slots:
        models = _models(await _get_json(session, f"{url}/v1/models"))
        if not models:
            return None
        version = await _get_json(session, f"{url}/version")
    text = version.get("version") if isinstance(version, dict) else None
    return Found(url, models, safe_text(text) if isinstance(text, str) else None)


async def probe(bases: Sequence[str], timeout_s: float = TIMEOUT_S) -> list[Found]:
    """The addresses that serve models, in the order given."""
    slots = asyncio.Semaphore(PROBES_AT_ONCE)
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    connector = aiohttp.TCPConnector(limit=PROBES_AT_ONCE)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        found = await asyncio.gather(*(_probe_one(session, slots, url) for url in bases))
    return [f for f in found if f is not None]


def _gpus(found: Sequence[Found]) -> tuple[dict[str, int], str | None]:
    """Base URL -> GPU index for endpoints served from this box; and why none, when NVML is
    missing. A port owner is only meaningful for a loopback address: elsewhere the same port
    number belongs to another machine's process."""
    local = [f for f in found if urlparse(f.url).hostname in _LOOPBACK]
    if not local:
        return {}, None
    try:
        source = NvmlSource.open()
    except TelemetryUnavailable as e:
        return {}, e.reason
    try:
        mapped: dict[str, int] = {}
        for f in local:
            endpoint = Endpoint(
                id="probe", label="", url=f.url, model="", gpu="auto", model_class="dense"
            )
            index = resolve_gpu(endpoint, source)
            if index is not None:
                mapped[f.url] = index
        return mapped, None
    finally:
        source.close()


def _draft(
    found: Found, first: ServedModel, gpu: int | None, nvml_missing: str | None
) -> EndpointDraft:
    notes: list[str] = []
    facts = [
        f"max_model_len {first.max_model_len}" if first.max_model_len else "",
        f"root {first.root}" if first.root and first.root != first.id else "",
        f"version {found.version}" if found.version else "",
    ]
    if any(facts):
        notes.append(", ".join(f for f in facts if f))
    if len(found.models) > 1:
        others = ", ".join([m.id for m in found.models if m is not first][: _MODELS_NOTED - 1])
        notes.append(f"also serves {others}: copy this table for each model to benchmark")
    if gpu is None:
        why = f"NVML: {nvml_missing}" if nvml_missing else "no GPU process owns this port here"
        notes.append(f"gpu not found ({safe_text(why)}); set the index if you know it")
    return EndpointDraft(
        id=an_id(first.id),
        label=first.id,
        url=found.url,
        model=first.id,
        gpu="auto" if gpu is None else gpu,
        notes=tuple(notes),
        class_guess=guess_class(first.id, first.root),
        max_model_len=first.max_model_len,
    )


def drafts_from_probe(
    bases: Sequence[str], described: str, named: Sequence[str] = ()
) -> tuple[list[EndpointDraft], list[str]]:
    """Probe ``bases`` and draft an endpoint for each that serves a model, with a line for each
    left out (a ``named`` base, one the user gave, that did not answer included); ConfigError
    (one line naming ``described``, what was probed) when none is left."""
    found = asyncio.run(probe(bases))
    if not found:
        raise ConfigError([f"{described}: no endpoint answered GET /v1/models with a model"])
    gpus, nvml_missing = _gpus(found)
    drafts: list[EndpointDraft] = []
    kept: list[Found] = []
    answered = {f.url for f in found}
    left_out = [
        f"{safe_text(base)}: left out; it did not answer GET /v1/models with a model"
        for base in named
        if base not in answered
    ]
    for f in found:
        first = next((m for m in f.models if m.usable), None)
        if first is None:
            # Written scrubbed, the id would name no model on the server: the run would fail.
            left_out.append(
                f"{f.url}: left out; its model id {f.models[0].id!r} holds control, escape "
                "or format characters (or is over 200 long)"
            )
            continue
        drafts.append(_draft(f, first, gpus.get(f.url), nvml_missing))
        kept.append(f)
    if not drafts:
        raise ConfigError([f"{described}: {left_out[0]}"])
    return settle(drafts, [f.url.rsplit(":", 1)[-1] for f in kept]), left_out

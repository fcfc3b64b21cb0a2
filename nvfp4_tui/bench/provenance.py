"""What a run measured: each endpoint's server, model, KV cache and GPU, and the differences
between two runs' configurations.

At run start ``probe_servers`` asks every endpoint, at once and briefly, for ``/version``,
``/v1/models`` and the ``cache_config_info`` labels of ``/metrics``; ``gpu_identities`` asks the
GPU sources what their cards are. ``configuration`` folds both into the manifest's
``configuration`` key. Every probe is bounded in time and size, and one that fails leaves its
field None: provenance never stops or delays a run by more than one timeout.

The reading half (``configuration_rows``, ``config_differences``) treats a manifest as
untrusted input (it may be someone else's snapshot): every value is shown through ``one_line``
and a manifest without ``configuration`` (an older run, an import) simply has nothing to say.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

import aiohttp

from nvfp4_tui.config.profile import Endpoint
from nvfp4_tui.core.events import EndpointConfig
from nvfp4_tui.core.outside_text import NO_SECRETS, Secrets, outside_line, secrets_of
from nvfp4_tui.core.plain_text import one_line
from nvfp4_tui.telemetry.exposition import NotPrometheusText
from nvfp4_tui.telemetry.prometheus import (
    CACHE_CONFIG_INFO,
    MAX_METRICS_BYTES,
    api_key,
    auth_headers,
    info_labels,
    read_at_most,
)
from nvfp4_tui.telemetry.source import DescribesGpus, GpuIdentity, GpuSource

PROBE_TIMEOUT_S = 2.0
# /version is a few bytes and /v1/models a few hundred per served model; past this, whatever
# answers is not the server we mean and its body is not worth keeping.
MAX_JSON_BYTES = 256 << 10
MAX_TEXT_CHARS = 200
MAX_LABELS = 32
_MAX_MODEL_LEN = 1 << 40

Config = dict[str, Any]  # one endpoint's entry in the manifest's ``configuration``


def profile_sha256(resolved: Mapping[str, Any]) -> str:
    """The hash of the profile as resolved (secrets are never in it), keys in a fixed order so
    the same profile always hashes alike."""
    text = json.dumps(resolved, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def clean_text(value: object, secrets: Secrets = NO_SECRETS) -> str | None:
    """A string from outside as it may be stored or shown: ``secrets`` and escapes out, one
    line, capped; None for anything else or nothing left."""
    if not isinstance(value, str):
        return None
    return outside_line(value, MAX_TEXT_CHARS, secrets) or None


async def probe_servers(
    endpoints: Sequence[Endpoint],
    http: aiohttp.ClientSession,
    *,
    timeout_s: float = PROBE_TIMEOUT_S,
    secrets: Secrets = NO_SECRETS,
) -> dict[str, Config]:
    """Each endpoint's server version, model root, context length and cache settings; all
    endpoints and all three requests at once, so the whole probe takes one timeout at most.
    What the servers say is scrubbed of the keys sent to them and ``secrets``."""
    secrets = secrets | secrets_of(*(api_key(e) for e in endpoints))
    found = await asyncio.gather(*(_probe(e, http, timeout_s, secrets) for e in endpoints))
    return {e.id: config for e, config in zip(endpoints, found, strict=True)}


async def _probe(
    endpoint: Endpoint, http: aiohttp.ClientSession, timeout_s: float, secrets: Secrets
) -> Config:
    version, models, metrics = await asyncio.gather(
        _get(http, endpoint, "/version", MAX_JSON_BYTES, timeout_s),
        _get(http, endpoint, "/v1/models", MAX_JSON_BYTES, timeout_s),
        _get(http, endpoint, "/metrics", MAX_METRICS_BYTES, timeout_s),
    )
    card = _model_card(_json(models), endpoint.model)
    return {
        "server_version": clean_text(_field(_json(version), "version"), secrets),
        "model_root": clean_text(_field(card, "root"), secrets),
        "max_model_len": _positive_int(_field(card, "max_model_len")),
        "cache_config": await _cache_config(metrics, secrets),
    }


async def _get(
    http: aiohttp.ClientSession, endpoint: Endpoint, path: str, limit: int, timeout_s: float
) -> str | None:
    """The body of a 200 answer, None for anything else (no answer, an error, too big)."""
    try:
        async with http.get(
            f"{endpoint.url}{path}",
            headers=auth_headers(endpoint),
            timeout=aiohttp.ClientTimeout(total=timeout_s),
            ssl=endpoint.verify_tls,
            allow_redirects=False,  # what an endpoint runs is read from its own host only
        ) as response:
            if response.status != 200:
                return None
            data = await read_at_most(response.content, limit + 1)
    except (aiohttp.ClientError, TimeoutError, OSError, ValueError):
        return None
    if len(data) > limit:
        return None
    # JSON and Prometheus text are UTF-8 by their specs; a charset a server names is not
    # trusted (one that is no text encoding, or none at all, made aiohttp raise).
    return data.decode("utf-8", errors="replace")


def _json(body: str | None) -> object:
    if body is None:
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: a body of 100,000 "["
        return None


def _field(body: object, key: str) -> object:
    return body.get(key) if isinstance(body, dict) else None


def _model_card(models: object, served: str) -> object:
    """The ``/v1/models`` entry of the model the run asks for; the only one when ids differ."""
    cards = _field(models, "data")
    if not isinstance(cards, list):
        return None
    mine = [c for c in cards if _field(c, "id") == served]
    if mine:
        return mine[0]
    return cards[0] if len(cards) == 1 else None


def _positive_int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < _MAX_MODEL_LEN:
        return value
    return None


def _label_int(value: object) -> int | None:
    """A Prometheus label's whole number ("16"), as a positive int."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 13:
        return _positive_int(int(value))
    return None


async def _cache_config(body: str | None, secrets: Secrets) -> dict[str, str] | None:
    if body is None:
        return None
    try:
        # A vLLM body is tens of kB: parse it off the loop, as the scraper does.
        labels = await asyncio.to_thread(info_labels, body, CACHE_CONFIG_INFO)
    except NotPrometheusText:
        return None
    if labels is None:
        return None
    kept: dict[str, str] = {}
    for name, value in sorted(labels.items())[:MAX_LABELS]:
        key, text = clean_text(name, secrets), clean_text(value, secrets)
        if key is not None and text is not None:
            kept[key] = text
    return kept


def gpu_identities(sources: Sequence[GpuSource]) -> dict[int, GpuIdentity]:
    """What each source says of its GPUs, by index (blocking: NVML and the simulator's HTTP);
    a source that cannot describe its GPUs, or fails to, adds nothing."""
    found: dict[int, GpuIdentity] = {}
    for source in sources:
        if not isinstance(source, DescribesGpus):
            continue
        # A source broken in a way its own code did not foresee must not stop the run.
        with contextlib.suppress(Exception):
            for identity in source.identities():
                found.setdefault(identity.gpu, identity)
    return found


def configuration(
    endpoints: Sequence[Endpoint],
    probed: Mapping[str, Config],
    gpus: Mapping[int, GpuIdentity],
) -> dict[str, Config]:
    """The manifest's ``configuration``: per endpoint id its label, its GPU index, what its
    server said and what its GPU is (None where unknown)."""
    body: dict[str, Config] = {}
    for endpoint in endpoints:
        index = endpoint.gpu if isinstance(endpoint.gpu, int) else None
        identity = gpus.get(index) if index is not None else None
        body[endpoint.id] = {
            "label": endpoint.label,
            "gpu": index,
            **probed.get(endpoint.id, {}),
            "gpu_identity": None if identity is None else _identity_fields(identity),
        }
    return body


def endpoint_configs(config: Mapping[str, Config]) -> tuple[EndpointConfig, ...]:
    """The ``configuration`` a run recorded, in brief for its RunStarted: what the views show."""

    def text(value: object) -> str | None:
        return value if isinstance(value, str) else None

    return tuple(
        EndpointConfig(
            endpoint_id=endpoint_id,
            server_version=text(entry.get("server_version")),
            model_root=text(entry.get("model_root")),
            max_model_len=_positive_int(entry.get("max_model_len")),
            kv_cache_dtype=text(_cache("cache_dtype")(entry)),
            kv_block_size=_label_int(_cache("block_size")(entry)),
            kv_blocks=_label_int(_cache("num_gpu_blocks")(entry)),
            gpu_name=text(_gpu("name")(entry)),
            driver_version=text(_gpu("driver_version")(entry)),
            cuda_driver_version=text(_gpu("cuda_driver_version")(entry)),
        )
        for endpoint_id, entry in config.items()
    )


def _identity_fields(identity: GpuIdentity) -> dict[str, Any]:
    fields = asdict(identity)
    del fields["gpu"]  # the entry's own ``gpu``
    for key in ("name", "uuid", "driver_version", "cuda_driver_version"):
        fields[key] = clean_text(fields[key])
    return fields


# ---- reading a manifest


def _entries(manifest: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    config = manifest.get("configuration")
    if not isinstance(config, dict):
        return {}
    return {str(k): v for k, v in config.items() if isinstance(v, dict)}


def _shown(value: object) -> str | None:
    """A stored value as text, or None; anything but a string or a finite number is unknown."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:g}" if math.isfinite(value) else None
    return clean_text(value)


def _cache(key: str) -> Callable[[Mapping[str, Any]], object]:
    return lambda entry: _field(entry.get("cache_config"), key)


def _gpu(key: str) -> Callable[[Mapping[str, Any]], object]:
    return lambda entry: _field(entry.get("gpu_identity"), key)


# What ``config_differences`` compares, in the order it lists them, by the name it shows.
COMPARED: tuple[tuple[str, Callable[[Mapping[str, Any]], object]], ...] = (
    ("server_version", lambda e: e.get("server_version")),
    ("model_root", lambda e: e.get("model_root")),
    ("max_model_len", lambda e: e.get("max_model_len")),
    ("kv_cache_dtype", _cache("cache_dtype")),
    ("block_size", _cache("block_size")),
    ("gpu_memory_utilization", _cache("gpu_memory_utilization")),
    ("num_gpu_blocks", _cache("num_gpu_blocks")),  # the cache's capacity: what the two above set
    ("gpu_name", _gpu("name")),
    ("driver_version", _gpu("driver_version")),
    ("cuda_driver_version", _gpu("cuda_driver_version")),
    ("power_limit_w", _gpu("power_limit_w")),
    ("max_sm_clock_mhz", _gpu("max_sm_clock_mhz")),
    ("max_mem_clock_mhz", _gpu("max_mem_clock_mhz")),
)


def _is_index(gpu: object) -> bool:
    return isinstance(gpu, int) and not isinstance(gpu, bool)


def _where(endpoint_id: str, entry: Mapping[str, Any]) -> str:
    label = _shown(entry.get("label")) or one_line(endpoint_id)
    gpu = entry.get("gpu")
    return f"GPU {gpu} ({label})" if _is_index(gpu) else label


def _pairs(
    a: dict[str, Mapping[str, Any]], b: dict[str, Mapping[str, Any]]
) -> list[tuple[str, Mapping[str, Any], Mapping[str, Any]]]:
    """Entries matched by endpoint id, then by label, as compare matches endpoints."""
    pairs = [(k, a[k], b[k]) for k in a if k in b]
    b_by_label = {_shown(v.get("label")): v for k, v in b.items() if k not in a}
    for k, entry in a.items():
        other = b_by_label.pop(_shown(entry.get("label")), None) if k not in b else None
        if other is not None:
            pairs.append((k, entry, other))
    return pairs


def config_differences(a_manifest: Mapping[str, Any], b_manifest: Mapping[str, Any]) -> list[str]:
    """One line per change of a setting between run A and run B, and where: ``kv_cache_dtype:
    fp8 → auto on GPU 3 (qwen3.5)``, or ``… on GPU 0,1,2`` when several endpoints changed alike.
    A setting unknown on either side is not a difference."""
    lines = []
    a_versions, b_versions = a_manifest.get("versions"), b_manifest.get("versions")
    for key in ("nvfp4_tui", "python"):
        x, y = _shown(_field(a_versions, key)), _shown(_field(b_versions, key))
        if x is not None and y is not None and x != y:
            lines.append(f"{key}: {x} → {y} (client)")
    places: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}  # the change -> where, in order
    for endpoint_id, a, b in _pairs(_entries(a_manifest), _entries(b_manifest)):
        for name, read in COMPARED:
            x, y = _shown(read(a)), _shown(read(b))
            if x is not None and y is not None and x != y:
                places.setdefault(f"{name}: {x} → {y}", []).append((endpoint_id, b))
    for change, where in places.items():
        if len(where) == 1:
            lines.append(f"{change} on {_where(*where[0])}")
            continue
        gpus = sorted(e["gpu"] for _, e in where if _is_index(e.get("gpu")))
        named = [_where(i, e) for i, e in where if not _is_index(e.get("gpu"))]
        lines.append(
            f"{change} on "
            + ", ".join([*(["GPU " + ",".join(map(str, gpus))] if gpus else []), *named])
        )
    return lines


CONFIGURATION_HEADERS = [
    "endpoint",
    "GPU",
    "server",
    "model root",
    "max len",
    "KV cache",
    "GPU name",
    "driver",
]


def configuration_rows(manifest: Mapping[str, Any]) -> list[list[str]]:
    """The report's Configuration table, a row per endpoint ("—" where unknown); [] for a
    manifest that recorded none."""
    rows = []
    # By GPU, as the panes are (the manifest's JSON keeps its keys sorted by id).
    by_gpu = sorted(
        _entries(manifest).items(),
        key=lambda item: (not isinstance(item[1].get("gpu"), int), item[1].get("gpu") or 0),
    )
    for endpoint_id, entry in by_gpu:
        driver = _shown(_gpu("driver_version")(entry))
        cuda = _shown(_gpu("cuda_driver_version")(entry))
        if driver is not None and cuda is not None:
            driver = f"{driver} (CUDA {cuda})"
        cells = [
            _shown(entry.get("label")) or one_line(endpoint_id),
            _shown(entry.get("gpu")),
            _shown(entry.get("server_version")),
            _shown(entry.get("model_root")),
            _shown(entry.get("max_model_len")),
            _shown(_cache("cache_dtype")(entry)),
            _shown(_gpu("name")(entry)),
            driver,
        ]
        rows.append([c if c is not None else "—" for c in cells])
    return rows

"""``init --from-compose``: one endpoint draft per service of a docker-compose file.

A service is read the way the seed's vLLM services are written: the port from ``PORT`` (or
``--port``) and its published mapping, the GPU from ``NVIDIA_VISIBLE_DEVICES`` (or
``CUDA_VISIBLE_DEVICES``, or ``deploy.resources.reservations.devices[].device_ids``), and the
served name, context, batch cap and KV cache dtype from the environment or the command line.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import NoReturn

import yaml

from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.profile_init.draft import EndpointDraft, an_id, is_count, safe_text, settle
from nvfp4_tui.profile_init.model_class import guess_class

_MAX_COMPOSE_BYTES = 4 * 1024 * 1024
# Values a compose file may hold once its aliases are written out: thousands for a large fleet.
_MAX_YAML_NODES = 200_000

# Compose's interpolation of a host variable: $NAME, ${NAME}, ${NAME:-default}, ${NAME?error}.
_ENV_REFERENCE = re.compile(
    r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?:[:?-][^}]*)?\})"
)

YamlValue = str | list["YamlValue"] | dict[str, "YamlValue"] | None


# Signs that a service runs vLLM, besides a model path: its own flags and variables.
_VLLM_FLAGS = (
    "--served-model-name",
    "--kv-cache-dtype",
    "--max-model-len",
    "--max-num-seqs",
    "--gpu-memory-utilization",
    "--tensor-parallel-size",
)


@dataclass(frozen=True, slots=True)
class ComposeFleet:
    drafts: tuple[EndpointDraft, ...]
    max_num_seqs: int | None  # the smallest cap among the services, where any says
    skipped: tuple[str, ...] = ()  # a line for each service that is no model server


class _Service:
    """One service's settings, and the key path to name when one is wrong."""

    def __init__(self, path: Path, name: str, raw: YamlValue) -> None:
        self.path, self.name = path, name
        self.key = f"services.{safe_text(name)}"
        if not isinstance(raw, dict):
            self.fail("", "expected a mapping of service settings")
        self.raw: dict[str, YamlValue] = raw
        self.env = self._environment()
        self.args = self._command()

    def fail(self, key: str, message: str) -> NoReturn:
        raise ConfigError([f"{self.path}: {self.key}{key}: {message}"])

    def _environment(self) -> dict[str, str]:
        raw = self.raw.get("environment")
        if raw is None:
            return {}
        if isinstance(raw, dict):
            return {k: "" if v is None else str(v) for k, v in raw.items()}
        if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
            self.fail(".environment", "expected a list of NAME=value or a mapping")
        pairs = (str(item).partition("=") for item in raw)
        return {name: value for name, _, value in pairs}

    def _command(self) -> list[str]:
        raw = self.raw.get("command")
        if raw is None:
            return []
        if isinstance(raw, str):
            try:
                return shlex.split(raw)
            except ValueError as e:
                self.fail(".command", f"cannot split into arguments: {e}")
        if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
            self.fail(".command", "expected a string or a list of strings")
        return [str(item) for item in raw]

    def flag(self, name: str) -> str | None:
        """The value of ``--name V`` or ``--name=V`` in the command."""
        for i, arg in enumerate(self.args):
            if arg == name and i + 1 < len(self.args):
                return self.args[i + 1]
            if arg.startswith(name + "="):
                return arg[len(name) + 1 :]
        return None

    def setting(self, env: str, flag: str) -> tuple[str, str] | None:
        """A setting from the command line (which wins, as in vLLM) or the environment, with
        the key to name in a message."""
        value = self.flag(flag)
        if value is not None:
            return value, f".command {flag}"
        if env in self.env:
            return self.env[env], f".environment.{env}"
        return None

    def number(self, env: str, flag: str, minimum: int = 1, maximum: int = 1 << 31) -> int | None:
        found = self.setting(env, flag)
        if found is None:
            return None
        value, key = found
        if not (is_count(value.strip()) and minimum <= int(value) <= maximum):
            self.fail(key, f"expected an integer from {minimum} to {maximum}, got {value!r}")
        return int(value)

    def host_port(self) -> int:
        container = self.number("PORT", "--port", 1, 65535)
        published = self._published()
        if container is not None:
            # Without a mapping for it the service shares the host's network (network_mode: host).
            return published.get(container, container)
        if len(published) == 1:
            return next(iter(published.values()))
        self.fail(
            ".environment.PORT",
            "missing; expected PORT, --port in the command, or one ports mapping",
        )

    def _published(self) -> dict[int, int]:
        """Container port -> host port, from ``ports`` in its short or long form."""
        raw = self.raw.get("ports") or []
        if not isinstance(raw, list):
            self.fail(".ports", 'expected a list such as ["8016:8016"]')
        mapping: dict[int, int] = {}
        for i, entry in enumerate(raw):
            if isinstance(entry, dict):
                target, host = entry.get("target"), entry.get("published", entry.get("target"))
            else:
                # "HOST:CONTAINER", "IP:HOST:CONTAINER" or "CONTAINER", each maybe "/tcp".
                parts = str(entry).split("/")[0].split(":")
                target, host = parts[-1], parts[-2] if len(parts) > 1 else parts[-1]
            if not (is_count(str(target)) and is_count(str(host))):
                self.fail(f".ports[{i}]", f"expected HOST:CONTAINER port numbers, got {entry!r}")
            mapping[int(str(target))] = int(str(host))
        return mapping

    def gpus(self) -> list[str]:
        for env in ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
            if env in self.env:
                return [g.strip() for g in self.env[env].split(",") if g.strip()]
        deploy = self.raw.get("deploy")
        resources = deploy.get("resources") if isinstance(deploy, dict) else None
        reservations = resources.get("reservations") if isinstance(resources, dict) else None
        devices = reservations.get("devices") if isinstance(reservations, dict) else None
        for device in devices if isinstance(devices, list) else []:
            ids = device.get("device_ids") if isinstance(device, dict) else None
            if isinstance(ids, list):
                return [str(g) for g in ids]
        return []

    def model_path(self) -> str | None:
        if "MODEL_PATH" in self.env:
            return self.env["MODEL_PATH"]
        if "serve" in self.args[:-1]:  # `vllm serve MODEL ...`
            return self.args[self.args.index("serve") + 1]
        return self.flag("--model")

    def serves_a_model(self) -> bool:
        """Whether this looks like a vLLM server: a model path, a vLLM image, entrypoint or
        command, or vLLM's own flags or variables (a Prometheus or nginx has none of them)."""
        if self.model_path() is not None or "SERVED_MODEL_NAME" in self.env:
            return True
        if any(name.startswith("VLLM_") for name in self.env):
            return True
        if any(arg.split("=")[0] in _VLLM_FLAGS for arg in self.args):
            return True
        named = [self.raw.get("image"), self.raw.get("entrypoint"), *self.args]
        return "vllm" in " ".join(str(x) for x in named if x is not None).lower()

    def mounted_from(self, container_path: str) -> str | None:
        """The host folder a volume mounts at ``container_path``: it names the model."""
        for volume in self.raw.get("volumes") or []:
            if isinstance(volume, str):
                source, _, rest = volume.partition(":")
                if rest.split(":")[0].rstrip("/") == container_path.rstrip("/"):
                    return source
        return None


def _gpu(service: _Service, notes: list[str]) -> int | str:
    gpus = service.gpus()
    if len(gpus) == 1 and is_count(gpus[0]):
        return int(gpus[0])
    if len(gpus) == 1 and gpus[0].startswith(("GPU-", "MIG-")):
        return safe_text(gpus[0])
    if len(gpus) > 1:
        # One pane per endpoint shows one GPU; tensor-parallel peers are noted, not shown.
        notes.append(f"serves from GPUs {safe_text(','.join(gpus))}; the profile names the first")
        first = gpus[0]
        return int(first) if is_count(first) else "auto"
    return "auto"


def _api_key(service: _Service) -> tuple[str | None, bool]:
    """The variable a client on this host can read the server's key from, and whether the
    server wants one. ``--api-key ${NAME}`` (or ``VLLM_API_KEY: $NAME``) is read by compose from
    the host's environment, as is a ``VLLM_API_KEY`` passed on without a value; a key written in
    the file itself is in no variable, and the profile never holds a key."""
    found = service.setting("VLLM_API_KEY", "--api-key")
    if found is None:
        return None, False
    value, key = found
    if value == "" and key.startswith(".environment"):
        return "VLLM_API_KEY", True
    reference = _ENV_REFERENCE.fullmatch(value.strip())
    return (reference.group(1) or reference.group(2) if reference else None), True


def _draft(service: _Service) -> tuple[EndpointDraft, int | None]:
    port = service.host_port()
    model_path = service.model_path()
    served = service.setting("SERVED_MODEL_NAME", "--served-model-name")
    if served is not None:
        # vLLM takes several names after the flag; requests may use the first.
        model, model_note = (served[0].split() or [""])[0], None
    elif model_path:
        # What the seed's image serves (the folder's name); vLLM's own default is the path
        # as given. `nvfp4-tui init --ports PORT` reads the real one from a running server.
        model = PurePosixPath(model_path).name or model_path
        model_note = "the model path's last part; GET /v1/models tells for sure"
    else:
        service.fail(".environment.MODEL_PATH", "missing; expected MODEL_PATH, --model or serve")
    if not safe_text(model):
        service.fail(".environment.MODEL_PATH", "expected a model name, got an empty one")
    source = service.mounted_from(model_path) if model_path else None
    label = PurePosixPath(source).name if source else model
    notes = [
        f"service {safe_text(service.name)}" + (f", weights {safe_text(source)}" if source else "")
    ]
    max_len = service.number("MAX_MODEL_LEN", "--max-model-len")
    kv = service.setting("KV_CACHE_DTYPE", "--kv-cache-dtype")
    facts = [f"max_model_len {max_len}" if max_len else "", f"KV cache {kv[0]}" if kv else ""]
    if any(facts):
        notes.append(", ".join(safe_text(f) for f in facts if f))
    max_num_seqs = service.number("MAX_NUM_SEQS", "--max-num-seqs")
    if max_num_seqs is not None:
        notes.append(
            f"max_num_seqs {max_num_seqs}: requests at once; no profile key holds a cap per "
            "endpoint, so [run] concurrency stays within the smallest"
        )
    gpu = _gpu(service, notes)
    key_env, keyed = _api_key(service)
    draft = EndpointDraft(
        id=an_id(safe_text(service.name)),
        label=safe_text(label),
        url=f"http://127.0.0.1:{port}",
        model=safe_text(model),
        gpu=gpu,
        notes=tuple(notes),
        api_key_env=key_env,
        model_note=model_note,
        wants_api_key=keyed,
        class_guess=guess_class(label, model_path, model),
        max_model_len=max_len,
    )
    return draft, max_num_seqs


def _read(path: Path) -> YamlValue:
    try:
        if path.stat().st_size > _MAX_COMPOSE_BYTES:
            raise ConfigError([f"{path}: larger than {_MAX_COMPOSE_BYTES >> 20} MiB"])
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([f"{path}: file not found"]) from None
    except IsADirectoryError:
        raise ConfigError([f"{path}: expected a compose file, got a directory"]) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError([f"{path}: cannot read: {e}"]) from None
    try:
        document = yaml.safe_load(text)
    except RecursionError:
        raise ConfigError([f"{path}: nested too deeply to be a compose file"]) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        raise ConfigError([f"{path}: {where}{safe_text(problem)}"]) from None
    try:
        return _as_strings(document, [_MAX_YAML_NODES])
    except RecursionError:
        raise ConfigError(
            [
                f"{path}: too large or too deeply nested, once its aliases are written out, to be a compose file"
            ]
        ) from None


def _as_strings(value: object, budget: list[int]) -> YamlValue:
    """The document with every scalar as compose wrote it, a string (``PORT: 8016`` and
    ``PORT: "8016"`` read alike). Anchors are shared objects in PyYAML; written out here they
    multiply, so a file of nested aliases (a "billion laughs") stops at a node budget."""
    budget[0] -= 1
    if budget[0] < 0:
        raise RecursionError  # too big to be a compose file, whichever way it got big
    if isinstance(value, dict):
        return {str(k): _as_strings(v, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_strings(v, budget) for v in value]
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_compose(path: Path) -> ComposeFleet:
    """The endpoints of ``path``'s services; ConfigError (one line) on anything unreadable."""
    root = _read(path)
    services = root.get("services") if isinstance(root, dict) else None
    if not isinstance(services, dict) or not services:
        raise ConfigError([f"{path}: services: missing; expected a mapping of services"])
    read = [_Service(path, str(name), raw) for name, raw in services.items()]
    skipped = tuple(
        f"{s.key}: skipped; no model path, vLLM image or vLLM command: not a model server"
        for s in read
        if not s.serves_a_model()
    )
    drafted = [_draft(service) for service in read if service.serves_a_model()]
    if not drafted:
        raise ConfigError([f"{path}: services: none serves a model; {skipped[0]}"])
    drafts = [draft for draft, _ in drafted]
    ports = [draft.url.rsplit(":", 1)[1] for draft in drafts]
    caps = [cap for _, cap in drafted if cap is not None]
    return ComposeFleet(
        drafts=tuple(settle(drafts, ports)),
        max_num_seqs=min(caps) if caps else None,
        skipped=skipped,
    )

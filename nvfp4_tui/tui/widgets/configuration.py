"""ConfigurationBlock: what the servers and GPUs said of themselves at run start, in a line or
few, and the read-out it draws (``configuration_lines``, a pure function of the state, tested
without an app). A setting every endpoint shares is said once; one that differs says where."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static

from nvfp4_tui.core.events import EndpointConfig
from nvfp4_tui.core.plain_text import one_line
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui import units


def _gpu_name(config: EndpointConfig) -> str | None:
    name = config.gpu_name
    return name.removeprefix("NVIDIA ") if name else None


def _driver(config: EndpointConfig) -> str | None:
    driver, cuda = config.driver_version, config.cuda_driver_version
    return f"{driver} (CUDA {cuda})" if driver and cuda else driver


SETTINGS: tuple[tuple[str, Callable[[EndpointConfig], str | None]], ...] = (
    ("server", lambda c: c.server_version),
    ("KV cache", lambda c: c.kv_cache_dtype),
    ("GPU", _gpu_name),
    ("driver", _driver),
)


@dataclass(frozen=True, slots=True)
class SettingLine:
    name: str
    text: str  # the value, or each value and where: ``fp8 on GPU 0,1 · auto on GPU 2``
    shared: bool  # every endpoint's is the same


def configuration_lines(state: FleetState, labels: dict[str, str]) -> list[SettingLine]:
    """A line per setting some endpoint reported, in the order of ``SETTINGS``; empty for a
    run that recorded no configuration."""
    if not state.configuration:
        return []
    lines = []
    for name, read in SETTINGS:
        where: dict[str, list[int | str]] = {}  # value -> GPU indexes, or labels where none
        for endpoint_id, endpoint in state.endpoints.items():
            config = state.configuration.get(endpoint_id)
            value = read(config) if config is not None else None
            text = one_line(value) if value else units.DASH
            gpu = endpoint.info.gpu
            place = gpu if gpu is not None else one_line(labels.get(endpoint_id, endpoint_id))
            where.setdefault(text, []).append(place)
        if set(where) == {units.DASH}:
            continue  # nobody said: nothing to show
        if len(where) == 1:
            lines.append(SettingLine(name, next(iter(where)), shared=True))
            continue
        groups = [f"{value} on {_places(places)}" for value, places in where.items()]
        lines.append(SettingLine(name, " · ".join(groups), shared=False))
    return lines


def _places(places: list[int | str]) -> str:
    """``GPU 0,1``, then the labels of endpoints on no known GPU: ``GPU 1, C``."""
    gpus = [str(p) for p in places if isinstance(p, int)]
    named = [p for p in places if isinstance(p, str)]
    return ", ".join([*(["GPU " + ",".join(gpus)] if gpus else []), *named])


class ConfigurationBlock(Static):
    """Hidden until the run says what it ran on; redrawn only when that changed."""

    DEFAULT_CSS = """
    ConfigurationBlock {
        height: auto;
        max-height: 4;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._key: Hashable | None = None

    def show(self, state: FleetState, labels: dict[str, str]) -> None:
        lines = configuration_lines(state, labels)
        key = tuple(lines)
        if key == self._key:
            return
        self._key = key
        self.display = bool(lines)
        rows = []
        shared = [line for line in lines if line.shared]
        if shared:
            parts: list[str | tuple[str, str]] = [("ran on  ", "$text-muted")]
            for index, line in enumerate(shared):
                if index:
                    parts.append(("  ·  ", "$text-muted"))
                parts += [(f"{line.name} ", "$text-muted"), (line.text, "bold")]
            rows.append(Content.assemble(*parts))
        for line in lines:
            if not line.shared:
                rows.append(Content.assemble((f"{line.name} differs  ", "$warning"), line.text))
        self.update(Content("\n").join(rows))

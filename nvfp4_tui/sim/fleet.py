"""A fleet of simulated endpoints on loopback, in-process (``SimFleet``) or as a CLI server.

``SimFleet`` serves every endpoint that has a ``[sim]`` table, each on its own port; endpoints
without one are left alone. ``serve_forever`` is the blocking form behind
``python -m nvfp4_tui.sim`` and ``nvfp4-tui sim``: it prints where each endpoint listens and
runs until SIGINT or SIGTERM (or, when asked, until its stdin closes: the parent is gone).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Sequence
from types import TracebackType
from urllib.parse import urlparse

from nvfp4_tui.config.profile import Endpoint, FaultSpec, Profile
from nvfp4_tui.sim.dataset_answers import AnswerKey, answer_key, dataset_suites
from nvfp4_tui.sim.load import DEFAULT_MAX_NUM_SEQS
from nvfp4_tui.sim.server import SimEndpoint
from nvfp4_tui.sim.timer import new_punctual_loop


class SimFleet:
    """Serve simulated endpoints while the ``async with`` block runs.

    Ports: ``port_base`` + i for the i-th simulated endpoint; ``None`` or 0 lets the OS choose;
    ``profile_ports=True`` takes each endpoint's port from its profile URL instead.
    ``answer_key``: the right and wrong answers to dataset suites' prompts (``dataset_answers``).
    """

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        *,
        time_scale: float = 1.0,
        port_base: int | None = None,
        host: str = "127.0.0.1",
        profile_ports: bool = False,
        max_num_seqs: int = DEFAULT_MAX_NUM_SEQS,
        answer_key: AnswerKey | None = None,
    ) -> None:
        self._all = tuple(endpoints)
        self._host = host
        self._port_base = port_base
        self._profile_ports = profile_ports
        self.servers: dict[str, SimEndpoint] = {}
        simulated = [e for e in self._all if e.sim is not None]
        for position, endpoint in enumerate(simulated):
            gpu = endpoint.gpu if isinstance(endpoint.gpu, int) else position
            self.servers[endpoint.id] = SimEndpoint(
                endpoint,
                gpu_index=gpu,
                time_scale=time_scale,
                max_num_seqs=max_num_seqs,
                peers=self.servers,
                answer_key=answer_key,
            )

    def _port(self, position: int, endpoint: Endpoint) -> int:
        if self._profile_ports:
            return urlparse(endpoint.url).port or 80
        return self._port_base + position if self._port_base else 0

    async def __aenter__(self) -> SimFleet:
        try:
            for position, server in enumerate(self.servers.values()):
                server.bind(self._host, self._port(position, server.endpoint))
            for server in self.servers.values():
                await server.start()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for server in self.servers.values():
            await server.close()

    @property
    def urls(self) -> dict[str, str]:
        """Endpoint id -> base URL (no ``/v1``), for every simulated endpoint."""
        return {endpoint_id: server.url for endpoint_id, server in self.servers.items()}

    @property
    def endpoints(self) -> tuple[Endpoint, ...]:
        """All the endpoints given, the simulated ones rewritten with their real URLs."""
        urls = self.urls
        return tuple(e.with_url(urls[e.id]) if e.id in urls else e for e in self._all)

    async def set_faults(self, endpoint_id: str, faults: FaultSpec) -> None:
        await self.servers[endpoint_id].set_faults(faults)


def _ready_lines(fleet: SimFleet, json_lines: bool) -> list[str]:
    servers = list(fleet.servers.values())
    if json_lines:
        lines = [
            json.dumps({"id": s.endpoint.id, "url": s.url, "down": not s.listening})
            for s in servers
        ]
        return [*lines, json.dumps({"ready": True})]
    id_width = max((len(s.endpoint.id) for s in servers), default=0)
    label_width = max((len(s.endpoint.label) for s in servers), default=0)
    return [
        f"{s.endpoint.id:<{id_width}}  {s.endpoint.label:<{label_width}}  {s.url}"
        + ("" if s.listening else "  (down)")
        for s in servers
    ]


async def _serve(
    profile: Profile,
    port_base: int | None,
    time_scale: float,
    json_lines: bool,
    stop_on_stdin_eof: bool,
) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    if stop_on_stdin_eof:
        stdin = sys.stdin.fileno()

        def on_stdin() -> None:
            if not os.read(stdin, 4096):
                loop.remove_reader(stdin)
                stop.set()

        loop.add_reader(stdin, on_stdin)
    fleet = SimFleet(
        profile.endpoints,
        time_scale=time_scale,
        port_base=port_base,
        profile_ports=port_base is None,
        answer_key=answer_key(dataset_suites(profile)),
    )
    async with fleet:
        for line in _ready_lines(fleet, json_lines):
            print(line)
        sys.stdout.flush()
        await stop.wait()


def serve_forever(
    profile: Profile,
    *,
    port_base: int | None,
    time_scale: float = 1.0,
    json_lines: bool = False,
    stop_on_stdin_eof: bool = False,
) -> int:
    """Serve the profile's simulated endpoints until SIGINT/SIGTERM; returns the exit code.

    ``port_base`` None serves each endpoint on its profile URL's port; 0 lets the OS choose.
    """
    if not any(e.sim is not None for e in profile.endpoints):
        print(f"{profile.path}: no endpoint has a [endpoint.sim] table", file=sys.stderr)
        return 2
    try:
        with asyncio.Runner(loop_factory=new_punctual_loop) as runner:
            runner.run(_serve(profile, port_base, time_scale, json_lines, stop_on_stdin_eof))
    except OSError as e:
        print(f"{profile.path}: cannot serve the simulated fleet: {e}", file=sys.stderr)
        return 1
    return 0

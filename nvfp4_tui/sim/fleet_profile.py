"""A profile for a simulated lab fleet: N nodes of M GPUs, one simulated endpoint per GPU.

``nvfp4-tui sim --write-profile FILE --nodes 8 --gpus-per-node 8`` writes it; ``nvfp4-tui sim
FILE`` then serves all its endpoints from one process (a port each), and ``nvfp4-tui demo
--profile FILE`` runs it. Every endpoint names its ``node``, and its ``gpu`` is its index on that
node, as on real hosts. The speeds repeat a small lineup of the demo's models, so a fleet has
fast and slow cards on every node.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_NODES = 8
DEFAULT_GPUS_PER_NODE = 8
DEFAULT_PORT_BASE = 19000
MAX_FLEET_ENDPOINTS = 1024


@dataclass(frozen=True)
class _Model:
    label: str
    model_class: str
    decode_tps: float
    ttft_s: float
    vram_used_mib: int


# Speeds of the demo fleet's cards (the seed's measurements), dealt round the GPUs of a node.
_LINEUP = (
    _Model("Qwen3.6-35B-A3B", "moe", 144.0, 0.12, 92316),
    _Model("RedHatAI Gemma4-26B-A4B", "moe", 130.0, 0.11, 92862),
    _Model("Qwen3-32B dense", "dense", 52.0, 0.20, 90140),
    _Model("Llama-3.3-70B dense", "dense", 27.0, 0.35, 93380),
)


def node_name(node: int) -> str:
    return f"sim-node-{node + 1:02d}"


def fleet_profile_text(
    nodes: int = DEFAULT_NODES,
    gpus_per_node: int = DEFAULT_GPUS_PER_NODE,
    *,
    port_base: int = DEFAULT_PORT_BASE,
    suites: tuple[str, ...] = ("english",),
    duration_s: float = 10.0,
    concurrency: int = 4,
) -> str:
    """The profile's TOML: ``nodes`` x ``gpus_per_node`` simulated endpoints, ports from
    ``port_base`` up (where ``nvfp4-tui sim FILE`` serves them; ``demo`` picks free ones)."""
    if nodes < 1 or gpus_per_node < 1 or nodes * gpus_per_node > MAX_FLEET_ENDPOINTS:
        raise ValueError(
            f"expected 1 to {MAX_FLEET_ENDPOINTS} endpoints in all, got {nodes} x {gpus_per_node}"
        )
    suite_list = ", ".join(f'"{s}"' for s in suites)
    lines = [
        f"# A simulated fleet: {nodes} nodes x {gpus_per_node} GPUs, one endpoint per GPU.",
        "# Written by `nvfp4-tui sim --write-profile`; serve it with `nvfp4-tui sim FILE`,",
        "# or run it with `nvfp4-tui demo --profile FILE --workers N`.",
        "[run]",
        f'name = "sim-fleet-{nodes}x{gpus_per_node}"',
        f"suites = [{suite_list}]",
        f"concurrency = [{concurrency}]",
        f"duration_s = {duration_s:g}",
        "max_tokens = 1024",
        "timeout_s = 300",
        "",
    ]
    for node in range(nodes):
        for gpu in range(gpus_per_node):
            number = node * gpus_per_node + gpu
            model = _LINEUP[gpu % len(_LINEUP)]
            lines += [
                "[[endpoint]]",
                f'id = "n{node + 1:02d}g{gpu}"',
                f'label = "{model.label} n{node + 1:02d}/{gpu}"',
                f'url = "http://127.0.0.1:{port_base + number}"',
                f'node = "{node_name(node)}"',
                'model = "current"',
                f"gpu = {gpu}",
                f'class = "{model.model_class}"',
                "",
                "[endpoint.sim]",
                f"decode_tps = {model.decode_tps:g}",
                f"ttft_s = {model.ttft_s:g}",
                f"vram_used_mib = {model.vram_used_mib}",
                f"seed = {number}",
                "",
            ]
    return "\n".join(lines)

"""Real servers: the client's TTFT and E2E against the wire's, per server and load level.

A timestamping proxy (``tests/support/wire_tap.py``) sits between ``nvfp4-tui run`` and each real
server (vLLM's CPU build, ``transformers serve``) serving the tiny random model of the
real-server stage; each row is paired with its exchange on the wire, and client − wire TTFT and
E2E (p50, p95, max) are what the client adds on its side of the socket: its event loop, its
parsing, the scheduling of a busy machine. Measured, not asserted.

Usage: ``python benchmarks/real_server.py [--quick]`` with the servers' venvs that
``bash .ci/real_servers`` installs (or ``NVFP4_REAL_VLLM_PYTHON`` and
``NVFP4_REAL_TRANSFORMERS_PYTHON`` naming other ones); without them it says so and writes
nothing. ``--vllm-url``/``--transformers-url`` measure servers already running instead.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import harness
import polars as pl
from harness import Target

sys.path.insert(0, str(harness.REPO_ROOT))  # the stage's servers, tiny model and wire tap

from nvfp4_tui.core.events import ProbeFinished
from nvfp4_tui.core.stats import percentile
from tests.real_servers import servers, tiny_model, tool
from tests.support.wire_tap import Exchange, WireTap

NAME = "real_server"
CHAT = "/v1/chat/completions"
MS = 1000.0


@dataclass(frozen=True)
class Settings:
    levels: tuple[int, ...] = (1, 4)
    requests: int = 10  # per prompt per level, over the english suite's 3 prompts
    max_tokens: int = 64


QUICK = Settings(requests=2)


def pair(
    rows: pl.DataFrame, exchanges: list[Exchange], probes: list[ProbeFinished]
) -> list[tuple[dict[str, Any], Exchange]]:
    """Each row with its exchange on the wire: the one with the same prompt token count whose
    request arrived nearest the row's send time (the probes' exchanges taken out first)."""
    free = list(exchanges)

    def take(sent_t: float, tokens_in: int | None) -> Exchange:
        same = [e for e in free if tokens_in is None or e.prompt_tokens == tokens_in] or free
        if not same:
            raise ValueError("more rows and probes than exchanges on the wire")
        chosen = min(same, key=lambda e: abs(e.request_at - sent_t))
        free.remove(chosen)
        return chosen

    for probe in probes:
        take(probe.t, probe.tokens_in)
    return [(row, take(row["t"], row["tokens_in"])) for row in rows.sort("t").iter_rows(named=True)]


def _spread(values: list[float]) -> dict[str, float | None]:
    return {
        "p50_ms": _ms(percentile(values, 50)),
        "p95_ms": _ms(percentile(values, 95)),
        "max_ms": _ms(max(values) if values else None),
        "n": len(values),
    }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * MS, 2)


def differences(pairs: list[tuple[dict[str, Any], Exchange]]) -> list[dict[str, Any]]:
    """client − wire TTFT and E2E per load level."""
    levels: dict[int, list[tuple[dict[str, Any], Exchange]]] = {}
    for row, wire in pairs:
        levels.setdefault(row["concurrency"], []).append((row, wire))
    out = []
    for level, chosen in sorted(levels.items()):
        ttft = [r["ttft_s"] - w.ttft_s for r, w in chosen if r["ttft_s"] is not None and w.ttft_s]
        e2e = [r["e2e_s"] - w.e2e_s for r, w in chosen if r["e2e_s"] is not None and w.e2e_s]
        out.append({"concurrency": level, "ttft": _spread(ttft), "e2e": _spread(e2e)})
    return out


def measure(name: str, port: int, model: str, settings: Settings, work: Path) -> dict[str, Any]:
    """One run through the tap in front of ``port``, and its client − wire differences."""
    with WireTap(port) as tap:
        profile = tool.write_profile(
            work / f"{name}.toml",
            tap.url,
            suites=["english"],
            concurrency=list(settings.levels),
            requests=settings.requests,
            max_tokens=settings.max_tokens,
            model=model,
        )
        ran = tool.run(profile, work / f"{name}-out")
        exchanges = tap.exchanges(CHAT)
    rows = ran.snapshot.requests()
    return {
        "server": name,
        "exit_code": ran.returncode,
        "rows": rows.height,
        "errors": rows.filter(pl.col("status") == "error").height,
        "levels": differences(pair(rows, exchanges, ran.probes())),
    }


def _started(settings: Settings, work: Path) -> dict[str, Any] | None:
    """Both servers started here on the tiny model, measured one after the other."""
    pythons = {kind: servers.server_python(kind) for kind in servers.PYTHON_VARIABLES}
    if any(p is None or not p.exists() for p in pythons.values()):
        return None
    vllm_python, transformers_python = pythons["vllm"], pythons["transformers"]
    assert vllm_python is not None and transformers_python is not None
    subprocess.run(
        [str(vllm_python), tiny_model.__file__, str(work / "models")],
        check=True,
        env={**servers.OFFLINE, "PATH": "/usr/bin:/bin"},
    )
    model = tiny_model.model_dir(work / "models", 64)
    specs = [
        servers.vllm_spec(vllm_python, model, tool_parser=True),
        servers.transformers_spec(transformers_python, model),
    ]
    running = [servers.start(spec, work / "logs") for spec in specs]
    try:
        results = []
        for server in running:
            server.wait_ready()
            served = servers.SERVED_NAME if server.spec.name == "vllm" else str(model)
            result = measure(server.spec.name, server.port, served, settings, work)
            result["ready_s"] = round(server.ready_s or 0.0, 1)
            results.append(result)
        return {"servers": results}
    finally:
        for server in running:
            server.stop()


def _port(url: str) -> int:
    return int(url.rstrip("/").rsplit(":", 1)[1])


def run(settings: Settings, urls: dict[str, tuple[str, str]], work: Path) -> dict[str, Any] | None:
    if urls:
        found = [measure(n, _port(u), m, settings, work) for n, (u, m) in urls.items()]
        return {"servers": found}
    return _started(settings, work)


def _cell(level: dict[str, Any], key: str) -> str:
    spread = level[key]
    return "/".join(harness.fmt(spread[q], ".1f") for q in ("p50_ms", "p95_ms", "max_ms"))


def report(numbers: dict[str, Any]) -> list[str]:
    rows = []
    for server in numbers["servers"]:
        for level in server["levels"]:
            rows.append(
                [
                    server["server"],
                    f"c={level['concurrency']}",
                    str(level["ttft"]["n"]),
                    _cell(level, "ttft"),
                    _cell(level, "e2e"),
                    str(server["errors"]),
                ]
            )
    headers = ["server", "level", "n", "TTFT ms p50/p95/max", "E2E ms p50/p95/max", "errors"]
    return [harness.table("client − wire (ms)", headers, rows)]


def targets(numbers: dict[str, Any]) -> list[Target]:
    found = []
    for server in numbers["servers"]:
        for key, label in (("ttft", "TTFT"), ("e2e", "E2E")):
            measured = "; ".join(
                f"c={level['concurrency']}: {_cell(level, key)} ms" for level in server["levels"]
            )
            found.append(
                Target(
                    f"{server['server']}: client − wire {label}",
                    "measured: p50/p95/max per level",
                    measured,
                    None,
                )
            )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--vllm-url", help="a vLLM already serving the model `tiny`")
    parser.add_argument("--transformers-url", help="a `transformers serve` already running")
    parser.add_argument("--transformers-model", default="", help="the model it serves")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else Settings()
    urls = {}
    if args.vllm_url:
        urls["vllm"] = (args.vllm_url, servers.SERVED_NAME)
    if args.transformers_url:
        urls["transformers"] = (args.transformers_url, args.transformers_model)
    with tempfile.TemporaryDirectory(prefix="real-server-") as work:
        numbers = run(settings, urls, Path(work))
    if numbers is None:
        print(f"{NAME}: not run: no server venvs (bash .ci/real_servers installs them)")
        return 0
    return harness.publish(
        NAME,
        args,
        settings=asdict(settings),
        numbers=numbers,
        targets=targets(numbers),
        notes=[
            "client - wire: the row's TTFT/E2E minus the proxy's (request in to first "
            "generated text / last byte out); both on one machine, loaded by others' work",
        ],
        report=report(numbers),
    )


if __name__ == "__main__":
    sys.exit(main())

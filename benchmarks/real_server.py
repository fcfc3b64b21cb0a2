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

With the servers started here it also runs ``vllm bench serve`` beside nvfp4-tui against the
same vLLM (``side_by_side``): vLLM held to one CPU and both tools to the other, the same prompts
and sampling, alternating which goes first, and compares each tool's TTFT mean with vLLM's own
and their throughputs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from statistics import fmean
from typing import Any

import harness
import polars as pl
from harness import Target

sys.path.insert(0, str(harness.REPO_ROOT))  # the stage's servers, tiny model and wire tap

import side_by_side

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
    beside_requests: int = 48  # per level and tool, beside vllm bench serve
    beside_repeats: int = 4  # each repeat alternates which tool goes first


QUICK = Settings(requests=2, beside_requests=16, beside_repeats=1)


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
    """A run through the tap in front of ``port`` per level, and its client − wire differences;
    on vLLM also wire − vLLM's own TTFT mean over the same requests (the probe's included on
    both sides): the time the server spends before its own clock starts."""
    levels, rows_seen, errors, codes = [], 0, 0, []
    for level in settings.levels:
        with WireTap(port) as tap:
            profile = tool.write_profile(
                work / f"{name}-c{level}.toml",
                tap.url,
                suites=["english"],
                concurrency=[level],
                requests=settings.requests,
                max_tokens=settings.max_tokens,
                model=model,
            )
            url = f"http://127.0.0.1:{port}"
            with side_by_side.Measured(url) if name == "vllm" else nullcontext() as server:
                ran = tool.run(profile, work / f"{name}-c{level}-out")
            exchanges = tap.exchanges(CHAT)
        rows = ran.snapshot.requests()
        found_levels = differences(pair(rows, exchanges, ran.probes()))
        if len(found_levels) != 1:
            raise RuntimeError(f"{name} c={level}: no row to pair with the wire:\n{ran.output}")
        (found,) = found_levels
        wire = [e.ttft_s for e in exchanges if e.ttft_s is not None]
        if server is not None and server.server_ttft_ms is not None and wire:
            found["wire_minus_server_ttft_ms"] = round(fmean(wire) * MS - server.server_ttft_ms, 2)
        levels.append(found)
        rows_seen += rows.height
        errors += rows.filter(pl.col("status") == "error").height
        codes.append(ran.returncode)
    return {
        "server": name,
        "exit_code": next((code for code in codes if code), 0),  # a signal's is negative
        "rows": rows_seen,
        "errors": errors,
        "levels": levels,
    }


def _started(settings: Settings, work: Path) -> dict[str, Any] | None:
    """Both servers started here on the tiny model, measured one after the other, then vLLM
    beside `vllm bench serve`."""
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
    # Beside vllm bench serve, vLLM gets one of the CPUs this process may use, the tools another.
    allowed = sorted(os.sched_getaffinity(0))
    cpus = (allowed[1], allowed[0]) if len(allowed) >= 2 else None
    running = [
        servers.start(
            servers.vllm_spec(vllm_python, model, tool_parser=True),
            work / "logs",
            cpus=None if cpus is None else {cpus[0]},
        ),
        servers.start(servers.transformers_spec(transformers_python, model), work / "logs"),
    ]
    try:
        results = []
        for server in running:
            server.wait_ready()
            served = servers.SERVED_NAME if server.spec.name == "vllm" else str(model)
            result = measure(server.spec.name, server.port, served, settings, work)
            result["ready_s"] = round(server.ready_s or 0.0, 1)
            results.append(result)
        running[1].stop()  # its idle threads off the box while the two tools run
        try:
            beside = _beside(running[0].url, vllm_python, model, settings, work, cpus)
        except RuntimeError as failed:  # the servers' figures above still stand
            beside = {"error": str(failed)[-2000:]}
        return {"servers": results, "beside_bench_serve": beside}
    finally:
        for server in running:
            server.stop()


def _beside(
    url: str,
    python: Path,
    model: Path,
    settings: Settings,
    work: Path,
    cpus: tuple[int, int] | None,
) -> dict[str, Any]:
    """nvfp4-tui and `vllm bench serve`, each level run by each in turn, the order alternating;
    ``cpus``: the server's and the tools' CPU."""
    dataset = side_by_side.write_inputs(work, settings.max_tokens)
    held = os.sched_getaffinity(0)
    if cpus is not None:
        os.sched_setaffinity(0, {cpus[1]})  # both tools inherit it
    sides = []
    count, tokens = settings.beside_requests, settings.max_tokens
    try:
        for repeat in range(settings.beside_repeats):
            for level in settings.levels:
                key = f"{repeat}-{level}"
                runs = [
                    partial(side_by_side.ours, url, level, count, tokens, work, key),
                    partial(
                        side_by_side.bench_serve,
                        python,
                        url,
                        model,
                        dataset,
                        level,
                        count,
                        tokens,
                        work,
                        key,
                    ),
                ]
                for run_one in runs if repeat % 2 == 0 else reversed(runs):
                    sides.append(run_one())
    finally:
        os.sched_setaffinity(0, held)
    return {
        "pinned": None if cpus is None else {"server_cpu": cpus[0], "client_cpu": cpus[1]},
        "prompts": side_by_side.PROMPTS,
        "levels": side_by_side.summary(sides),
    }


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
                    harness.fmt(level.get("wire_minus_server_ttft_ms"), "+.1f"),
                    str(server["errors"]),
                ]
            )
    headers = [
        "server",
        "level",
        "n",
        "TTFT ms p50/p95/max",
        "E2E ms p50/p95/max",
        "wire − vLLM TTFT mean",
        "errors",
    ]
    tables = [harness.table("client − wire (ms)", headers, rows)]
    beside = numbers.get("beside_bench_serve")
    if beside and "error" in beside:
        tables.append(f"beside vllm bench serve: not measured: {beside['error']}")
    elif beside:
        tables.append(_beside_table(beside))
    return tables


def _each(runs: list[dict[str, Any]], key: str, spec: str) -> str:
    return " / ".join(harness.fmt(run[key], spec) for run in runs)


def _beside_table(beside: dict[str, Any]) -> str:
    rows = [
        [
            level["tool"],
            f"c={level['concurrency']}",
            _each(level["runs"], "client_ttft_ms", ".1f"),
            _each(level["runs"], "server_ttft_ms", ".1f"),
            _each(level["runs"], "gap_ms", "+.1f"),
            _each(level["runs"], "throughput_tps", ".0f"),
            _each(level["runs"], "cpu_s", ".1f"),
            harness.fmt(level["tokens_per_cpu_s"], ".0f"),
            str(level["failed"]),
        ]
        for level in beside["levels"]
    ]
    pinned = beside["pinned"]
    where = (
        f"vLLM on CPU {pinned['server_cpu']}, the tools on CPU {pinned['client_cpu']}"
        if pinned
        else "not pinned (one CPU)"
    )
    headers = [
        "tool",
        "level",
        "TTFT mean ms",
        "vLLM's mean ms",
        "gap ms",
        "tok/s",
        "client CPU s",
        "tok per CPU s",
        "failed",
    ]
    title = f"beside vllm bench serve, same vLLM, prompts and sampling ({where}; each repeat)"
    return harness.table(title, headers, rows)


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
        before_clock = [
            f"c={level['concurrency']}: {level['wire_minus_server_ttft_ms']:+.1f} ms"
            for level in server["levels"]
            if level.get("wire_minus_server_ttft_ms") is not None
        ]
        if before_clock:
            found.append(
                Target(
                    f"{server['server']}: wire − its own TTFT mean (before its clock starts)",
                    "measured: mean per level",
                    "; ".join(before_clock),
                    None,
                )
            )
    beside = numbers.get("beside_bench_serve")
    if beside and "levels" in beside:
        found += _beside_targets(beside["levels"])
    return found


def _beside_targets(levels: list[dict[str, Any]]) -> list[Target]:
    by = {(level["tool"], level["concurrency"]): level for level in levels}
    found = []
    for concurrency in sorted({level["concurrency"] for level in levels}):
        ours, theirs = by.get(("nvfp4-tui", concurrency)), by.get(("vllm bench serve", concurrency))
        if ours is None or theirs is None:
            continue
        gap, their_gap = ours["gap_ms_mean"], theirs["gap_ms_mean"]
        found.append(
            Target(
                f"vllm c={concurrency}: client − vLLM TTFT mean",
                "<= 5 ms",
                f"{harness.fmt(gap, '+.1f')} ms (vllm bench serve "
                f"{harness.fmt(their_gap, '+.1f')} ms)",
                None if gap is None else gap <= 5.0,
            )
        )
        rate, their_rate = ours["throughput_tps_mean"], theirs["throughput_tps_mean"]
        ratio = rate / their_rate if rate and their_rate else None
        found.append(
            Target(
                f"vllm c={concurrency}: throughput vs vllm bench serve",
                ">= 0.95x",
                f"{harness.fmt(ratio, '.3f')}x ({harness.fmt(rate, '.0f')} vs "
                f"{harness.fmt(their_rate, '.0f')} tok/s)",
                None if ratio is None else ratio >= 0.95,
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

"""Store: snapshot write rate, bytes per request, and the cost of opening a big snapshot.

1. ``SnapshotWriter`` fed realistic ``RequestFinished`` rows (answers of 200-1,200 tokens drawn
   from the simulator's own writing, reasoning text on three endpoints in seven, scores), flushed
   in parts as a live run does, then closed (compaction): rows per second.
2. The compacted requests table's bytes per request, with and without answer and reasoning text,
   extrapolated to 1M requests.
3. A snapshot of 1M requests and 10M GPU samples built with polars directly in the store's schema
   (``store.schema.SCHEMAS``): the time of ``nvfp4-tui report`` on it and of its steps (open,
   request events, ``report.board_of``); of a replay's start, its first frame and a
   seek to the end (``ReplaySource``); and the peak RSS of each. ``--quick`` builds a twentieth
   of it and extrapolates linearly.

Usage: ``python benchmarks/store_io.py [--quick]``.
"""

from __future__ import annotations

import multiprocessing
import random
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import harness
import polars as pl
from harness import Target

from nvfp4_tui.config.profile import SimSpec
from nvfp4_tui.core.events import (
    EndpointInfo,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RequestFinished,
    RunFinished,
    RunStarted,
)
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.output.report import board_of, render
from nvfp4_tui.sim.answers import ChatRequest, compose
from nvfp4_tui.sim.tokens import split_tokens
from nvfp4_tui.sources.replay import ReplaySource
from nvfp4_tui.store.manifest import build_manifest, new_run_id, utc_now_iso, write_manifest
from nvfp4_tui.store.reader import open_snapshot
from nvfp4_tui.store.schema import SCHEMAS, TS_DTYPE, events_to_frame, frame_to_events
from nvfp4_tui.store.writer import SnapshotWriter

NAME = "store"
TARGET_LEADERBOARD_S = 1.0
FULL_REQUESTS = 1_000_000
FULL_GPU_SAMPLES = 10_000_000
ENDPOINTS = (
    ("moe_qwen36", True),
    ("moe_redhat", False),
    ("moe_huihui", False),
    ("dense_qwen35", True),
    ("dense_qwopus", True),
    ("dense_gemma31", False),
    ("moe_jiunsong", False),
)  # (id, writes reasoning text)
SUITES = ("english", "japanese", "math", "coding", "design", "tool_call")
CONCURRENCY = (1, 4)
T0 = 1_767_225_600.0  # 2026-01-01 UTC
GPU_SAMPLE_INTERVAL_S = 0.5
WRITER_FLUSH_ROWS = 500
BIG_ANSWER_CHARS = 256
FREE_TEXT_COLUMNS = (
    "answer_text",
    "reasoning_text",
    "tool_calls_json",
    "error_message",
    "score_heuristic_detail",
    "score_verified_detail",
    "score_judge_detail",
)
# Text the simulator writes, one prompt per kind of answer; rows draw their tokens from it.
SOURCE_PROMPTS = (
    "Discuss the history of printing and what it changed.",
    "Write a Python function that parses log files, with unit tests.",
    "日本の鉄道の歴史について論じてください。",
    "Prove that the sum of two even numbers is even, and compute 17 * 23.",
    "Design the architecture of a URL shortener system.",
)


@dataclass(frozen=True)
class Settings:
    write_rows: int  # rows written through SnapshotWriter (each way: with and without text)
    big_requests: int
    big_gpu_samples: int
    leaderboard_requests: int  # the leaderboard target is measured at this size, in memory


QUICK = Settings(
    write_rows=10_000,
    big_requests=50_000,
    big_gpu_samples=500_000,
    leaderboard_requests=FULL_REQUESTS,
)
FULL = Settings(
    write_rows=100_000,
    big_requests=FULL_REQUESTS,
    big_gpu_samples=FULL_GPU_SAMPLES,
    leaderboard_requests=FULL_REQUESTS,
)


def _token_pool() -> list[str]:
    spec = SimSpec(decode_tps=100.0, ttft_s=0.1, vram_used_mib=0.0, reasoning=True)
    tokens: list[str] = []
    for prompt in SOURCE_PROMPTS:
        request = ChatRequest(messages=[{"role": "user", "content": prompt}], max_tokens=1500)
        answer = compose(spec, request)
        tokens += split_tokens(answer.reasoning + answer.content)
    return tokens


def _request_rows(count: int, with_text: bool, seed: int = 0) -> list[RequestFinished]:
    """Rows shaped like a long run's: every endpoint, suite and level; 1% errors."""
    rng = random.Random(seed)
    tokens = _token_pool() if with_text else []
    rows = []
    for i in range(count):
        endpoint_id, reasons = ENDPOINTS[i % len(ENDPOINTS)]
        suite = SUITES[(i // len(ENDPOINTS)) % len(SUITES)]
        concurrency = CONCURRENCY[(i // 5000) % len(CONCURRENCY)]
        failed = rng.random() < 0.01
        tokens_out = rng.randint(200, 1200)
        reasoning_tokens = rng.randint(100, 400) if reasons else None
        ttft_s = rng.uniform(0.1, 0.4)
        e2e_s = ttft_s + tokens_out / rng.uniform(40.0, 150.0)
        answer = "".join(rng.choices(tokens, k=tokens_out)) if with_text else ""
        reasoning = "".join(rng.choices(tokens, k=reasoning_tokens or 0)) if with_text else ""
        rows.append(
            RequestFinished(
                t=T0 + i * 0.05,
                endpoint_id=endpoint_id,
                suite=suite,
                prompt_id=f"{suite}-{i % 19:02d}",
                concurrency=concurrency,
                phase_index=SUITES.index(suite) + len(SUITES) * CONCURRENCY.index(concurrency),
                request_index=i,
                status="error" if failed else "ok",
                queue_s=rng.uniform(0.0, 0.01),
                ttft_s=None if failed else ttft_s,
                ttfa_s=None if failed else ttft_s + rng.uniform(0.0, 2.0),
                e2e_s=e2e_s,
                itl_p50_s=None if failed else rng.uniform(0.006, 0.03),
                itl_p95_s=None if failed else rng.uniform(0.01, 0.05),
                itl_p99_s=None if failed else rng.uniform(0.02, 0.08),
                itl_max_s=None if failed else rng.uniform(0.03, 0.3),
                itl_per_token=True,
                chunks=tokens_out - tokens_out // 12,
                tokens_in=rng.randint(30, 900),
                tokens_out=None if failed else tokens_out,
                reasoning_tokens=reasoning_tokens,
                decode_tps=None if failed else tokens_out / (e2e_s - ttft_s),
                e2e_tps=None if failed else tokens_out / e2e_s,
                finish_reason=None if failed else rng.choice(("stop", "stop", "length")),
                answer_text="" if failed else answer,
                reasoning_text="" if failed else reasoning,
                error_kind="timeout" if failed else None,
                error_message="total: request exceeded 300 s" if failed else None,
                score_heuristic=None if failed else rng.uniform(0.2, 1.0),
                score_heuristic_detail=None if failed else "length ok; 4/5 keywords; structure",
                score_verified=None if failed else rng.choice((0.0, 1.0)),
                score_verified_detail=None if failed else "checked: final answer matches",
            )
        )
    return rows


def _write(rows: list[RequestFinished], root: Path, label: str) -> dict[str, Any]:
    writer = SnapshotWriter(root, f"write-{label}", {"profile": {"benchmark": NAME}})
    writer.open()
    started = time.perf_counter()
    for index, row in enumerate(rows, start=1):
        writer.add(row)
        if index % WRITER_FLUSH_ROWS == 0:
            writer.flush()
    streamed_s = time.perf_counter() - started
    writer.close("complete")
    total_s = time.perf_counter() - started
    size = (writer.path / "requests.parquet").stat().st_size
    return {
        "rows": len(rows),
        "add_and_flush_s": streamed_s,
        "close_s": total_s - streamed_s,
        "rows_per_s": len(rows) / total_s,
        "rows_per_s_before_close": len(rows) / streamed_s,
        "requests_parquet_bytes": size,
        "bytes_per_request": size / len(rows),
        "mib_per_1m_requests": size / len(rows) * FULL_REQUESTS / harness.MIB,
    }


def _uniform(seed: int) -> pl.Expr:
    """A pseudo-random number in [0, 1) per row, from the row index."""
    return (pl.col("i").hash(seed) % 1_000_003).cast(pl.Float64) / 1_000_003


def _pick(values: tuple[Any, ...], index: pl.Expr) -> pl.Expr:
    return index.replace_strict(dict(enumerate(values)), return_dtype=pl.String)


def _in_schema(table: str, frame: pl.DataFrame, given: dict[str, pl.Expr]) -> pl.DataFrame:
    """The frame's columns in ``table``'s schema: the given expressions, other columns
    filled by type (numbers random, flags false, text null)."""
    columns: list[pl.Expr] = []
    for position, (name, dtype) in enumerate(SCHEMAS[table].items()):
        if name == "ts":
            continue
        if name in given:
            expr = given[name]
        elif dtype == pl.Float64:
            expr = _uniform(position)
        elif dtype == pl.Int64:
            expr = (pl.col("i").hash(position) % 1000).cast(pl.Int64)
        elif dtype == pl.Boolean:
            expr = pl.lit(False)
        else:
            expr = pl.lit(None, dtype=dtype)
        columns.append(expr.cast(dtype).alias(name))
    body = frame.select(columns)
    ts = (pl.col("t") * 1e6).round().cast(pl.Int64).cast(TS_DTYPE).alias("ts")
    return body.with_columns(ts).select(SCHEMAS[table].names())


def _big_requests(count: int) -> pl.DataFrame:
    frame = pl.DataFrame({"i": pl.int_range(0, count, eager=True)})
    i = pl.col("i")
    endpoint = i % len(ENDPOINTS)
    suite = (i // len(ENDPOINTS)) % len(SUITES)
    level = (i * len(CONCURRENCY) // count).clip(0, len(CONCURRENCY) - 1)
    failed = _uniform(101) < 0.01
    tokens_out = (200 + _uniform(102) * 1000).cast(pl.Int64)
    ttft = 0.1 + _uniform(103) * 0.3
    e2e = ttft + tokens_out / (40 + _uniform(104) * 110)
    answer = pl.format("answer {} ", i).str.pad_end(BIG_ANSWER_CHARS, "x")
    return _in_schema(
        "requests",
        frame,
        {
            "t": T0 + i * 0.05,
            "endpoint_id": _pick(tuple(e for e, _ in ENDPOINTS), endpoint),
            "suite": _pick(SUITES, suite),
            "prompt_id": pl.format("p{}", i % 19),
            "concurrency": _pick(tuple(str(c) for c in CONCURRENCY), level).cast(pl.Int64),
            "phase_index": suite + len(SUITES) * level,
            "request_index": i,
            "status": pl.when(failed).then(pl.lit("error")).otherwise(pl.lit("ok")),
            "ttft_s": ttft,
            "e2e_s": e2e,
            "tokens_out": tokens_out,
            "decode_tps": tokens_out / (e2e - ttft),
            "e2e_tps": tokens_out / e2e,
            "finish_reason": pl.lit("stop"),
            "answer_text": answer,
            "reasoning_text": pl.lit(""),
            "error_kind": pl.when(failed).then(pl.lit("timeout")),
            "score_heuristic": 0.2 + _uniform(105) * 0.8,
        },
    )


def _big_gpu(count: int) -> pl.DataFrame:
    frame = pl.DataFrame({"i": pl.int_range(0, count, eager=True)})
    i = pl.col("i")
    return _in_schema(
        "gpu",
        frame,
        {
            "t": T0 + (i // len(ENDPOINTS)) * GPU_SAMPLE_INTERVAL_S,
            "gpu": i % len(ENDPOINTS),
            "name": pl.lit("NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
            "uuid": pl.format("GPU-sim-{}", i % len(ENDPOINTS)),
            "vram_used_mib": 90_000 + _uniform(201) * 4000,
            "vram_total_mib": pl.lit(97_887.0),
            "util_gpu_pct": _uniform(202) * 100,
            "power_w": 100 + _uniform(203) * 500,
            "source": pl.lit("sim"),
            "host": pl.lit(None, dtype=pl.String),
        },
    )


def _run_events(requests: int) -> list[Any]:
    endpoints = tuple(
        EndpointInfo(
            id=endpoint_id,
            label=endpoint_id,
            url=f"http://127.0.0.1:{18016 + n}",
            model="current",
            gpu=n,
            model_class="moe" if endpoint_id.startswith("moe") else "dense",
            simulated=True,
        )
        for n, (endpoint_id, _) in enumerate(ENDPOINTS)
    )
    per_phase = requests // (len(ENDPOINTS) * len(SUITES) * len(CONCURRENCY))
    plans = tuple(
        PhasePlan(e.id, suite, c, per_phase)
        for e in endpoints
        for c in CONCURRENCY
        for suite in SUITES
    )
    span_s = requests * 0.05
    phase_s = span_s / len(SUITES) / len(CONCURRENCY)
    events: list[Any] = [RunStarted(T0 - 1, "bench", "bench", endpoints, plans)]
    for e in endpoints:
        for index, plan in enumerate(p for p in plans if p.endpoint_id == e.id):
            t = T0 + phase_s * index
            events.append(PhaseStarted(t, e.id, plan.suite, plan.concurrency, index))
            events.append(
                PhaseFinished(
                    t=t + phase_s,
                    endpoint_id=e.id,
                    suite=plan.suite,
                    concurrency=plan.concurrency,
                    phase_index=index,
                    requests=per_phase,
                    errors=0,
                    output_tokens=per_phase * 700,
                    wall_s=phase_s,
                )
            )
    events.append(RunFinished(T0 + span_s + 1, "complete"))
    return events


def _build_big(root: Path, settings: Settings) -> tuple[Path, dict[str, Any]]:
    run_id = new_run_id("bench-big", datetime.now(UTC))
    path = root / run_id
    path.mkdir(parents=True)
    started = time.perf_counter()
    requests = _big_requests(settings.big_requests)
    requests.write_parquet(path / "requests.parquet")
    del requests
    gpu = _big_gpu(settings.big_gpu_samples)
    gpu.write_parquet(path / "gpu.parquet")
    del gpu
    events_to_frame("events", _run_events(settings.big_requests)).write_parquet(
        path / "events.parquet"
    )
    pl.DataFrame(schema=SCHEMAS["server"]).write_parquet(path / "server.parquet")
    manifest = build_manifest({"profile": {"benchmark": NAME}}, run_id)
    write_manifest(path, {**manifest, "status": "complete", "ended_at": utc_now_iso()})
    sizes = {p.name: p.stat().st_size for p in path.glob("*.parquet")}
    return path, {"build_s": time.perf_counter() - started, "file_bytes": sizes}


def _timed(action) -> tuple[Any, float]:
    started = time.perf_counter()
    value = action()
    return value, time.perf_counter() - started


def _lean_leaderboard(path: Path) -> list[Any]:
    """What a report could do: leave the free text on disk, read the run events table alone."""
    columns = [name for name in SCHEMAS["requests"].names() if name not in FREE_TEXT_COLUMNS]
    requests = pl.read_parquet(path / "requests.parquet", columns=columns)
    for name in FREE_TEXT_COLUMNS:  # the leaderboard never reads them; keep the schema whole
        if name in SCHEMAS["requests"]:
            requests = requests.with_columns(pl.lit(None, dtype=pl.String).alias(name))
    events = frame_to_events("events", pl.read_parquet(path / "events.parquet"))
    return board_of(requests, events).rows


def _report_numbers(path: str) -> dict[str, Any]:
    """`nvfp4-tui report` end to end, then its steps one by one on a second open. Runs in a
    process of its own, so its peak RSS is the report's alone."""
    _, report_s = _timed(lambda: render(Path(path), "text"))
    snapshot, open_s = _timed(lambda: open_snapshot(Path(path)))
    events, events_s = _timed(snapshot.report_events)
    rows, frame_s = _timed(lambda: board_of(snapshot.requests(), snapshot.run_events()).rows)
    _, lean_s = _timed(lambda: _lean_leaderboard(Path(path)))
    return {
        "events": snapshot.event_count,
        "report_events": len(events),
        "leaderboard_rows": len(rows),
        "report_s": report_s,
        "open_snapshot_s": open_s,
        "report_events_s": events_s,
        "leaderboard_on_frame_s": frame_s,
        "lean_open_to_leaderboard_s": lean_s,
        "report_peak_rss_mib": _peak_rss_mib(),
    }


def _replay_numbers(path: str) -> dict[str, Any]:
    """A replay as the UI starts it (x1, the state at its first moment), then End: the batch
    and folding it into the state. In a process of its own, like the report."""
    started = time.perf_counter()
    source = ReplaySource(Path(path))
    start_s = time.perf_counter() - started
    state = FleetState()
    source.start()
    state.apply_all(source.take_due() or [])
    first_frame_s = time.perf_counter() - started
    source.control("end")
    batch, end_batch_s = _timed(source.take_due)
    _, end_fold_s = _timed(lambda: state.apply_all(batch or []))
    assert source.at_end and state.status == "complete"
    return {
        "replay_start_s": start_s,
        "replay_first_frame_s": first_frame_s,
        "seek_end_batch_s": end_batch_s,
        "seek_end_fold_s": end_fold_s,
        "seek_end_s": end_batch_s + end_fold_s,
        "seek_end_batch_events": len(batch or []),
        "replay_peak_rss_mib": _peak_rss_mib(),
    }


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _in_own_process(measure: Callable[[str], dict[str, Any]], path: Path) -> dict[str, Any]:
    # Spawned, not forked: the child starts without the frames this process built.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(measure, str(path)).result()


def _open_big(path: Path) -> dict[str, Any]:
    return {**_in_own_process(_report_numbers, path), **_in_own_process(_replay_numbers, path)}


def _leaderboard_in_memory(count: int) -> dict[str, Any]:
    """The target itself, measured (not extrapolated): the requests in memory, the run events."""
    requests = _big_requests(count)
    events = _run_events(count)
    times = [_timed(lambda: board_of(requests, events).rows)[1] for _ in range(3)]
    return {"requests": requests.height, "leaderboard_s_median": sorted(times)[1], "runs_s": times}


def run(settings: Settings) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="nvfp4-store-") as tmp:
        root = Path(tmp)
        with_text = _write(_request_rows(settings.write_rows, with_text=True), root, "text")
        without_text = _write(_request_rows(settings.write_rows, with_text=False), root, "bare")
        path, built = _build_big(root, settings)
        opened = _open_big(path)
    leaderboard = _leaderboard_in_memory(settings.leaderboard_requests)
    scale = FULL_REQUESTS / settings.big_requests
    extrapolated = {key: value * scale for key, value in opened.items() if key.endswith("_s")}
    return {
        "write_with_text": with_text,
        "write_without_text": without_text,
        "big": {
            "requests": settings.big_requests,
            "gpu_samples": settings.big_gpu_samples,
            "answer_chars": BIG_ANSWER_CHARS,
            **built,
            **opened,
        },
        "at_1m_requests_10m_gpu": extrapolated
        if scale != 1
        else {key: value for key, value in opened.items() if key.endswith("_s")},
        "extrapolated": scale != 1,
        "leaderboard_in_memory": leaderboard,
    }


def targets(numbers: dict[str, Any]) -> list[Target]:
    board = numbers["leaderboard_in_memory"]
    frame_s = board["leaderboard_s_median"]
    full_size = board["requests"] >= FULL_REQUESTS
    return [
        Target(
            "leaderboard on 1M requests",
            f"< {TARGET_LEADERBOARD_S:g} s (report.board_of on the requests frame)",
            f"{frame_s:.2f} s on {board['requests']:,} rows",
            frame_s < TARGET_LEADERBOARD_S if full_size else None,
        )
    ]


def report(numbers: dict[str, Any]) -> list[str]:
    writes = [
        [
            label,
            f"{w['rows']:,}",
            f"{w['rows_per_s']:,.0f}",
            f"{w['rows_per_s_before_close']:,.0f}",
            f"{w['close_s']:.2f}",
            f"{w['bytes_per_request']:,.0f}",
            f"{w['mib_per_1m_requests']:,.0f}",
        ]
        for label, w in (
            ("with answer + reasoning text", numbers["write_with_text"]),
            ("without text", numbers["write_without_text"]),
        )
    ]
    big = numbers["big"]
    full = numbers["at_1m_requests_10m_gpu"]
    how = (
        "extrapolated x%g" % (FULL_REQUESTS / big["requests"])
        if numbers["extrapolated"]
        else "measured"
    )
    labels = (
        ("`nvfp4-tui report` (open, every table, the chart)", "report_s"),
        ("  open_snapshot (frames; run events decoded)", "open_snapshot_s"),
        ("  Snapshot.report_events() (run events; no SLO: no request)", "report_events_s"),
        ("  board_of(requests frame, run events).rows", "leaderboard_on_frame_s"),
        ("lean: read all but free text + run events, leaderboard", "lean_open_to_leaderboard_s"),
        ("replay start: ReplaySource(path)", "replay_start_s"),
        ("replay first frame: start + the state at t=0", "replay_first_frame_s"),
        ("End: the batch (samples folded to the rings)", "seek_end_batch_s"),
        ("End: folding it into the state", "seek_end_fold_s"),
    )
    opened = [[label, f"{big[key]:.2f}", f"{full[key]:.2f}"] for label, key in labels]
    board = numbers["leaderboard_in_memory"]
    opened.append(
        [
            f"board_of(...).rows on {board['requests']:,} rows in memory (measured)",
            "—",
            f"{board['leaderboard_s_median']:.2f}",
        ]
    )
    return [
        harness.table(
            f"Snapshot writes (SnapshotWriter, a part every {WRITER_FLUSH_ROWS} rows, then close)",
            [
                "rows",
                "n",
                "rows/s",
                "rows/s before close",
                "close s",
                "bytes/request",
                "MiB per 1M",
            ],
            writes,
        ),
        harness.table(
            f"Big snapshot: {big['requests']:,} requests + {big['gpu_samples']:,} GPU samples "
            f"({big['events']:,} events; End carries {big['seek_end_batch_events']:,}; peak RSS: "
            f"report {big['report_peak_rss_mib']:,.0f} MiB, replay "
            f"{big['replay_peak_rss_mib']:,.0f} MiB)",
            ["step", "seconds", f"at 1M + 10M ({how})"],
            opened,
        ),
    ]


NOTES = [
    "Answer text is drawn token by token from text the simulator writes (its English, code, "
    "Japanese, math and design writers), so it compresses about as real answers do; each row's "
    "text is unique.",
    f"The big snapshot's answer_text is a {BIG_ANSWER_CHARS}-character stand-in to keep memory "
    "sane; with real answers, End also decodes and copies every answer into Python.",
    "End costs the requests, not the samples: each request is built as an event and folded by "
    "FleetState one by one, while the samples are cut to the history rings in polars first.",
    "Extrapolation (--quick) is linear; sorting the timeline is n log n, so it slightly "
    "underestimates replay start at full size, while End's batch carries a few history rings "
    "of samples whatever the size, so its extrapolation overstates it.",
    "The report and the replay are each measured in a fresh process: their peak RSS is their "
    "own, not the benchmark's. Peak RSS is not extrapolated.",
]


def main(argv: list[str] | None = None) -> int:
    args = harness.parser(__doc__.splitlines()[0]).parse_args(argv)
    settings = QUICK if args.quick else FULL
    return harness.measure_and_publish(
        NAME,
        args,
        settings,
        run=run,
        targets=targets,
        report=report,
        notes=NOTES,
        as_json=lambda s: {**asdict(s), "flush_rows": WRITER_FLUSH_ROWS},
    )


if __name__ == "__main__":
    sys.exit(main())

"""nvfp4-tui and `vllm bench serve` against one vLLM, on the same prompts and sampling.

Both tools get the same closed loop: ``requests`` requests of the same prompts (written once, as
a suite of ours and a ShareGPT-shaped file of its: its `custom` JSONL reader needs pandas, which
the vLLM CPU build lacks), at most ``level`` in flight, greedy, every
answer ``max_tokens`` long (``ignore_eos``), one start-up request before (our probe, its ready
check), each held to the client CPU while the server holds the other. What is compared, for each
tool by the same rule:

- TTFT: the tool's own mean, beside vLLM's mean over the same run (``/metrics`` before and after:
  its requests and the one start-up request);
- throughput: output tokens over the time from the first send to the last answer's end (its own
  ``output_throughput``; ours from our rows, the same definition);
- the client's CPU seconds (the tool's process and its children).
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

import polars as pl

from nvfp4_tui.telemetry.prometheus import parse_metrics
from tests.real_servers import servers, tool

BENCH_SCRIPT = Path(__file__).with_name("vllm_bench_serve.py")
SUITE = "beside"
PROMPTS = 8
PROMPT_WORDS = 48
# Words of the tiny model's tokenizer corpus: a prompt of them is about a token a word.
WORDS = [
    "model",
    "server",
    "token",
    "stream",
    "request",
    "answer",
    "question",
    "write",
    "code",
    "function",
    "return",
    "value",
    "list",
    "number",
    "string",
    "print",
    "test",
    "python",
    "error",
    "result",
    "time",
    "first",
    "last",
    "fast",
    "slow",
    "queue",
    "batch",
    "cache",
]
TTFT = "vllm:time_to_first_token_seconds"
BENCH_TIMEOUT_S = 600.0
MS = 1000.0


def prompts() -> list[str]:
    rng = random.Random(7)
    return [
        f"Request {i}: " + " ".join(rng.choice(WORDS) for _ in range(PROMPT_WORDS))
        for i in range(PROMPTS)
    ]


def write_inputs(work: Path, max_tokens: int) -> Path:
    """Our suite (``work/suites/beside.toml``, beside the profiles) and its twin for
    `vllm bench serve` (ShareGPT's shape: each prompt as a first turn; the reply it pairs with
    is not used, the output length being fixed)."""
    texts = prompts()
    suite = [
        "[suite]",
        f'name = "{SUITE}"',
        'kind = "text"',
        f"max_tokens = {max_tokens}",
        "min_words = 1",
    ]
    for i, text in enumerate(texts):
        suite += ["", "[[prompt]]", f'id = "p{i}"', f"text = {json.dumps(text)}"]
    (work / "suites").mkdir(parents=True, exist_ok=True)
    (work / "suites" / f"{SUITE}.toml").write_text("\n".join(suite) + "\n")
    turns = [
        {"conversations": [{"from": "human", "value": text}, {"from": "gpt", "value": text}]}
        for text in texts
    ]
    dataset = work / f"{SUITE}.json"
    dataset.write_text(json.dumps(turns))
    return dataset


@dataclass(frozen=True)
class Side:
    """One tool's run at one level."""

    tool: str
    level: int
    completed: int
    failed: int
    client_ttft_ms: float | None
    server_ttft_ms: float | None
    throughput_tps: float | None
    tokens_out: int
    cpu_s: float  # the client's, its start-up included

    @property
    def gap_ms(self) -> float | None:
        if self.client_ttft_ms is None or self.server_ttft_ms is None:
            return None
        return self.client_ttft_ms - self.server_ttft_ms


def _ttft_totals(url: str) -> tuple[float, float]:
    with urllib.request.urlopen(f"{url}/metrics", timeout=tool.METRICS_TIMEOUT_S) as reply:
        snapshot = parse_metrics(reply.read().decode())
    return snapshot.sums.get(f"{TTFT}_sum", 0.0), snapshot.sums.get(f"{TTFT}_count", 0.0)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Measured:
    """Runs a tool and notes vLLM's TTFT and the client CPU around it."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __enter__(self) -> Measured:
        self._ttft = _ttft_totals(self.url)
        self._cpu = _children_cpu_s()
        return self

    def __exit__(self, *exc: object) -> None:
        ttft_sum, ttft_count = _ttft_totals(self.url)
        self.cpu_s = _children_cpu_s() - self._cpu
        count = ttft_count - self._ttft[1]
        self.server_ttft_ms = (ttft_sum - self._ttft[0]) / count * MS if count > 0 else None


def ours(url: str, level: int, requests: int, max_tokens: int, work: Path, key: str) -> Side:
    profile = tool.write_profile(
        work / f"ours-{key}.toml",
        url,
        suites=[SUITE],
        concurrency=[level],
        requests=max(1, requests // PROMPTS),
        max_tokens=max_tokens,
        model=servers.SERVED_NAME,
        temperature=0.0,
        extra_body={"ignore_eos": True},
    )
    with Measured(url) as measured:
        ran = tool.run(profile, work / f"ours-{key}")
    rows = ran.snapshot.requests()
    ok = rows.filter(pl.col("status") != "error")  # "incomplete": cut at max_tokens, as asked
    if ran.returncode != 0 or ok.is_empty():
        raise RuntimeError(f"nvfp4-tui run failed ({ran.returncode}):\n{ran.output[-2000:]}")
    # ``t`` is when the runner handed the request over; its E2E starts after the slot and the
    # connection, which end it later by queue_s + setup_s.
    ended = pl.col("t") + pl.col("queue_s") + pl.col("setup_s").fill_null(0.0) + pl.col("e2e_s")
    span_s = ok.select(ended.max() - pl.col("t").min()).item()
    ttft_s = ok["ttft_s"].drop_nulls().to_list()
    return Side(
        tool="nvfp4-tui",
        level=level,
        completed=ok.height,
        failed=rows.height - ok.height,
        client_ttft_ms=fmean(ttft_s) * MS if ttft_s else None,
        server_ttft_ms=measured.server_ttft_ms,
        throughput_tps=float(ok["tokens_out"].sum()) / span_s if span_s else None,
        tokens_out=int(ok["tokens_out"].sum()),
        cpu_s=measured.cpu_s,
    )


def bench_serve(
    python: Path,
    url: str,
    tokenizer: Path,
    dataset: Path,
    level: int,
    requests: int,
    max_tokens: int,
    work: Path,
    key: str,
) -> Side:
    result = work / f"bench-{key}.json"
    command = [
        str(python),
        str(BENCH_SCRIPT),
        "--backend=openai-chat",
        f"--base-url={url}",
        "--endpoint=/v1/chat/completions",
        f"--model={servers.SERVED_NAME}",
        f"--tokenizer={tokenizer}",
        "--dataset-name=sharegpt",  # sent as the user's message, as ours are
        f"--dataset-path={dataset}",
        f"--sharegpt-output-len={max_tokens}",
        "--ignore-eos",
        "--temperature=0",
        f"--max-concurrency={level}",
        f"--num-prompts={requests}",
        "--request-rate=inf",
        "--disable-tqdm",
        "--save-result",
        f"--result-dir={work}",
        f"--result-filename={result.name}",
    ]
    # Its own environment alone: this venv's variables break vLLM's imports.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), **servers.OFFLINE}
    with Measured(url) as measured:
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=BENCH_TIMEOUT_S, check=False
        )
    if done.returncode != 0 or not result.exists():
        tail = (done.stdout + done.stderr)[-2000:]
        raise RuntimeError(f"vllm bench serve failed ({done.returncode}):\n{tail}")
    found: dict[str, Any] = json.loads(result.read_text())
    return Side(
        tool="vllm bench serve",
        level=level,
        completed=int(found["completed"]),
        failed=int(found.get("failed", 0)),
        client_ttft_ms=float(found["mean_ttft_ms"]),
        server_ttft_ms=measured.server_ttft_ms,
        throughput_tps=float(found["output_throughput"]),
        tokens_out=int(found["total_output_tokens"]),
        cpu_s=measured.cpu_s,
    )


def summary(sides: list[Side]) -> list[dict[str, Any]]:
    """Per tool and level: every repeat's gap and throughput, and their means."""
    out = []
    for name in dict.fromkeys(s.tool for s in sides):
        for level in sorted({s.level for s in sides}):
            runs = [s for s in sides if s.tool == name and s.level == level]
            gaps = [s.gap_ms for s in runs if s.gap_ms is not None]
            rates = [s.throughput_tps for s in runs if s.throughput_tps is not None]
            tokens_per_cpu = [s.tokens_out / s.cpu_s for s in runs if s.cpu_s > 0]
            out.append(
                {
                    "tool": name,
                    "concurrency": level,
                    "runs": [asdict(s) | {"gap_ms": s.gap_ms} for s in runs],
                    "gap_ms_mean": fmean(gaps) if gaps else None,
                    "throughput_tps_mean": fmean(rates) if rates else None,
                    "cpu_s_mean": fmean(s.cpu_s for s in runs) if runs else None,
                    "failed": sum(s.failed for s in runs),
                    "tokens_per_cpu_s": fmean(tokens_per_cpu) if tokens_per_cpu else None,
                }
            )
    return out

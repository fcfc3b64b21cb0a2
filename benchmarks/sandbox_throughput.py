"""Sandbox throughput: HumanEval answers verified per second, against the rate a fleet answers.

Each job is what the runner does with one HumanEval answer: ``score_verified`` on a right answer
(the problem's canonical solution in a fenced block), which completes the stub and runs the
problem's ``check`` in a fresh sandbox (bubblewrap where it works, else rlimit-only). The jobs
go through a pool of ``VERIFY_WORKERS`` threads, as the runner's verify pool does, so at most
that many sandboxes run at once. Measured: verifications per wall second, each job's own
latency, and the machine's load average when it ended (other work slows it).

What it has to keep up with: the demo fleet's answer rate on HumanEval, from the simulator's
schedule (``sim.schedule``): each endpoint answers its mean canonical answer after the TTFT and
decode time its figures give, at concurrency 1 and 4. A rate above the sandbox's means the
verify backlog fills and holds the sends (``bench.verify_backlog``), recorded as
``verify_wait_s`` on the phase.

Usage: ``python benchmarks/sandbox_throughput.py [--quick]``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import harness
from harness import Target, fmt

from nvfp4_tui.config import BUILTIN_SUITES, DEMO_PROFILE
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.config.suites import Prompt, Suite, load_suites
from nvfp4_tui.scoring.sandbox import sandbox_kind
from nvfp4_tui.scoring.verify import VERIFY_WORKERS, score_verified
from nvfp4_tui.sim.dataset_answers import answer_key
from nvfp4_tui.sim.schedule import expected_e2e_s
from nvfp4_tui.sim.tokens import count_tokens

NAME = "sandbox_throughput"
LEVELS = (1, 4)


@dataclass(frozen=True)
class Settings:
    problems: int  # the first this many HumanEval problems, each verified once
    workers: int = VERIFY_WORKERS


QUICK = Settings(problems=40)
FULL = Settings(problems=164)


def _verify(suite: Suite, prompt: Prompt, answer: str) -> tuple[str, float, float]:
    """The failure's detail ("" when it passed), the score, and the seconds it took."""
    started = time.perf_counter()
    score, detail = score_verified(suite, prompt, answer, None) or (None, "no scorer")
    failed = "" if score == 1.0 else f"{prompt.id}: {detail}"
    return failed, score or 0.0, time.perf_counter() - started


def fleet_answers_per_s(suite: Suite, answers: list[str]) -> dict[int, float]:
    """The demo fleet's HumanEval answers per second at each level, by the simulator's schedule."""
    prompt_tokens = round(statistics.fmean(count_tokens(p.text) for p in suite.prompts))
    answer_tokens = round(statistics.fmean(count_tokens(a) for a in answers))
    specs = [e.sim for e in load_profile(DEMO_PROFILE).endpoints if e.sim is not None]
    return {
        c: sum(c / expected_e2e_s(spec, prompt_tokens, answer_tokens, c) for spec in specs)
        for c in LEVELS
    }


def run(settings: Settings) -> dict:
    suite = load_suites(BUILTIN_SUITES, ["humaneval"])["humaneval"]
    key = answer_key([suite])
    prompts = suite.prompts[: settings.problems]
    answers = [key[p.text].right for p in prompts]
    kind, why = sandbox_kind()
    started = time.perf_counter()
    with ThreadPoolExecutor(settings.workers) as pool:
        results = list(
            pool.map(lambda job: _verify(suite, *job), zip(prompts, answers, strict=True))
        )
    wall_s = time.perf_counter() - started
    latencies = sorted(seconds for _, _, seconds in results)
    fleet = fleet_answers_per_s(suite, [key[p.text].right for p in suite.prompts])
    return {
        "sandbox": kind,
        "sandbox_note": why,
        "verifications": len(results),
        "passed": sum(score == 1.0 for _, score, _ in results),
        "failed": [failed for failed, _, _ in results if failed],
        "load_average_1m": os.getloadavg()[0],
        "wall_s": wall_s,
        "per_s": len(results) / wall_s,
        "latency_p50_s": statistics.median(latencies),
        "latency_max_s": latencies[-1],
        "fleet_answers_per_s": {f"c={c}": rate for c, rate in fleet.items()},
    }


def targets(numbers: dict) -> list[Target]:
    fleet = numbers["fleet_answers_per_s"]
    return [
        Target(
            "canonical HumanEval solutions pass",
            "all",
            f"{numbers['passed']}/{numbers['verifications']}",
            numbers["passed"] == numbers["verifications"],
        ),
        *(
            Target(
                f"keeps up with the demo fleet at {level}",
                f">= {rate:.1f} verifications/s",
                f"{numbers['per_s']:.1f}/s",
                numbers["per_s"] >= rate,
            )
            for level, rate in fleet.items()
        ),
    ]


def report(numbers: dict) -> list[str]:
    rows = [
        [
            numbers["sandbox"],
            str(numbers["verifications"]),
            fmt(numbers["wall_s"], ".1f"),
            fmt(numbers["per_s"], ".1f"),
            fmt(numbers["latency_p50_s"] * 1000, ".0f"),
            fmt(numbers["latency_max_s"] * 1000, ".0f"),
            fmt(numbers["load_average_1m"], ".1f"),
        ]
    ]
    fleet = [[level, fmt(rate, ".1f")] for level, rate in numbers["fleet_answers_per_s"].items()]
    return [
        harness.table(
            f"Sandbox: HumanEval answers verified, {VERIFY_WORKERS} at a time",
            ["sandbox", "answers", "wall s", "per s", "p50 ms", "max ms", "load after"],
            rows,
        ),
        *(["Failed: " + "; ".join(numbers["failed"])] if numbers["failed"] else []),
        harness.table(
            "The demo fleet's HumanEval answer rate (simulator schedule, 7 endpoints)",
            ["level", "answers/s"],
            fleet,
        ),
    ]


NOTES = [
    "Each verification starts a sandbox (bubblewrap and a Python interpreter) and forks two "
    "children for the problem's check, the answer's process and the tests' (which alone writes "
    "the verdict), each call of the answer's function crossing a pipe between them: the "
    "start-up, not the tests, is most of its cost.",
    "The fleet's rate is for real-speed endpoints (time scale 1); a demo run faster than real "
    "time asks for that many times more, and its sends then wait on verification.",
]


def main(argv: list[str] | None = None) -> int:
    args = harness.parser(__doc__.splitlines()[0]).parse_args(argv)
    return harness.measure_and_publish(
        NAME,
        args,
        QUICK if args.quick else FULL,
        run=run,
        targets=targets,
        report=report,
        notes=NOTES,
    )


if __name__ == "__main__":
    sys.exit(main())

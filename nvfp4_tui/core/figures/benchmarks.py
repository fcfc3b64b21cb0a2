"""Standard-benchmark scores: each suite that runs a dataset (HumanEval, a JSONL file) in a
section of its own, labelled by benchmark and protocol, never pooled with the seed's suites.

A score is the verified one (HumanEval's pass@1: the share of answers whose code passed the
problem's tests), the mean of every answer over every load level, with ``n`` the distinct
problems scored and the Wilson 95% interval over that n (``board.prompt_score``): answers to one
problem at two load levels are one piece of evidence, not two.
"""

from __future__ import annotations

from dataclasses import dataclass

from nvfp4_tui.core.events import BenchmarkSuite
from nvfp4_tui.core.figures.board import Board, prompt_score
from nvfp4_tui.core.figures.scores import VERIFIED
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.core.stats import StatsSummary


@dataclass(frozen=True)
class BenchmarkSection:
    """One benchmark's score per endpoint that answered it."""

    benchmark: BenchmarkSuite
    scores: tuple[tuple[str, StatsSummary], ...]  # (endpoint id, score), in the run's order

    @property
    def label(self) -> str:
        """ "HumanEval pass@1, greedy, n=164, chat prompt v1": what the figure is and how it
        was taken (n: the problems planned)."""
        b = self.benchmark
        parts = [f"{b.benchmark} {b.metric}", b.sampling, f"n={b.problems}"]
        if b.problems < b.dataset_rows:
            parts[-1] += f" of {b.dataset_rows}"
        # Names from a suite file (someone else's, in a shared snapshot): shown as plain text.
        return outside_line(", ".join(parts + ([b.protocol] if b.protocol else [])))

    @property
    def note(self) -> str:
        """The dataset's rows left out, when some were."""
        skipped = self.benchmark.rows_skipped
        return f"{skipped} unusable row{'s' * (skipped != 1)} left out" if skipped else ""


def benchmark_sections(board: Board) -> list[BenchmarkSection]:
    """Every dataset suite of the run, with each endpoint's verified score on it."""
    sections = []
    for benchmark in board.benchmarks:
        scores = []
        for eid in board.endpoint_ids:
            rows = [r for r in board.rows if r.endpoint == eid and r.suite == benchmark.suite]
            score = prompt_score(rows, VERIFIED)
            if score.n:
                scores.append((eid, score))
        sections.append(BenchmarkSection(benchmark, tuple(scores)))
    return sections

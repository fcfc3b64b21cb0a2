"""What comparing two runs finds, as plain values: per cell, per load level and per GPU, each
figure in A and in B with its test and effect size (``nvfp4_tui.output.compare`` computes them
from two snapshots; ``compare``'s text, markdown and JSON and the compare screen format them).

A change is significant when its Holm-adjusted p-value is below the comparison's ``alpha``;
wherever it is tested, significant or not, it carries Cliff's delta, P(B > A) - P(B < A), -1 to
+1. A cell too small to test has no effect size either: at n = 1 a side delta can only read -1, 0
or +1, and any two different values read as the largest possible effect.

Endpoints pair by id, then by the model they serve, then by label; a pair whose label changed
says so. Times and speeds are compared only between endpoints that ran on the same clock: a
simulator run ``--time-scale 10`` times faster is on another one.
"""

from __future__ import annotations

from dataclasses import dataclass

from nvfp4_tui.core.figures.context import LadderPair, RungCapacityPair
from nvfp4_tui.core.figures.scores import SCORE_LABELS, VERIFIED
from nvfp4_tui.core.figures.server_view import ServerViewPair
from nvfp4_tui.core.slo import Load

EFFECT_SIZE = "Cliff's delta"
NOT_STEADY_MARK = "~"  # not the report's "*": here a star marks a significant change
MIN_N_FOR_TEST = 3  # below this per side no two-sided test at 5% can reject anyway


@dataclass(frozen=True)
class Metric:
    name: str
    column: str
    summary: str  # "mean" | "median"
    label: str
    spec: str  # format of values and deltas
    # A timing: warm-up and cool-down rows are left out, as the leaderboard leaves them out.
    timed: bool = True


SCORES = ("heuristic", "verified", "judge")


SPEEDS = ("decode_tps", "e2e_tps")


def metrics_for(
    score: str = SCORE_LABELS[VERIFIED], speed: str = "decode_tps"
) -> tuple[Metric, ...]:
    """The compared metrics, quality read from the ``score_<score>`` column, speed from
    ``speed`` (decode tok/s, or e2e tok/s: output tokens over the whole request, prefill in)."""
    if score not in SCORES:
        raise ValueError(f"score must be one of {list(SCORES)}, got {score!r}")
    if speed not in SPEEDS:
        raise ValueError(f"speed must be one of {list(SPEEDS)}, got {speed!r}")
    label = f"quality ({score}, mean)"
    speed_label = "decode tok/s" if speed == "decode_tps" else "e2e tok/s"
    return (
        Metric("quality", f"score_{score}", "mean", label, ".3f", timed=False),
        Metric(speed, speed, "mean", speed_label, ".1f"),
        Metric("ttft_p50_s", "ttft_s", "median", "TTFT p50 s", ".3f"),
    )


METRICS = metrics_for()


def relative_change(a: float | None, b: float | None) -> float | None:
    """(B - A) / A, or None when either is missing or A is 0."""
    return None if a is None or b is None or a == 0 else (b - a) / a


@dataclass(frozen=True)
class Pairing:
    """One endpoint of A and the one of B it is compared with, and what paired them."""

    endpoint_a: str
    endpoint_b: str
    label_a: str
    label_b: str
    matched_by: str  # "id" | "model" | "label"
    time_scale_a: float = 1.0  # the simulator's clock factor of each (1: real time)
    time_scale_b: float = 1.0

    @property
    def label(self) -> str:
        """The label both runs gave it, or ``A's → B's`` where it changed."""
        if self.label_a == self.label_b:
            return self.label_a
        return f"{self.label_a} → {self.label_b}"

    @property
    def same_clock(self) -> bool:
        return self.time_scale_a == self.time_scale_b


@dataclass(frozen=True)
class MetricChange:
    metric: Metric
    n_a: int
    n_b: int
    a: float | None  # the metric's summary (mean, or median for TTFT) in run A
    b: float | None
    p_value: float | None  # None: too few values to test
    p_adjusted: float | None = None
    significant: bool = False
    # The effect size wherever the change is tested, significant or not (module docstring).
    cliffs_delta: float | None = None

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a


@dataclass(frozen=True)
class Failures:
    """One side of a cell: its requests, the failed ones and the suspects (apart)."""

    requests: int
    errors: int
    suspect: int


@dataclass(frozen=True)
class CellComparison:
    endpoint_a: str
    endpoint_b: str
    label: str
    suite: str
    load: Load
    changes: tuple[MetricChange, ...]
    failures_a: Failures = Failures(0, 0, 0)
    failures_b: Failures = Failures(0, 0, 0)
    load_label: str = ""  # what was in flight, where a legacy script's level says otherwise

    @property
    def level(self) -> str:
        return self.load_label or self.load.label

    @property
    def n_a(self) -> int:
        """The requests of A its figures rest on: the fewest of its metrics'."""
        return min((c.n_a for c in self.changes), default=0)

    @property
    def n_b(self) -> int:
        return min((c.n_b for c in self.changes), default=0)


@dataclass(frozen=True)
class LevelChange:
    """One endpoint at one load level, every suite together: aggregate throughput (output
    tokens over the phases' wall time, from the leaderboard's levels) in A and in B."""

    endpoint_a: str
    endpoint_b: str
    label: str
    load: Load
    load_label: str
    throughput_a_tps: float | None
    throughput_b_tps: float | None
    # False: the level never held its concurrency most of the time (figures.leaderboard).
    steady_a: bool | None
    steady_b: bool | None

    @property
    def relative(self) -> float | None:
        return relative_change(self.throughput_a_tps, self.throughput_b_tps)


@dataclass(frozen=True)
class VramChange:
    """VRAM used (MiB, as nvidia-smi reports it), first and last sample of each run, on the GPU
    of one endpoint in A and the GPU of its pair in B (a model moved to another GPU is followed
    there); a GPU that no endpoint uses in either run is paired with itself."""

    gpu_a: int
    gpu_b: int
    label: str  # the pair's label (Pairing.label), "" for a GPU no endpoint uses
    before_a_mib: float
    after_a_mib: float
    before_b_mib: float
    after_b_mib: float

    @property
    def gpus(self) -> str:
        """``3``, or ``1 → 0`` where the pair's model moved to another GPU."""
        return str(self.gpu_a) if self.gpu_a == self.gpu_b else f"{self.gpu_a} → {self.gpu_b}"


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    alpha: float
    tests: int
    cells: tuple[CellComparison, ...]
    only_a: tuple[str, ...]  # endpoints (labels) without a match in the other run
    only_b: tuple[str, ...]
    metrics: tuple[Metric, ...] = METRICS  # the ones both runs measured, in column order
    missing: tuple[str, ...] = ()  # the metrics left out, each with the run that lacks it
    levels: tuple[LevelChange, ...] = ()
    vram: tuple[VramChange, ...] = ()
    # What the runs measured differs before any figure does (provenance.config_differences).
    configuration_changes: tuple[str, ...] = ()
    server_view: tuple[ServerViewPair, ...] = ()  # the servers' own figures, per level
    pairings: tuple[Pairing, ...] = ()
    context: tuple[LadderPair, ...] = ()  # the context ladder's rungs, per level
    context_capacity: tuple[RungCapacityPair, ...] = ()

    @property
    def pairing_notes(self) -> tuple[str, ...]:
        """What a reader must know of how the endpoints were paired: each label that changed,
        each pair made by model, and the clocks that differ (their times are left out)."""
        notes = [
            f"label changed: {p.label_a} → {p.label_b} (paired by {p.matched_by})"
            for p in self.pairings
            if p.label_a != p.label_b
        ]
        notes += [
            f"paired by the model they serve: {p.endpoint_a} → {p.endpoint_b}"
            for p in self.pairings
            if p.matched_by == "model" and p.label_a == p.label_b
        ]
        notes += [
            f"{p.label}: simulator clock ×{p.time_scale_a:g} in A, ×{p.time_scale_b:g} in B; "
            "its times and speeds are not compared"
            for p in self.pairings
            if not p.same_clock
        ]
        return tuple(notes)

    @property
    def significant(self) -> tuple[tuple[CellComparison, MetricChange], ...]:
        return tuple((c, m) for c in self.cells for m in c.changes if m.significant)

    @property
    def speed(self) -> Metric | None:
        return next((m for m in self.metrics if m.name in SPEEDS), None)

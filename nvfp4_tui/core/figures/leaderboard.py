"""The leaderboard: per endpoint, suite and load level, folded once from request rows and phase
totals. The live state feeds it event by event (``add_request``) and the report feeds it a
snapshot's rows summed per cell (``add_cell``: a million rows one by one would take seconds);
both end in the same accumulators and read the same ``LeaderRow``s, so a figure on screen and
the same figure in a report are one computation.

Rows a legacy script recorded with 0 output tokens and no error (its silent HTTP failures) are
imported as ``status="error"``, ``error_kind="suspect"``, and the client records a token count
its stream contradicts so too: they are counted in ``suspect``, apart from real errors, and never
averaged as zero scores.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from nvfp4_tui.core.events import SUSPECT_ERROR_KIND
from nvfp4_tui.core.figures.intervals import score_summary
from nvfp4_tui.core.figures.scores import SCORE_LABELS, SCORE_NAMES
from nvfp4_tui.core.figures.timings import DecodeRate, RequestTimings
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.stats import RunningStats, StatsSummary, finite
from nvfp4_tui.core.timing_doubt import doubt_of_lag

# A closed-loop level whose phases held their N requests in flight for less than this share of
# their wall time never reached steady state: its throughput reads low (the last wave of a short
# phase runs with fewer in flight), so the tables mark it.
STEADY_SHARE = 0.8

CellKey = tuple[str, str, int, float | None]  # endpoint id, suite, concurrency, rate (None: closed)
LevelKey = tuple[str, Load]  # endpoint id and load level: every suite together
_Totals = tuple[int, float, float, float, int, float | None]
_NO_TOTALS: _Totals = (0, 0.0, 0.0, 0.0, 0, None)


class RequestFacts(NamedTuple):
    """What the leaderboard reads of one request row (the order of ``REQUEST_COLUMNS``)."""

    endpoint_id: str
    suite: str
    prompt_id: str
    concurrency: int
    rate_rps: float | None
    phase: Hashable  # the phase the row belongs to: its index, with the run where runs repeat
    status: str
    error_kind: str | None
    trimmed: bool | None
    t: float  # when it was sent
    e2e_s: float | None
    ttft_s: float | None
    decode_tps: float | None
    e2e_tps: float | None
    tokens_out: int | None
    score_heuristic: float | None
    score_verified: float | None
    score_judge: float | None


@dataclass(frozen=True, slots=True)
class Moments:
    """Count, mean and sum of squared deviations of a column's values in one cell."""

    n: int
    mean: float
    m2: float  # the sample variance times (n - 1)

    def stats(self) -> RunningStats:
        return RunningStats.of_moments(self.n, self.mean, self.m2)


@dataclass(frozen=True, slots=True)
class CellTotals:
    """One cell's request rows summed by the caller (the report groups a million rows with
    polars): what ``add_request`` would have accumulated from them one by one."""

    endpoint_id: str
    suite: str
    concurrency: int
    rate_rps: float | None
    ok: int
    incomplete: int
    errors: int
    suspect: int
    quality: Mapping[str, tuple[Moments, frozenset[str]]]  # score name -> (moments, prompts)
    decode_tps: Moments
    e2e_tps: Moments
    tokens_out: Moments
    ttft_s: Sequence[float]
    decode_tps_values: Sequence[float]  # each timed request's own rate, for the median
    decode_tokens: float  # Σ decode_tps × (e2e − ttft): the tokens after each first chunk
    decode_s: float  # Σ (e2e − ttft) of the requests with a decode rate


class PhaseFacts(NamedTuple):
    """What the leaderboard reads of one finished phase."""

    endpoint_id: str
    suite: str
    concurrency: int
    rate_rps: float | None
    phase: Hashable
    output_tokens: int
    wall_s: float
    full_load_s: float | None  # closed loop: seconds with its N requests in flight (the runner's)
    loop_lag_p99_s: float | None = None  # the runner's event-loop lag (timing_doubt)


@dataclass(frozen=True, slots=True, eq=True)
class LeaderRow:
    """One endpoint x suite x load level cell of the leaderboard."""

    endpoint: str
    suite: str
    concurrency: int
    rate_rps: float | None  # open loop: requests/s (``concurrency`` then only caps, 0: none)
    requests: int
    ok: int
    incomplete: int
    errors: int  # failed requests, suspects not included
    suspect: int  # rows a legacy script recorded as 0 tokens without an error
    quality: Mapping[str, StatsSummary]  # score name -> mean with its Wilson interval
    # Score name -> the distinct prompts scored: repeats of one prompt are not independent
    # evidence, so a decision (route by task) counts prompts, not answers.
    scored_prompts: Mapping[str, frozenset[str]]
    decode_tps: StatsSummary  # mean per request of (tokens - first chunk's) / (e2e - ttft)
    decode: DecodeRate  # the same rate pooled over the cell's requests, and its p50
    e2e_tps: StatsSummary  # per request: tokens / e2e, the seed's "tok/s"
    tokens_out: StatsSummary  # per request: output tokens (the server's count)
    ttft_p50_s: float | None
    throughput_tps: float | None  # aggregate: the phases' output tokens / their wall time
    full_load_share: float | None  # closed loop: share of the phases' wall time at N in flight
    # How late its timings may read (the worst phase's loop lag p99, seconds) when over the
    # timing_doubt threshold; None when they can be trusted or lag was not measured.
    timing_doubt_s: float | None = None

    __hash__ = None  # type: ignore[assignment]  # holds a mapping

    @property
    def load(self) -> Load:
        return Load.of(self.concurrency, self.rate_rps)

    @property
    def n(self) -> int:
        """Requests that did not fail (ok or cut by max_tokens): those with scores and timings."""
        return self.ok + self.incomplete

    @property
    def tokens_out_mean(self) -> float | None:
        return self.tokens_out.mean

    @property
    def steady(self) -> bool | None:
        """False for a closed-loop level that never held its concurrency long enough to count
        as steady state; None where that does not apply (open loop, no finished phase)."""
        return None if self.full_load_share is None else self.full_load_share >= STEADY_SHARE

    def score(self, name: str) -> StatsSummary:
        return self.quality.get(name) or score_summary(RunningStats())

    def json(self, score_name: str) -> dict[str, Any]:
        """Stable keys for ``--format json`` and the exports: the shown score first (``score``
        names it), then every score's mean and n."""
        quality = self.score(score_name)
        body: dict[str, Any] = {
            "endpoint": self.endpoint,
            "suite": self.suite,
            "load": self.load.label,
            "concurrency": self.concurrency,
            "rate_rps": self.rate_rps,
            "n": self.n,
            "score": SCORE_LABELS.get(score_name, score_name),
            "quality_mean": quality.mean,
            "quality_n": quality.n,
            "quality_ci95_low": quality.ci95_low,
            "quality_ci95_high": quality.ci95_high,
        }
        for name in SCORE_NAMES:
            summary = self.score(name)
            body[f"quality_{SCORE_LABELS[name]}_mean"] = summary.mean
            body[f"quality_{SCORE_LABELS[name]}_n"] = summary.n
        body.update(
            decode_tps_pooled=self.decode.pooled_tps,
            decode_tps_p50=self.decode.p50_tps,
            decode_tps_mean=self.decode_tps.mean,
            e2e_tps_mean=self.e2e_tps.mean,
            tokens_out_mean=self.tokens_out_mean,
            ttft_p50_s=self.ttft_p50_s,
            throughput_tps=self.throughput_tps,
            full_load_share=self.full_load_share,
            steady=self.steady,
            timing_doubt_s=self.timing_doubt_s,
            errors=self.errors,
            incomplete=self.incomplete,
            suspect=self.suspect,
        )
        return body


@dataclass(frozen=True, slots=True)
class LevelRow:
    """One endpoint at one load level, every suite together: the throughput-vs-load point."""

    endpoint: str
    load: Load
    phases: int  # finished
    output_tokens: int
    wall_s: float
    throughput_tps: float | None
    full_load_share: float | None

    @property
    def steady(self) -> bool | None:
        return None if self.full_load_share is None else self.full_load_share >= STEADY_SHARE


class _Cell:
    __slots__ = (
        "decode_tps",
        "e2e_tps",
        "errors",
        "incomplete",
        "ok",
        "prompts",
        "quality",
        "suspect",
        "timings",
        "tokens_out",
    )

    def __init__(self) -> None:
        self.ok = 0
        self.incomplete = 0
        self.errors = 0
        self.suspect = 0
        self.quality: dict[str, RunningStats] = {}
        self.prompts: dict[str, set[str]] = {}
        self.decode_tps = RunningStats()
        self.e2e_tps = RunningStats()
        self.tokens_out = RunningStats()
        self.timings = RequestTimings()


class LeaderboardFold:
    """Request rows and finished phases in, leaderboard rows out; the order rows come in does
    not change a figure (a replay sorted by time reads what the live run read)."""

    def __init__(self) -> None:
        self._cells: dict[CellKey, _Cell] = {}
        # The timings of each endpoint's load level, every suite together: the pane's figures.
        self._levels: dict[LevelKey, RequestTimings] = {}
        # Finished phases by (endpoint, phase): a phase reported twice counts once.
        self._phases: dict[tuple[str, Hashable], PhaseFacts] = {}

    def _cell(self, key: CellKey) -> _Cell:
        cell = self._cells.get(key)
        if cell is None:
            cell = self._cells[key] = _Cell()
        return cell

    def _level(self, key: LevelKey) -> RequestTimings:
        level = self._levels.get(key)
        if level is None:
            level = self._levels[key] = RequestTimings()
        return level

    def add_request(self, row: RequestFacts) -> None:
        cell = self._cell((row.endpoint_id, row.suite, row.concurrency, row.rate_rps))
        if row.status == "error":
            if row.error_kind == SUSPECT_ERROR_KIND:
                cell.suspect += 1
            else:
                cell.errors += 1
            return
        if row.status == "incomplete":
            # A reply cut by max_tokens: its timings are as sound as an ok one's, and its score
            # stays, or models that ramble would look better than they are.
            cell.incomplete += 1
        else:
            cell.ok += 1
        for name in SCORE_NAMES:
            value = finite(getattr(row, name))
            if value is not None:
                stats = cell.quality.get(name)
                if stats is None:
                    stats = cell.quality[name] = RunningStats()
                    cell.prompts[name] = set()
                stats.add(value)
                cell.prompts[name].add(row.prompt_id)
        if row.trimmed:  # a warm-up or cool-down request: counted and scored, not timed
            return
        cell.timings.add(row.ttft_s, row.e2e_s, row.decode_tps)
        level = self._level((row.endpoint_id, Load.of(row.concurrency, row.rate_rps)))
        level.add(row.ttft_s, row.e2e_s, row.decode_tps)
        if (decode := finite(row.decode_tps)) is not None:
            cell.decode_tps.add(decode)
        if (e2e_tps := finite(row.e2e_tps)) is not None:
            cell.e2e_tps.add(e2e_tps)
        if row.tokens_out is not None:
            cell.tokens_out.add(row.tokens_out)

    def add_cell(self, totals: CellTotals) -> None:
        """Every request row of a cell at once (``CellTotals``)."""
        cell = self._cell((totals.endpoint_id, totals.suite, totals.concurrency, totals.rate_rps))
        cell.ok += totals.ok
        cell.incomplete += totals.incomplete
        cell.errors += totals.errors
        cell.suspect += totals.suspect
        for name, (moments, prompts) in totals.quality.items():
            if not moments.n:
                continue
            cell.quality[name] = RunningStats.merged(
                [cell.quality.get(name, RunningStats()), moments.stats()]
            )
            cell.prompts.setdefault(name, set()).update(prompts)
        cell.decode_tps = RunningStats.merged([cell.decode_tps, totals.decode_tps.stats()])
        cell.e2e_tps = RunningStats.merged([cell.e2e_tps, totals.e2e_tps.stats()])
        cell.tokens_out = RunningStats.merged([cell.tokens_out, totals.tokens_out.stats()])
        timed = (totals.ttft_s, totals.decode_tps_values, totals.decode_tokens, totals.decode_s)
        cell.timings.add_many(*timed)
        self._level((totals.endpoint_id, Load.of(totals.concurrency, totals.rate_rps))).add_many(
            *timed
        )

    def add_phase(self, done: PhaseFacts) -> None:
        self._phases[(done.endpoint_id, done.phase)] = done

    # ---- read-outs

    def has_scores(self, name: str) -> bool:
        return any((s := c.quality.get(name)) is not None and s.n for c in self._cells.values())

    def cells(self) -> Iterable[CellKey]:
        return self._cells.keys()

    def level_timings(self, endpoint_id: str, load: Load) -> RequestTimings | None:
        """The timed requests of one endpoint at one load level, every suite together."""
        return self._levels.get((endpoint_id, load))

    def suite_quality(self, endpoint_id: str, suite: str | None, name: str) -> StatsSummary:
        """One endpoint's score over every load level (and every suite when ``suite`` is None):
        the running quality a pane shows."""
        parts = [
            stats
            for (eid, s, _, _), cell in self._cells.items()
            if eid == endpoint_id
            and (suite is None or s == suite)
            and (stats := cell.quality.get(name))
        ]
        return score_summary(RunningStats.merged(parts))

    def rows(
        self,
        endpoint_order: Iterable[str] = (),
        suite_order: Iterable[str] = (),
        *,
        endpoint: str | None = None,
    ) -> tuple[LeaderRow, ...]:
        """Every cell (or ``endpoint``'s alone), by endpoint (in ``endpoint_order``, then any
        other by id), load level, then suite (in ``suite_order``, then as first seen)."""
        endpoints = {eid: i for i, eid in enumerate(endpoint_order)}
        suites = {suite: i for i, suite in enumerate(suite_order)}
        for _, suite, _, _ in self._cells:
            suites.setdefault(suite, len(suites))
        totals = self._phase_totals(endpoint)
        keys = sorted(
            (key for key in self._cells if endpoint is None or key[0] == endpoint),
            key=lambda k: (
                endpoints.get(k[0], len(endpoints)),
                k[0],
                Load.of(k[2], k[3]).order,
                k[2],
                suites[k[1]],
            ),
        )
        return tuple(self._row(key, totals.get(key)) for key in keys)

    def levels(
        self, endpoint_order: Iterable[str] = (), *, endpoint: str | None = None
    ) -> tuple[LevelRow, ...]:
        """Per endpoint (or ``endpoint`` alone) and load level with a finished phase: aggregate
        throughput and the share of the time it held its concurrency, by endpoint then lowest
        load first."""
        endpoints = {eid: i for i, eid in enumerate(endpoint_order)}
        sums: dict[tuple[str, Load], list[float]] = {}
        totals = self._phase_totals(endpoint)
        for key, (tokens, wall_s, full_s, timed_s, phases, _) in totals.items():
            level = (key[0], Load.of(key[2], key[3]))
            total = sums.setdefault(level, [0, 0.0, 0.0, 0.0, 0])
            for i, value in enumerate((tokens, wall_s, full_s, timed_s, phases)):
                total[i] += value
        ordered = sorted(
            sums, key=lambda k: (endpoints.get(k[0], len(endpoints)), k[0], k[1].order)
        )
        return tuple(
            LevelRow(
                endpoint=eid,
                load=load,
                phases=int(sums[(eid, load)][4]),
                output_tokens=int(sums[(eid, load)][0]),
                wall_s=sums[(eid, load)][1],
                throughput_tps=_ratio(sums[(eid, load)][0], sums[(eid, load)][1]),
                full_load_share=_ratio(sums[(eid, load)][2], sums[(eid, load)][3]),
            )
            for eid, load in ordered
        )

    def _phase_totals(self, endpoint: str | None = None) -> dict[CellKey, _Totals]:
        """Per cell (of ``endpoint``, or all): output tokens, wall seconds, (closed loop)
        full-load and timed seconds, the finished phases counted, and the worst timing doubt."""
        totals: dict[CellKey, _Totals] = {}
        for done in self._phases.values():
            if endpoint is not None and done.endpoint_id != endpoint:
                continue
            wall = finite(done.wall_s)
            if wall is None:
                continue  # a damaged row's NaN would make the whole cell's throughput NaN
            cell = (done.endpoint_id, done.suite, done.concurrency, done.rate_rps)
            tokens, wall_s, full_s, timed_s, phases, doubt = totals.get(cell, _NO_TOTALS)
            # Open loop: the concurrency only caps, there is no level to hold.
            full = finite(done.full_load_s) if done.rate_rps is None else None
            lag = doubt_of_lag(done.loop_lag_p99_s)
            totals[cell] = (
                tokens + done.output_tokens,
                wall_s + wall,
                full_s + (full or 0.0),
                timed_s + (wall if full is not None else 0.0),
                phases + 1,
                doubt if lag is None else max(lag, doubt or 0.0),
            )
        return totals

    def _row(self, key: CellKey, totals: _Totals | None) -> LeaderRow:
        cell = self._cells[key]
        endpoint_id, suite, concurrency, rate_rps = key
        tokens, wall_s, full_s, timed_s, _, doubt = totals or _NO_TOTALS
        return LeaderRow(
            endpoint=endpoint_id,
            suite=suite,
            concurrency=concurrency,
            rate_rps=rate_rps,
            requests=cell.ok + cell.incomplete + cell.errors + cell.suspect,
            ok=cell.ok,
            incomplete=cell.incomplete,
            errors=cell.errors,
            suspect=cell.suspect,
            quality={name: score_summary(stats) for name, stats in cell.quality.items()},
            scored_prompts={name: frozenset(ids) for name, ids in cell.prompts.items()},
            decode_tps=cell.decode_tps.summary(),
            decode=cell.timings.decode(),
            e2e_tps=cell.e2e_tps.summary(),
            tokens_out=cell.tokens_out.summary(),
            ttft_p50_s=cell.timings.ttft_p50_s,
            throughput_tps=_ratio(tokens, wall_s),
            full_load_share=_ratio(full_s, timed_s),
            timing_doubt_s=doubt,
        )


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole > 0 else None

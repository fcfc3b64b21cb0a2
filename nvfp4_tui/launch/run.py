"""Starting a run: headless with progress lines, or under the live UI; with or without the simulator."""

from __future__ import annotations

import asyncio
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from nvfp4_tui.bench.runner import plan_phases, unfilled_levels
from nvfp4_tui.bench.session import Session, SessionResult
from nvfp4_tui.config.keys import run_secrets
from nvfp4_tui.config.plan import LaunchPlan, plan_run
from nvfp4_tui.config.profile import Profile
from nvfp4_tui.config.telemetry_choice import TelemetryKind
from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.events import (
    EndpointStatus,
    Event,
    PhaseFinished,
    PhasePlan,
    RequestFinished,
    RunStarted,
)
from nvfp4_tui.core.figures.errors import PhaseErrors
from nvfp4_tui.core.figures.leaderboard import STEADY_SHARE
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.core.slo import Load, run_plans
from nvfp4_tui.core.timing_doubt import describe_timing_doubt
from nvfp4_tui.output.pane_json import PaneJsonLines, printing_panes
from nvfp4_tui.store.manifest import SnapshotError, new_run_id
from nvfp4_tui.telemetry.sampler import telemetry_for_run


class PhasePrinter:
    """Prints one line per finished phase and endpoint (the headless progress display)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream  # None: whatever sys.stdout is when a line is printed
        self._plans: dict[tuple[str, int], PhasePlan] = {}  # a phase's rate is only in its plan
        self._errors = PhaseErrors()

    @property
    def stream(self) -> TextIO:
        return self._stream or sys.stdout

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._plans = run_plans(event)
        if isinstance(event, RequestFinished):
            self._errors.add(event)
        if isinstance(event, EndpointStatus) and event.status in ("down", "error"):
            # The reason can quote a server (its model list): no escape reaches the terminal.
            reason = outside_line(event.message)
            print(
                f"{outside_line(event.endpoint_id):<16} {event.status}: {reason}", file=self.stream
            )
        if not isinstance(event, PhaseFinished):
            return
        plan = self._plans.get((event.endpoint_id, event.phase_index))
        load = Load.of(event.concurrency, plan.rate_rps if plan is not None else None)
        throughput = event.throughput_tps
        held = (
            f"  sends held {event.verify_wait_s:.1f} s for verification"
            if event.verify_wait_s >= 0.05
            else ""
        )
        doubt = describe_timing_doubt(event)
        late = f"  {doubt}" if doubt else ""
        common = self._errors.most_frequent(event.endpoint_id, event.phase_index)
        said = f"  most frequent error (×{common[1]}): {common[0]}" if common else ""
        full = ""
        if event.full_load_s is not None and event.wall_s > 0:
            share = event.full_load_s / event.wall_s
            steady = "" if share >= STEADY_SHARE else " (not steady)"
            full = f"  full load {share:>4.0%}{steady}"
        # Ids and suite names can come from a snapshot written elsewhere (follow).
        endpoint_id, suite = outside_line(event.endpoint_id), outside_line(event.suite)
        print(
            f"{endpoint_id:<16} {suite:<10} {load.label:<9} "
            f"{event.requests:>4} req {event.errors:>3} err "
            f"{throughput or 0:>8.1f} tok/s aggregate  {event.wall_s:>6.1f} s{full}{held}{late}{said}",
            file=self.stream,
            flush=True,
        )


async def _run_session(session: Session, panes: PaneJsonLines | None = None) -> SessionResult:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    # SIGHUP: the terminal of a foreground run went away (SSH drop); finish the snapshot.
    stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    for sig in stops:
        loop.add_signal_handler(sig, task.cancel)
    try:
        async with printing_panes(panes):  # the final figures once every phase is over
            result = await session.run()
    finally:
        for sig in stops:
            loop.remove_signal_handler(sig)
    if panes is not None:
        panes.print_server_view()
    return result


def run_headless(plan: LaunchPlan, out_root: Path, *, json_lines: bool = False) -> int:
    """Run without a UI: a line per finished phase and the report on stdout, or with
    ``json_lines`` only the panes' figures (``pane_json``), everything else on stderr. With
    ``run.trials`` over 1 the plan runs that many times, each to a snapshot of its own
    (``<run id>-trial1``...), then the trials' table; the exit code is the first failing
    trial's."""
    trials = plan.profile.run.trials
    if trials == 1:
        return _headless_once(plan, out_root, json_lines=json_lines)[0]
    human = sys.stderr if json_lines else sys.stdout
    base = new_run_id(plan.profile.run.name, datetime.now(UTC))
    codes, paths = [], []
    for trial in range(1, trials + 1):
        print(f"trial {trial} of {trials}", file=human, flush=True)
        code, path = _headless_once(
            plan, out_root, json_lines=json_lines, run_id=f"{base}-trial{trial}"
        )
        codes.append(code)
        if path is not None:
            paths.append(path)
    if len(paths) > 1:
        from nvfp4_tui.output.trials_report import render_trials
        from nvfp4_tui.store.reader import open_snapshot

        print(render_trials([open_snapshot(path) for path in paths]), file=human, flush=True)
    return next((code for code in codes if code != exit_codes.OK), exit_codes.OK)


def _headless_once(
    plan: LaunchPlan, out_root: Path, *, json_lines: bool, run_id: str | None = None
) -> tuple[int, Path | None]:
    """One run of the plan: its exit code and its snapshot (None when none was opened)."""
    from nvfp4_tui.output.report import print_summary

    plan, gpu_sources, messages = telemetry_for_run(plan)
    secrets = run_secrets(plan.profile)
    panes = PaneJsonLines() if json_lines else None
    session = Session(
        plan.profile,
        plan.suites,
        out_root,
        # With --json the human lines still go out, on stderr.
        subscribers=[PhasePrinter()] if panes is None else [panes, PhasePrinter(sys.stderr)],
        gpu_sources=gpu_sources,
        # A note can quote a server (/metrics, a GPU exporter): one safe line on the terminal.
        on_message=lambda m: print(outside_line(m, secrets=secrets), file=sys.stderr, flush=True),
        run_id=run_id,
    )
    try:
        session.open()
    except SnapshotError as error:
        print(error, file=sys.stderr)
        return exit_codes.USAGE, None
    for message in messages:
        print(outside_line(message, secrets=secrets), file=sys.stderr)
    human = sys.stderr if json_lines else sys.stdout
    print(f"snapshot: {session.snapshot_path}", file=human, flush=True)
    result = asyncio.run(_run_session(session, panes))
    if not json_lines:
        print_summary(session.snapshot_path)
    print(result.down_summary(), end="", file=human)
    print(f"run {result.status}; snapshot: {session.snapshot_path}", file=human)
    return result.exit_code, session.snapshot_path


# Bad dataset rows named one by one on stderr; past this many a suite's are counted only.
ROWS_LEFT_OUT_SHOWN = 20


def say_before_run(plan: LaunchPlan, stream: TextIO | None = None) -> None:
    """What the run will not do as planned, before it starts: each dataset row a suite left out
    as unusable, then how many (the report's benchmark section counts them too); and each
    level a phase's requests cannot fill."""
    stream = stream or sys.stderr
    for suite in plan.suites.values():
        if suite.dataset is None or not suite.dataset.skipped:
            continue
        skipped, others, runs = suite.dataset.skipped, suite.dataset.rows, len(suite.prompts)
        for line in skipped[:ROWS_LEFT_OUT_SHOWN]:
            print(line, file=stream)
        which = f"the {others} others" if runs == others else f"{runs} of the {others} others"
        print(
            f"{suite.name}: {len(skipped)} unusable row{'s' * (len(skipped) != 1)} of "
            f"{suite.dataset.source} left out; it runs {which}",
            file=stream,
            flush=True,
        )
    for line in unfilled_levels(plan_phases(plan.profile, plan.suites), plan.suites):
        print(line, file=stream, flush=True)


def _trials_run_once(plan: LaunchPlan) -> None:
    if plan.profile.run.trials > 1:
        print(
            f"note: [run] trials = {plan.profile.run.trials} runs only headless; "
            "the monitor runs the plan once",
            file=sys.stderr,
        )


def run_profile(
    profile: Profile, out_root: Path, *, headless: bool, json_lines: bool = False
) -> int:
    plan = plan_run(profile)
    say_before_run(plan)
    if headless:
        return run_headless(plan, out_root, json_lines=json_lines)
    from nvfp4_tui.launch.ui import run_with_ui

    _trials_run_once(plan)
    return run_with_ui(plan, out_root)


def run_demo(
    profile: Profile,
    out_root: Path,
    *,
    headless: bool,
    time_scale: float,
    gpu_telemetry: TelemetryKind,
    json_lines: bool = False,
) -> int:
    from nvfp4_tui.sim.process import SimProcess

    plan = plan_run(profile, gpu_telemetry=gpu_telemetry)
    say_before_run(plan)
    with SimProcess(profile.path, time_scale=time_scale) as sim:
        live = plan.with_urls(sim.urls, time_scale)
        if headless:
            return run_headless(live, out_root, json_lines=json_lines)
        from nvfp4_tui.launch.ui import run_with_ui

        _trials_run_once(plan)
        return run_with_ui(live, out_root)

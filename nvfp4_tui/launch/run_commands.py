"""`run` and `demo`: a profile with the command line's overrides, run here or detached.

What a command runs is imported once it runs: `--help`, or a line that fails to parse, should
not wait for the runner, polars and the UI to load.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from nvfp4_tui.core import exit_codes
from nvfp4_tui.launch.usage import UsageError, check_out, json_needs_headless

if TYPE_CHECKING:
    from nvfp4_tui.config.profile import Profile
    from nvfp4_tui.launch.detach import Detached

# `demo --full`: the seed's plan, every built-in suite at each level, 2 requests per prompt.
FULL_DEMO_SUITES = ("english", "japanese", "math", "coding", "design", "tool_call")
FULL_DEMO_REQUESTS = 2


def load_overridden(args: argparse.Namespace) -> Profile:
    """The profile with the command line's overrides; a bad profile or ``--out`` is exit 2."""
    from nvfp4_tui.config.profile import load_profile, with_overrides

    profile = load_profile(args.profile)
    check_out(args.out)
    if getattr(args, "full", False):  # under the options given beside it
        profile = with_overrides(profile, suites=FULL_DEMO_SUITES, requests=FULL_DEMO_REQUESTS)
    return with_overrides(
        profile,
        suites=args.suites,
        concurrency=args.concurrency,
        requests=args.requests,
        duration_s=args.duration,
        rate_rps=args.rate,
        arrivals=args.arrivals,
        burstiness=args.burstiness,
        sweep=args.sweep,
        workers=args.workers,
        sample=args.limit,
        synthetic=args.synthetic,
        trace=args.trace,
        trace_speedup=args.trace_speedup,
        sessions=args.sessions,
        turns=args.turns,
        think_s=args.think_s,
        slice_s=args.slice,
        ramp_s=args.ramp_s,
        trials=args.trials,
        context_lengths=args.context_lengths,
    )


def _trials_need_headless(args: argparse.Namespace) -> None:
    if args.trials is not None and args.trials > 1 and not args.headless:
        raise UsageError("--trials needs --headless: the monitor shows one run at a time")


def run_command(args: argparse.Namespace) -> int:
    json_needs_headless(args)
    _trials_need_headless(args)
    if args.detach:
        from nvfp4_tui.launch.detach import detach_run

        return _detached(args, lambda profile: detach_run(profile, args.out))
    from nvfp4_tui.launch.run import run_profile

    return run_profile(
        load_overridden(args), args.out, headless=args.headless, json_lines=args.json
    )


def demo_command(args: argparse.Namespace) -> int:
    json_needs_headless(args)
    _trials_need_headless(args)
    if args.detach:
        from nvfp4_tui.launch.detach import detach_demo

        return _detached(
            args,
            lambda profile: detach_demo(
                profile, args.out, time_scale=args.time_scale, gpu_telemetry=args.gpu_telemetry
            ),
        )
    from nvfp4_tui.launch.run import run_demo

    return run_demo(
        load_overridden(args),
        args.out,
        headless=args.headless,
        time_scale=args.time_scale,
        gpu_telemetry=args.gpu_telemetry,
        json_lines=args.json,
    )


def _detached(args: argparse.Namespace, detach: Callable[[Profile], Detached]) -> int:
    from nvfp4_tui.launch.detach import DetachError, print_detached

    if args.headless:
        raise UsageError("--detach and --headless: choose one (a detached run has no terminal)")
    try:
        detached = detach(load_overridden(args))
    except DetachError as e:
        print(f"nvfp4-tui: {e}", file=sys.stderr)
        return exit_codes.FAILED
    print_detached(detached)
    return exit_codes.OK

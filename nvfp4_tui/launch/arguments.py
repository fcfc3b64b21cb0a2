"""What the command line's values must be: each option's parser, one line when it is wrong."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.arrivals import ARRIVALS
from nvfp4_tui.config.telemetry_choice import HOST_KINDS, TelemetryKind
from nvfp4_tui.output.formats import COMPARE, EXPORT, REPORT

__all__ = ["COMPARE", "DEFAULT_OUT", "DEMO_PROFILE", "EXPORT", "MAX_TIME_SCALE", "REPORT"]
# `demo --gpu-telemetry`: where the demo's GPU samples come from (the simulator first).
HOST_TELEMETRY: tuple[TelemetryKind, ...] = ("sim", *(k for k in HOST_KINDS if k != "sim"))

# A simulator clock this many times real time still times tokens to the millisecond.
MAX_TIME_SCALE = 1000.0
DEFAULT_OUT = Path("snapshots")
N = TypeVar("N", int, float)


def _separated(text: str, number: Callable[[str], N], noun: str) -> tuple[N, ...]:
    try:
        return tuple(number(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected {noun} separated by commas, got {text!r}"
        ) from None


def int_list(text: str) -> tuple[int, ...]:
    values = _separated(text, int, "integers")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected integers >= 1, got {text!r}")
    return values


def rate_list(text: str) -> tuple[float, ...]:
    values = _separated(text, float, "requests/s")
    if not values or not all(0 < v < float("inf") for v in values):
        raise argparse.ArgumentTypeError(f"expected requests/s > 0, got {text!r}")
    return values


def name_list(text: str) -> tuple[str, ...]:
    values = tuple(x.strip() for x in text.split(",") if x.strip())
    if not values:
        raise argparse.ArgumentTypeError(f"expected names separated by commas, got {text!r}")
    return values


def time_scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_TIME_SCALE):
        raise argparse.ArgumentTypeError(
            f"expected a number above 0 and at most {MAX_TIME_SCALE:g}, got {text!r}"
        )
    return value


def speed(text: str) -> float | None:
    # Imported here: the replay source reads Parquet, and a command line that replays nothing
    # should not load polars to be parsed.
    from nvfp4_tui.sources.replay import parse_speed

    try:
        return parse_speed(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_plan_options(p: argparse.ArgumentParser) -> None:
    """What `run` and `demo` both take: where to write, and the plan's overrides."""
    p.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="snapshot root (default snapshots/)"
    )
    p.add_argument("--suites", type=name_list, help="suites to run, e.g. english,math")
    p.add_argument(
        "--synthetic",
        metavar="SPEC",
        help="generated prompts by length, e.g. isl=512,osl=128,dist=normal,sd=16 "
        "(the run's only suite unless --suites is given too)",
    )
    p.add_argument(
        "--context-lengths",
        metavar="LENGTHS",
        help="the context ladder: prompts of these lengths hiding facts to recall, e.g. "
        "1k,4k,16k,max (max: each endpoint's own context; the run's only suites unless "
        "--suites is given too)",
    )
    p.add_argument(
        "--trace",
        type=Path,
        metavar="FILE.jsonl",
        help="replay a trace's requests at its times (Mooncake's format, or at_s/input_tokens/"
        "output_tokens lines; the run's only suite unless --suites is given too)",
    )
    p.add_argument(
        "--trace-speedup",
        type=float,
        metavar="X",
        help="send the trace X times faster than it was recorded (default 1)",
    )
    p.add_argument(
        "--sessions",
        type=int,
        metavar="N",
        help="N multi-turn conversations, each turn sent with the history so far; a level's "
        "concurrency counts conversations (the run's only suite unless --suites is given too)",
    )
    p.add_argument("--turns", type=int, metavar="T", help="turns per session (default 3)")
    p.add_argument(
        "--trials",
        type=int,
        metavar="N",
        help="run the plan N times (headless), then each figure's mean and 95%% interval "
        "across the runs",
    )
    p.add_argument(
        "--slice",
        type=float,
        metavar="S",
        help="the report gives every phase's figures also per S seconds",
    )
    p.add_argument(
        "--think-s",
        type=float,
        metavar="S",
        help="seconds between an answer and the session's next turn (default 0)",
    )
    p.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="run at most N prompts per suite, a sample picked by the run's seed",
    )
    load = p.add_mutually_exclusive_group()
    load.add_argument("--concurrency", type=int_list, help="concurrency levels, e.g. 1,4")
    load.add_argument(
        "--ramp-s",
        type=float,
        metavar="S",
        help="each phase climbs to its level over its first S seconds (rate from 0, or the "
        "closed loop's slots opening one after another)",
    )
    load.add_argument("--rate", type=rate_list, help="open loop: requests/s per level, e.g. 2,4")
    p.add_argument(
        "--arrivals",
        choices=ARRIVALS,
        help="open-loop arrivals (default poisson)",
    )
    p.add_argument(
        "--burstiness",
        type=float,
        metavar="B",
        help="gamma arrivals: below 1 burstier than Poisson, above 1 more even (default 1)",
    )
    p.add_argument(
        "--sweep", action="store_true", help="climb the load until a stop rule fires; report knees"
    )
    bound = p.add_mutually_exclusive_group()
    bound.add_argument("--requests", type=int, help="requests per prompt per phase")
    bound.add_argument("--duration", type=float, help="seconds per phase instead of a count")
    p.add_argument(
        "--workers",
        type=int,
        help="runner processes to share the endpoints over (default: from endpoints and cores)",
    )
    p.add_argument("--headless", action="store_true", help="no UI: progress lines and a summary")
    p.add_argument(
        "--json",
        action="store_true",
        help="with --headless: every pane's figures as one JSON object per endpoint per second",
    )

"""The `nvfp4-tui` command: parses arguments and hands each subcommand to the module that owns it."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from nvfp4_tui import __version__
from nvfp4_tui.tomlcheck import ConfigError

REPO_PROFILES = Path(__file__).resolve().parent.parent / "profiles"
DEMO_PROFILE = REPO_PROFILES / "demo.toml"
DEFAULT_OUT = Path("snapshots")


class UsageError(Exception):
    """A bad command line or input file: one line, exit 2."""


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected integers separated by commas, got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected integers >= 1, got {text!r}")
    return values


def _name_list(text: str) -> tuple[str, ...]:
    values = tuple(x.strip() for x in text.split(",") if x.strip())
    if not values:
        raise argparse.ArgumentTypeError(f"expected names separated by commas, got {text!r}")
    return values


def _add_plan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="snapshot root (default snapshots/)"
    )
    p.add_argument("--suites", type=_name_list, help="suites to run, e.g. english,math")
    p.add_argument("--concurrency", type=_int_list, help="concurrency levels, e.g. 1,4")
    bound = p.add_mutually_exclusive_group()
    bound.add_argument("--requests", type=int, help="requests per prompt per phase")
    bound.add_argument("--duration", type=float, help="seconds per phase instead of a count")
    p.add_argument("--headless", action="store_true", help="no UI: progress lines and a summary")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nvfp4-tui",
        description="Monitor and benchmark a box of GPUs serving LLMs behind OpenAI-compatible APIs.",
    )
    parser.add_argument("--version", action="version", version=f"nvfp4-tui {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="run the simulated 7-GPU fleet (no GPU or network needed)")
    _add_plan_options(demo)
    demo.add_argument("--profile", type=Path, default=DEMO_PROFILE, help=argparse.SUPPRESS)
    demo.add_argument(
        "--time-scale", type=float, default=1.0, help="run the simulator's clock faster"
    )
    demo.add_argument(
        "--gpu-telemetry",
        choices=("sim", "nvml", "none"),
        default="sim",
        help="where GPU samples come from (default: the simulator)",
    )

    run = sub.add_parser("run", help="benchmark the endpoints of a fleet profile")
    run.add_argument("profile", type=Path)
    _add_plan_options(run)

    sim = sub.add_parser("sim", help="serve a profile's simulated endpoints on 127.0.0.1")
    sim.add_argument("profile", type=Path)
    sim.add_argument("--port-base", type=int, help="first port (default: chosen by the OS)")
    sim.add_argument("--time-scale", type=float, default=1.0)

    gpus = sub.add_parser("gpus", help="print the GPUs and metrics sources this host can see")
    gpus.add_argument("--profile", type=Path)
    return parser


def _load_profile(args: argparse.Namespace):
    from nvfp4_tui.profile import load_profile, with_overrides

    profile = load_profile(args.profile)
    return with_overrides(
        profile,
        suites=args.suites,
        concurrency=args.concurrency,
        requests=args.requests,
        duration_s=args.duration,
    )


def cmd_run(args: argparse.Namespace) -> int:
    profile = _load_profile(args)
    from nvfp4_tui.launch import run_profile

    return run_profile(profile, args.out, headless=args.headless)


def cmd_demo(args: argparse.Namespace) -> int:
    profile = _load_profile(args)
    from nvfp4_tui.launch import run_demo

    return run_demo(
        profile,
        args.out,
        headless=args.headless,
        time_scale=args.time_scale,
        gpu_telemetry=args.gpu_telemetry,
    )


def cmd_sim(args: argparse.Namespace) -> int:
    from nvfp4_tui.profile import load_profile
    from nvfp4_tui.sim.fleet import serve_forever

    return serve_forever(
        load_profile(args.profile), port_base=args.port_base, time_scale=args.time_scale
    )


def cmd_gpus(args: argparse.Namespace) -> int:
    from nvfp4_tui.profile import load_profile
    from nvfp4_tui.telemetry.gpus_command import gpus_command

    return gpus_command(load_profile(args.profile) if args.profile else None)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "demo": cmd_demo,
    "run": cmd_run,
    "sim": cmd_sim,
    "gpus": cmd_gpus,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (ConfigError, UsageError) as e:
        if args.debug:
            traceback.print_exc()
        print(str(e), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # the one place an unexpected failure becomes a one-line message
        if args.debug:
            raise
        print(
            f"nvfp4-tui: {type(e).__name__}: {e} (run with --debug for the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())

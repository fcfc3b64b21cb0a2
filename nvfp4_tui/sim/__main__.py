"""``python -m nvfp4_tui.sim PROFILE``: serve a profile's simulated endpoints until stopped."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nvfp4_tui.config.profile import ConfigError, load_profile
from nvfp4_tui.sim.fleet import serve_forever


def _positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nvfp4_tui.sim",
        description="Serve the simulated endpoints of a fleet profile on loopback.",
        allow_abbrev=False,
    )
    parser.add_argument("profile", type=Path, help="fleet profile (TOML)")
    parser.add_argument(
        "--port-base",
        type=int,
        default=None,
        help="first port (then +1 per endpoint); 0 lets the OS choose; default: profile URLs",
    )
    parser.add_argument(
        "--time-scale", type=_positive, default=1.0, help="run the schedule this many times faster"
    )
    parser.add_argument("--json", action="store_true", help="print JSON lines, then {ready:true}")
    parser.add_argument(
        "--stop-on-eof", action="store_true", help="stop when stdin closes (the parent died)"
    )
    args = parser.parse_args(argv)
    try:
        profile = load_profile(args.profile)
    except ConfigError as e:
        print(e, file=sys.stderr)
        return 2
    return serve_forever(
        profile,
        port_base=args.port_base,
        time_scale=args.time_scale,
        json_lines=args.json,
        stop_on_stdin_eof=args.stop_on_eof,
    )


if __name__ == "__main__":
    sys.exit(main())

"""Commands about this host and its servers: `sim`, `gpus`, `init` and `serve`."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from nvfp4_tui.core import exit_codes
from nvfp4_tui.launch.usage import UsageError


def sim_command(args: argparse.Namespace) -> int:
    if args.write_profile is not None:
        return _write_fleet_profile(args)
    if args.profile is None:
        raise UsageError("sim: give a profile to serve, or --write-profile FILE")
    from nvfp4_tui.config.profile import load_profile
    from nvfp4_tui.sim.fleet import serve_forever

    return serve_forever(
        load_profile(args.profile), port_base=args.port_base, time_scale=args.time_scale
    )


def _write_fleet_profile(args: argparse.Namespace) -> int:
    from nvfp4_tui.sim.fleet_profile import fleet_profile_text

    if args.profile is not None:
        raise UsageError("sim: --write-profile writes a profile; it takes no profile to serve")
    if args.write_profile.exists():
        raise UsageError(f"{args.write_profile}: exists; not overwritten")
    try:
        text = fleet_profile_text(args.nodes, args.gpus_per_node)
    except ValueError as e:
        raise UsageError(f"sim --write-profile: {e}") from None
    args.write_profile.write_text(text)
    print(f"wrote {args.write_profile}: {args.nodes * args.gpus_per_node} simulated endpoints")
    return exit_codes.OK


def gpus_command(args: argparse.Namespace) -> int:
    from nvfp4_tui.config.profile import load_profile
    from nvfp4_tui.telemetry.gpus_command import gpus_command as print_gpus

    return print_gpus(load_profile(args.profile) if args.profile else None)


def init_command(args: argparse.Namespace) -> int:
    from nvfp4_tui.profile_init import init_profile

    written = init_profile(
        args.out,
        force=args.force,
        compose=args.from_compose,
        hosts=args.hosts,
        ports=args.ports,
        urls=args.urls,
    )
    print(f"wrote {args.out}: {len(written.endpoints)} endpoints")
    for d in written.endpoints:
        guess = f"  class {d.class_guess.model_class} (a guess)" if d.class_guess else ""
        print(f"  {d.id:<16} {d.url:<24} model {d.model}  gpu {d.gpu}{guess}")
    for line in written.left_out:
        print(f"  {line}")
    print(f"next: check its labels, GPUs and classes, then nvfp4-tui run {args.out}")
    return exit_codes.OK


def serve_command(
    args: argparse.Namespace, parse: Callable[[Sequence[str]], argparse.Namespace]
) -> int:
    """``parse`` is the whole command line's parser: the served arguments fail here, once,
    rather than in every browser tab."""
    from nvfp4_tui.launch.serve import ServeError, serve

    try:
        parsed = parse(args.served) if args.served else argparse.Namespace()
        return serve(
            args.served, parsed, args.host, args.port, args.max_sessions, args.allow_origin
        )
    except ServeError as e:
        raise UsageError(str(e)) from None

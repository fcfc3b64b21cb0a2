"""Bad input to a command (its line, a file it names, a snapshot it cannot read) as exit 2, and
a snapshot read only in part as exit 4, each told in one line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.outside_text import outside_line


class UsageError(Exception):
    """A bad command line or input file: one line, exit 2."""


def check_out(out: Path) -> None:
    """A ``--out`` that cannot hold snapshots is bad input (exit 2), refused before the run."""
    from nvfp4_tui.store.writer import check_out_root

    with usage_errors():
        check_out_root(out)


def json_needs_headless(args: argparse.Namespace) -> None:
    if args.json and not args.headless:
        raise UsageError("--json goes with --headless (the monitor shows the panes itself)")


@contextmanager
def usage_errors() -> Iterator[None]:
    """A snapshot or output path that cannot be read or written, or a missing figures extra,
    told as bad input (exit 2) in its one line."""
    from nvfp4_tui.output.figures import FiguresExtraMissing
    from nvfp4_tui.store.manifest import SnapshotError

    try:
        yield
    except (SnapshotError, FiguresExtraMissing) as e:
        raise UsageError(str(e)) from None


def said_unreadable(path: Path, warnings: Sequence[str]) -> int:
    """Print each file or row of the snapshot at ``path`` that could not be read, and what that
    means, on stderr; DAMAGED when there was one, else OK."""
    skipped = list(dict.fromkeys(warnings))  # a follow and its final read name a part alike
    for warning in skipped:
        print(f"warning: {outside_line(warning)}", file=sys.stderr)
    if not skipped:
        return exit_codes.OK
    print(
        f"nvfp4-tui: {outside_line(str(path))} was read only in part: {len(skipped)} file(s) or "
        f"row(s) skipped, named above; the output leaves them out (exit {exit_codes.DAMAGED})",
        file=sys.stderr,
    )
    return exit_codes.DAMAGED

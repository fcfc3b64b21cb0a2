"""A command's outcome as the process's exit code: every failure one line on stderr."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable

from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.core import exit_codes
from nvfp4_tui.core.outside_text import outside_line, outside_text
from nvfp4_tui.launch.usage import UsageError

Command = Callable[[argparse.Namespace], int]


def exit_code(command: Command, args: argparse.Namespace) -> int:
    """``command(args)``'s exit code; ``args.debug`` shows a failure's traceback."""
    try:
        return command(args)
    except (ConfigError, UsageError) as e:
        if args.debug:
            traceback.print_exc()
        print(outside_text(str(e)), file=sys.stderr)
        return exit_codes.USAGE
    except KeyboardInterrupt:
        return exit_codes.STOPPED
    except BrokenPipeError:
        # The reader of stdout went away (``| head``): what it wanted it has. Point stdout at
        # /dev/null, so that flushing it at exit does not fail a second time.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return exit_codes.OK
    except Exception as e:  # the one place an unexpected failure becomes a one-line message
        if args.debug:
            raise
        print(
            outside_line(
                f"nvfp4-tui: {type(e).__name__}: {e} (run with --debug for the traceback)"
            ),
            file=sys.stderr,
        )
        return exit_codes.FAILED

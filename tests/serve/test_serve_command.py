"""`serve` checks what it is asked to serve before it binds anything."""

from __future__ import annotations

import shlex
import sys

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.launch.serve import ServeError, served_command, tunnel_hint


def test_a_view_is_served_by_this_interpreter() -> None:
    command = shlex.split(served_command(["replay", "snapshots/my run"]))
    assert command == [sys.executable, "-m", "nvfp4_tui.cli", "replay", "snapshots/my run"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "name the command to serve"),
        (["run", "p.toml"], "start a run with `run --detach` and serve `follow`"),
        (["export", "x"], "'export' cannot be served"),
        (["demo", "--headless"], "--headless leaves nothing to show"),
    ],
)
def test_what_cannot_be_served_is_refused(args: list[str], message: str) -> None:
    with pytest.raises(ServeError, match=message):
        served_command(args)


def test_refusal_is_a_usage_error_before_binding(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--port", "1", "run", "p.toml"]) == 2
    assert "cannot be served" in capsys.readouterr().err


def test_loopback_gets_the_tunnel_and_any_other_address_a_warning() -> None:
    assert "ssh -N -L 8000:127.0.0.1:8000" in tunnel_hint("127.0.0.1", 8000)
    assert tunnel_hint("0.0.0.0", 8000).startswith("warning: bound to 0.0.0.0")

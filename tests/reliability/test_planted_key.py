"""A planted key is found in no artefact, and a hostile label reaches no terminal raw.

A real headless run (``nvfp4-tui run --headless`` in its own process, the key in the env var the
profile names) goes to servers that send the key back: in /v1/models ids (the endpoint is down,
its health message recorded), in an error body and a malformed chunk across the excerpt's cut,
in a judge's reason, and in /metrics bodies that carry terminal escapes too. One simulated
endpoint answers properly, under a label with escapes and U+202E. Then every artefact is read:
each Parquet file of the snapshot as bytes and as a table, the manifest, every export (csv,
parquet, json, markdown), the report in text, markdown and json, replay and follow headless,
and each command's stdout and stderr. The readers run in this process, which never read the
key: what they print is what a reader elsewhere would see.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import polars as pl
import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.sim.fleet import SimFleet
from nvfp4_tui.store.reader import open_snapshot
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.key_echoes import serve_echoes
from tests.reliability.runs import hostile_endpoint_toml, rows_of, write_run_profile

pytestmark = pytest.mark.slow  # a run in its own process, then nine commands that read it

KEY_ENV = "NVFP4_PLANTED_KEY"
KEY = "sk-planted-8d41c0e7b2-found-nowhere"
LABEL_TOML = "sim \\u001b]0;pwned\\u0007\\u202ekcatta\\u001b[2J"  # TOML escapes: ESC, BEL, RLO
ECHOES = ["models_echo", "error_cut", "chunk_cut"]
RUN_TIMEOUT_S = 90.0
TERMINAL_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e")
JUDGE = """
[judge]
url = "{url}"
model = "judge"
api_key_env = "{env}"
[judge.rubrics]
essay = "Reward a clear thesis."
"""


def _profile(directory: Path, urls: dict[str, str], sim_url: str) -> Path:
    endpoints = [hostile_endpoint_toml(name, urls[name], api_key_env=KEY_ENV) for name in ECHOES]
    sim = endpoint_toml("sim_auth", 0, decode_tps=400.0, ttft_s=0.02)
    sim = sim.replace('model = "current"', f'model = "current"\napi_key_env = "{KEY_ENV}"')
    sim = sim.replace('class = "moe"', f'class = "moe"\nlabel = "{LABEL_TOML}"')
    endpoints.append(sim.replace("http://127.0.0.1:18000", sim_url))
    path = write_run_profile(directory, endpoints, requests=1, timeout_s=5.0)
    path.write_text(path.read_text() + JUDGE.format(url=urls["judge"], env=KEY_ENV))
    return path


async def _headless_run(tmp_path: Path, out: Path) -> tuple[str, str]:
    async with serve_echoes([*ECHOES, "judge"]) as urls:
        probe = write_run_profile(tmp_path / "probe", [endpoint_toml("sim_auth", 0)], requests=1)
        async with SimFleet(load_profile(probe).endpoints) as fleet:
            path = _profile(tmp_path, urls, fleet.urls["sim_auth"])
            process = await asyncio.create_subprocess_exec(
                *(sys.executable, "-m", "nvfp4_tui.cli", "run", str(path), "--headless"),
                *("--out", str(out)),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={**os.environ, KEY_ENV: KEY},
            )
            stdout, stderr = await asyncio.wait_for(process.communicate(), RUN_TIMEOUT_S)
    assert process.returncode == 0, stderr.decode()
    return stdout.decode(), stderr.decode()


def _read_back(snapshot: Path, exports: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """Every reader's stdout and stderr, in turn; the exports land under ``exports``."""
    commands = [
        ["export", str(snapshot), "--format", "csv", "--out", str(exports / "csv")],
        ["export", str(snapshot), "--format", "parquet", "--out", str(exports / "parquet")],
        ["export", str(snapshot), "--format", "json", "--out", str(exports / "report.json")],
        ["export", str(snapshot), "--format", "markdown", "--out", str(exports / "report.md")],
        ["report", str(snapshot)],
        ["report", str(snapshot), "--format", "markdown"],
        ["report", str(snapshot), "--format", "json"],
        ["replay", str(snapshot), "--headless"],
        ["follow", str(snapshot), "--headless"],
    ]
    printed = []
    for argv in commands:
        assert main(argv) == 0, argv
        captured = capsys.readouterr()
        printed += [captured.out, captured.err]
    return printed


def _tables_as_text(root: Path) -> str:
    frames = [pl.read_parquet(path) for path in sorted(root.rglob("*.parquet"))]
    return "\n".join(frame.write_csv() for frame in frames)


def test_a_planted_key_is_found_in_no_artefact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, exports = tmp_path / "out", tmp_path / "exports"
    run_out, run_err = asyncio.run(_headless_run(tmp_path, out))
    (snapshot,) = [p for p in out.iterdir() if p.is_dir()]

    # The key travelled and came back in every place, scrubbed on the way in.
    rows = rows_of(open_snapshot(snapshot))
    assert "Bearer ***" in run_out  # the down endpoint's health message on stdout
    assert "***" in rows["error_cut"].get_column("error_message")[0]
    assert "***" in rows["chunk_cut"].get_column("error_message")[0]
    judged = rows["sim_auth"].get_column("score_judge_detail")[0]
    assert judged.startswith("judge:7/10|fine; you sent Bearer ***"), judged
    assert f"sending ${KEY_ENV} to 127.0.0.1:" in run_err
    assert "not Prometheus text" in run_err  # the /metrics echoes were read and quoted

    printed = _read_back(snapshot, exports, capsys)
    terminal = [run_out, run_err, *printed]
    texts = [*terminal, _tables_as_text(out), _tables_as_text(exports)]
    texts += [json.dumps(open_snapshot(snapshot).manifest)]
    files = [p for root in (out, exports) for p in root.rglob("*") if p.is_file()]
    assert {"requests.csv", "report.json", "report.md"} <= {p.name for p in files}
    for secret in (KEY, KEY[:12]):
        assert [p for p in files if secret.encode() in p.read_bytes()] == []
        assert [i for i, text in enumerate(texts) if secret in text] == []

    # The label's escapes reach no terminal, Markdown or CSV raw; its text does.
    shown = [*terminal, *(p.read_text() for p in files if p.suffix in (".md", ".csv"))]
    assert [c for c in TERMINAL_CONTROLS if any(c in text for text in shown)] == []
    assert "sim ]0;pwned" not in printed[8] and "sim kcatta" in printed[8]  # report text

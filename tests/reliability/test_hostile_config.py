"""Random TOML and random values for every key of profiles and suites: never a traceback.

Whatever the file holds, the readers either accept it or raise ConfigError whose every line names
the file; the command line turns that into those lines on stderr and exit code 2.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nvfp4_tui import cli
from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.config.suites import load_suite, load_suites
from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.launch import run as launch
from tests.reliability.toml_fuzz import (
    discover_keys,
    mutated,
    mutations,
    shown,
    toml_document,
)

REPO = Path(__file__).resolve().parents[2]
SHIPPED_SUITES = BUILTIN_SUITES
PROMPTS_KEPT = 1  # of each shipped suite: every table shape, quick to read
LINE_MAX_CHARS = 600
FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

BASE_PROFILE: dict[str, Any] = {
    "run": {
        "name": "fuzz",
        "suites": ["essay"],
        "concurrency": [1, 2],
        "requests": 2,
        "timeout_s": 5.0,
        "warmup": False,
        "retries": 1,
    },
    "endpoint": [
        {
            "id": "sim0",
            "url": "http://127.0.0.1:18000",
            "model": "current",
            "gpu": 0,
            "class": "moe",
            "telemetry": "none",
            "sim": {"decode_tps": 100.0, "ttft_s": 0.1, "faults": {"down": False}},
        },
        {
            "id": "real1",
            "url": "https://127.0.0.1:18001/v1",
            "model": "current",
            "api_key_env": "FUZZ_KEY",
            "verify_tls": True,
            "telemetry": "none",
            "extra_body": {"top_k": 20},
        },
    ],
}


def _write(directory: Path, name: str, doc: dict[str, Any]) -> Path:
    path = directory / name
    path.write_text(toml_document(doc), encoding="utf-8")
    return path


def _load_profile_doc(doc: dict[str, Any]) -> object:
    with tempfile.TemporaryDirectory() as directory:
        return load_profile(_write(Path(directory), "profile.toml", doc))


@cache
def profile_keys() -> list:
    return discover_keys(_load_profile_doc, BASE_PROFILE)


def _shipped_suite_docs() -> dict[str, dict[str, Any]]:
    docs = {}
    for path in sorted(SHIPPED_SUITES.glob("*.toml")):
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        if "prompt" in doc:  # a dataset suite (humaneval) has none: its rows come from a file
            doc["prompt"] = doc["prompt"][:PROMPTS_KEPT]
        docs[path.stem] = doc
    return docs


SUITE_DOCS = _shipped_suite_docs()


@cache
def suite_keys(name: str) -> list:
    def load(doc: dict[str, Any]) -> object:
        with tempfile.TemporaryDirectory() as directory:
            return load_suite(_write(Path(directory), f"{name}.toml", doc))

    return discover_keys(load, SUITE_DOCS[name])


def _assert_one_line_each(error: ConfigError, path: Path) -> None:
    assert error.problems, "a ConfigError without a problem"
    for line in error.problems:
        assert line.startswith(f"{path}: "), line
        # One line for any reader: no CR, LF, NEL or Unicode line separator inside.
        assert len(line.splitlines()) == 1 and len(line) <= LINE_MAX_CHARS, line


def test_the_fuzzers_reach_every_kind_of_key() -> None:
    keys = {".".join(str(step) for step in path) for path in profile_keys()}
    for expected in (
        "run.retries",
        "run.timeout_s",
        "endpoint.0.sim.faults.drip_s",
        "endpoint.1.verify_tls",
        "endpoint.1.api_key_env",
    ):
        assert expected in keys, sorted(keys)
    tool_keys = {".".join(str(step) for step in path) for path in suite_keys("tool_call")}
    assert any(key.startswith("prompt.0.tools.0.function") for key in tool_keys), tool_keys


@FUZZ
@given(data=st.data())
def test_random_values_in_a_profile_are_one_line_errors(data: st.DataObject) -> None:
    change = data.draw(mutations(profile_keys()), label="change")
    doc = mutated(BASE_PROFILE, change)
    with tempfile.TemporaryDirectory() as directory:
        path = _write(Path(directory), "profile.toml", doc)
        try:
            load_profile(path)
            accepted = True
        except ConfigError as error:
            _assert_one_line_each(error, path)
            accepted = False
        code, stderr = _run_cli(path, Path(directory))
    assert code == (0 if accepted else 2), (shown(change), stderr)
    assert "Traceback" not in stderr
    if not accepted:
        assert all(line.startswith(f"{path}: ") for line in stderr.splitlines()), stderr
        assert len(stderr.splitlines()) == len(stderr.rstrip("\n").split("\n"))


def _run_cli(path: Path, directory: Path) -> tuple[int, str]:
    """``nvfp4-tui run PATH --headless`` up to the point where a run would start."""
    stderr = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stderr(stderr):
        patch.setattr(launch, "run_profile", lambda *_a, **_k: 0)
        code = cli.main(["run", str(path), "--headless", "--out", str(directory / "out")])
    return code, stderr.getvalue()


@FUZZ
@given(text=st.text(max_size=300) | st.binary(max_size=300).map(lambda b: b.decode("latin-1")))
def test_random_text_as_a_profile_is_a_one_line_error(text: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "profile.toml"
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        with pytest.raises(ConfigError) as caught:
            load_profile(path)
        _assert_one_line_each(caught.value, path)
        code, stderr = _run_cli(path, Path(directory))
    assert code == 2 and "Traceback" not in stderr


@FUZZ
@given(name=st.sampled_from(sorted(SUITE_DOCS)), data=st.data())
def test_random_values_in_a_suite_are_one_line_errors(name: str, data: st.DataObject) -> None:
    change = data.draw(mutations(suite_keys(name)), label="change")
    doc = mutated(SUITE_DOCS[name], change)
    with tempfile.TemporaryDirectory() as directory:
        path = _write(Path(directory), f"{name}.toml", doc)
        try:
            load_suites(Path(directory), [name])
        except ConfigError as error:
            _assert_one_line_each(error, path)


@FUZZ
@given(text=st.text(max_size=300), names=st.lists(st.text(max_size=12), max_size=3))
def test_random_text_as_a_suite_is_a_one_line_error(text: str, names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "random.toml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError) as caught:
            load_suite(path)
        _assert_one_line_each(caught.value, path)
        with contextlib.suppress(ConfigError):
            load_suites(Path(directory), names)


def test_a_bad_suite_named_by_a_profile_is_exit_2_through_the_cli(tmp_path: Path) -> None:
    doc = {**BASE_PROFILE, "endpoint": [BASE_PROFILE["endpoint"][0]]}
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "essay.toml").write_text('[suite]\nkind = "poem"\n')
    path = _write(tmp_path, "profile.toml", doc)
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        code = cli.main(["run", str(path), "--headless", "--out", str(tmp_path / "out")])
    assert code == 2, stderr.getvalue()
    lines = stderr.getvalue().splitlines()
    assert lines and all(line.startswith(str(tmp_path / "suites" / "essay.toml")) for line in lines)

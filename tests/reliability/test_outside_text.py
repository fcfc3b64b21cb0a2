"""Text from outside passes one chokepoint: keys, URL credentials and escapes never come through.

Each hostile case is a server on 127.0.0.1 that sends the caller's key back where a cut, a
parser or a message would once have let part of it through (``key_echoes``), or a profile that
writes a password into a URL.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from nvfp4_tui.bench.client import ChatRequest, EndpointClient, Timeouts
from nvfp4_tui.bench.worker import _print_message
from nvfp4_tui.config.keys import key_routes, run_secrets
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.core.outside_text import (
    outside_line,
    outside_text,
    without_secrets,
)
from nvfp4_tui.output.tables import format_table
from nvfp4_tui.scoring.judge import JudgeConfig, judge_answer
from nvfp4_tui.telemetry.prometheus import MetricsStatus, PrometheusScraper
from tests.reliability.key_echoes import ESCAPES, serve_echoes
from tests.reliability.runs import hostile_endpoint_toml, write_run_profile

KEY = "sk-hostile-0f3b9a27c4e1-never-shown"
KEY_ENV = "NVFP4_OUTSIDE_TEXT_KEY"
HELLO = ChatRequest(messages=({"role": "user", "content": "hi"},), max_tokens=8)
TERMINAL_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066")


@asynccontextmanager
async def echo_client(server: str) -> AsyncIterator[EndpointClient]:
    """A client sending ``KEY`` to the named ``key_echoes`` server."""
    async with (
        serve_echoes([server]) as urls,
        EndpointClient(
            urls[server], "current", concurrency=1, timeouts=Timeouts(), api_key=KEY
        ) as client,
    ):
        yield client


def assert_clean(text: str) -> None:
    assert KEY[:12] not in text, text
    assert not [c for c in TERMINAL_CONTROLS if c in text], repr(text)


def test_a_key_across_the_cut_leaves_none_of_itself() -> None:
    line = outside_line("E" * 190 + KEY + "x" * 50, 200, secrets={KEY})
    assert line == "E" * 190 + "***" + "x" * 6 + "…"
    # Cut before the scrub (a body read to a byte count): the key's start still goes.
    assert without_secrets("body " + KEY[:15], {KEY}) == "body ***"


def test_escapes_cannot_hide_a_key() -> None:
    for hidden in ("\x1b" + KEY, KEY[:5] + "\x1b[0m" + KEY[5:], KEY[:9] + "\u202e" + KEY[9:]):
        assert_clean(outside_text(hidden, {KEY}))


def test_url_credentials_bidi_and_escapes_go() -> None:
    text = outside_line(f"see http://bob:hunter2@10.0.0.5:8016/v1 {ESCAPES}\u2066x\u2069 end")
    assert text == "see http://***@10.0.0.5:8016/v1 x end"


async def test_model_ids_that_quote_the_key_stay_out_of_the_health_message() -> None:
    async with echo_client("models_echo") as client:
        healthy, message = await client.health()
    assert not healthy and "/v1/models lists" in message and "you-sent Bearer ***" in message
    assert_clean(message)


@pytest.mark.parametrize("server", ["error_cut", "chunk_cut"])
async def test_a_key_across_the_error_excerpts_cut_is_not_kept(server: str) -> None:
    async with echo_client(server) as client:
        measurement = await client.chat(HELLO)
    message = measurement.error_message or ""
    assert measurement.status == "error" and "EEEE" in message, message
    assert_clean(message)


async def test_a_finish_reason_that_quotes_the_key_is_stored_clean() -> None:
    async with echo_client("finish_echo") as client:
        measurement = await client.chat(HELLO)
    assert measurement.status == "ok" and measurement.finish_reason == "Bearer ***"


async def test_a_judge_that_echoes_its_key_gives_a_clean_reason() -> None:
    async with serve_echoes(["judge"]) as urls, aiohttp.ClientSession() as http:
        config = JudgeConfig(urls["judge"], "judge", {"essay": "be fair"}, api_key=KEY)
        score, detail = await judge_answer(http, config, "essay", "a prompt", "an answer")
    assert score == pytest.approx(0.7)
    assert detail is not None and "fine; you sent Bearer ***" in detail
    assert_clean(detail)


async def test_metrics_escapes_and_key_stay_out_of_status_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    seen: list[MetricsStatus] = []
    async with serve_echoes(["error_cut"]) as urls:
        endpoint = hostile_endpoint_toml("m", urls["error_cut"], api_key_env=KEY_ENV)
        profile = load_profile(write_run_profile(tmp_path, [endpoint], requests=1))
        async with aiohttp.ClientSession() as http:
            scraper = PrometheusScraper(profile.endpoints, http, on_status=seen.append)
            assert await scraper.scrape_once() == []
    assert [s.state for s in seen] == ["no_metrics"]
    assert "Bearer ***" in seen[0].message
    assert_clean(seen[0].message)


@pytest.mark.parametrize(
    ("key", "value", "table"),
    [
        ("url", "http://bob:hunter2@127.0.0.1:9/v1", "endpoint[0]"),
        ("telemetry", "dcgm:http://bob:hunter2@127.0.0.1:9400/metrics", "endpoint[0]"),
        ("url", "https://bob:hunter2@judge.example:8030", "judge"),
    ],
)
def test_credentials_in_a_url_are_refused_without_echoing_them(
    tmp_path: Path, key: str, value: str, table: str
) -> None:
    endpoint = hostile_endpoint_toml("a", "http://127.0.0.1:9")
    if table == "judge":
        endpoint += f'[judge]\nurl = "{value}"\nmodel = "j"\nrubrics = {{essay = "r"}}\n'
    elif key == "url":
        endpoint = endpoint.replace('url = "http://127.0.0.1:9"', f'url = "{value}"')
    else:
        endpoint = endpoint.replace('telemetry = "none"', f'telemetry = "{value}"')
    path = write_run_profile(tmp_path, [endpoint], requests=1)
    with pytest.raises(ConfigError) as refused:
        load_profile(path)
    assert refused.value.problems == [
        f"{path}: {table}.{key}: expected a URL without user:password@ "
        "(keys belong in env vars: api_key_env)"
    ]


def test_a_runs_secrets_are_every_key_its_profile_names_and_only_those(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("NVFP4_JUDGE_KEY", "sk-judge-5e1d")
    monkeypatch.setenv("NVFP4_UNNAMED_KEY", "sk-nobody-names-this")
    monkeypatch.delenv("NVFP4_UNSET_KEY", raising=False)
    endpoints = [
        hostile_endpoint_toml("a", "http://10.0.0.5:8016", api_key_env=KEY_ENV),
        hostile_endpoint_toml("b", "http://10.0.0.6:8017", api_key_env="NVFP4_UNSET_KEY"),
        hostile_endpoint_toml("c", "http://10.0.0.7:8018")
        + '[judge]\nurl = "http://10.0.0.8:8030"\nmodel = "j"\napi_key_env = "NVFP4_JUDGE_KEY"\n'
        + 'rubrics = {essay = "r"}\n',
    ]
    profile = load_profile(write_run_profile(tmp_path, endpoints, requests=1))
    assert run_secrets(profile) == {KEY, "sk-judge-5e1d"}
    # Scrubbing is what the caller hands it: reading a key leaves nothing behind in the process.
    assert outside_line(f"Bearer {KEY}") == f"Bearer {KEY}"


def test_start_names_the_variable_sent_to_each_host_never_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.delenv("NVFP4_UNSET_KEY", raising=False)
    endpoints = [
        hostile_endpoint_toml("moe_qwen36", "http://10.0.0.5:8016", api_key_env=KEY_ENV),
        hostile_endpoint_toml("dense", "http://10.0.0.6:8017", api_key_env="NVFP4_UNSET_KEY"),
        hostile_endpoint_toml("open", "http://10.0.0.7:8018"),
    ]
    profile = load_profile(write_run_profile(tmp_path, endpoints, requests=1))
    assert key_routes(profile) == [
        f"sending ${KEY_ENV} to 10.0.0.5:8016 (moe_qwen36)",
        "$NVFP4_UNSET_KEY is not set: 10.0.0.6:8017 (dense) gets no key",
    ]


@pytest.mark.parametrize("markdown", [False, True])
def test_a_table_prints_a_hostile_label_as_text(markdown: bool) -> None:
    label = f"evil{ESCAPES}\u2066 | label\nsecond line"
    text = format_table(["endpoint", "tok/s"], [[label, "12.5"]], title=label, markdown=markdown)
    assert_clean(text)
    assert "evil" in text and "second line" in text
    assert len(text.splitlines()) == (5 if markdown else 4)  # title (blank), header, rule, row


def test_a_workers_note_reaches_stderr_and_run_log_as_plain_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _print_message(f"e0: no server metrics (not Prometheus text: {ESCAPES} Bearer {KEY})", {KEY})
    err = capsys.readouterr().err
    assert err == "e0: no server metrics (not Prometheus text: Bearer ***)\n"

"""Retries are opt-in (``[run] retries``), only for 429 and 503, and every attempt is a row."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import polars as pl
import pytest

from nvfp4_tui.bench.client import retry_after_seconds, retryable
from nvfp4_tui.bench.runner import RETRY_BACKOFF_S, RETRY_WAIT_CAP_S, retry_wait_s
from nvfp4_tui.config.profile import ConfigError, load_profile, with_urls
from nvfp4_tui.sim.fleet import SimFleet
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.hostile_servers import serve
from tests.reliability.runs import hostile_endpoint_toml, record_run, rows_of, write_run_profile

RETRIES = 2
SLEEP_SLACK_S = 0.01  # a timer may wake a hair early on some clocks


def _gaps_s(rows: pl.DataFrame) -> list[float]:
    sent = rows.sort("attempt").get_column("t").to_list()
    return [later - earlier for earlier, later in pairwise(sent)]


async def test_retries_resend_429_and_503_and_keep_every_attempt(tmp_path: Path) -> None:
    behaviours = ["http_429_retry_after", "every_other_429"]
    async with serve(behaviours) as urls:
        endpoints = [hostile_endpoint_toml(name, urls[name]) for name in behaviours]
        endpoints.append(endpoint_toml("sim_503", 0, faults="http_status = 503\nerror_rate = 1.0"))
        endpoints.append(endpoint_toml("sim_500", 1, faults="http_status = 500\nerror_rate = 1.0"))
        endpoints.append(endpoint_toml("clean", 2, decode_tps=400.0, ttft_s=0.02))
        path = write_run_profile(tmp_path, endpoints, requests=1, retries=RETRIES)
        profile = load_profile(path)
        assert profile.run.retries == RETRIES
        async with SimFleet(profile.endpoints, time_scale=5.0) as fleet:
            result, snapshot = await record_run(with_urls(profile, fleet.urls), tmp_path / "out")
    assert result.status == "complete"
    rows = rows_of(snapshot)

    always_429 = rows["http_429_retry_after"]
    assert always_429.get_column("attempt").sort().to_list() == [0, 1, 2]
    assert set(always_429.get_column("request_index")) == {0}  # one planned request, 3 sends
    assert set(always_429.get_column("error_kind")) == {"http_4xx"}
    assert set(always_429.get_column("http_status")) == {429}  # what the retry is decided on
    assert all(gap >= 0.2 - SLEEP_SLACK_S for gap in _gaps_s(always_429))  # Retry-After: 0.2

    no_header = rows["sim_503"]  # the simulator sends no Retry-After with a 503: backoff
    assert no_header.get_column("attempt").sort().to_list() == [0, 1, 2]
    assert no_header.get_column("retry_after_s").null_count() == 3
    backoff = [RETRY_BACKOFF_S, 2 * RETRY_BACKOFF_S]
    assert all(g >= b - SLEEP_SLACK_S for g, b in zip(_gaps_s(no_header), backoff, strict=True))

    recovered = rows["every_other_429"].sort("attempt")
    assert recovered.get_column("status").to_list()[0] == "error"
    assert recovered.get_column("status").to_list()[1] != "error"  # the retry succeeded
    assert recovered.height == 2  # no attempt after a success

    assert rows["sim_500"].height == 1  # a 500 is not retried: the fault stays visible
    assert rows["sim_500"].get_column("http_status").to_list() == [500]
    assert set(rows["clean"].get_column("http_status")) == {200}
    assert rows["clean"].get_column("attempt").to_list() == [0]


def test_only_a_429_or_503_is_resent() -> None:
    assert retryable(429) and retryable(503)
    assert not any(retryable(status) for status in (None, 200, 400, 422, 500, 502, 504))


def test_retry_waits_honour_retry_after_up_to_a_cap() -> None:
    assert retry_wait_s(0.3, 0) == 0.3
    assert retry_wait_s(3600.0, 0) == RETRY_WAIT_CAP_S
    assert retry_wait_s(None, 0) == RETRY_BACKOFF_S
    assert retry_wait_s(None, 2) == 4 * RETRY_BACKOFF_S
    assert retry_wait_s(None, 30) == RETRY_WAIT_CAP_S
    assert retry_after_seconds("120") == 120.0
    assert retry_after_seconds(" 1.5 ") == 1.5
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past
    assert retry_after_seconds("-3") == 0.0
    for bad in (None, "", "soon", "nan", "inf"):
        assert retry_after_seconds(bad) is None


@pytest.mark.parametrize("value", ["-1", "11", "1.5", '"2"', "true"])
def test_retries_outside_0_to_10_is_a_one_line_error(tmp_path: Path, value: str) -> None:
    path = write_run_profile(tmp_path, [endpoint_toml("e", 0)], requests=1)
    path.write_text(path.read_text().replace("retries = 0", f"retries = {value}"))
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    assert caught.value.problems == [
        f"{path}: run.retries: expected an integer from 0 to 10, got {value}"
    ]

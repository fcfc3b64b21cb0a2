"""The load generator's own health: each sending process reports its CPU, its loop's lag and its
queues once a second (ClientHealth, never persisted), and the header says when the client, not
the server, may be the limit."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from nvfp4_tui.bench.runner import HEALTH_INTERVAL_S
from nvfp4_tui.config.profile import load_profile, with_urls
from nvfp4_tui.core.client_health import SILENT_AFTER_S, client_readout
from nvfp4_tui.core.events import ClientHealth, Event, decode, encode
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.tui.widgets.run_header import RunHeader, client_text
from tests.integration.fleet_files import endpoint_toml
from tests.reliability.runs import record_run, write_run_profile
from tests.support.factories import T0
from tests.support.sample_app import sample_app, settle


def health(t: float = T0, pid: int = 1, **fields: float | int | None) -> ClientHealth:
    values: dict = {
        "cpu_pct": 12.0,
        "loop_lag_p99_s": 0.001,
        "loop_lag_max_s": 0.002,
        "cpu_wait_s": 0.0,
        "queued": 0,
        "in_flight": 2,
    }
    values.update(fields)
    return ClientHealth(t=t, pid=pid, **values)


def test_a_run_reports_its_health_every_second_and_records_none(tmp_path: Path) -> None:
    # Four answers of 64 tokens at 40 tok/s, one at a time: about 6.5 s, several reports.
    path = write_run_profile(
        tmp_path,
        [endpoint_toml("e0", 0, decode_tps=40.0, ttft_s=0.05)],
        requests=4,
        timeout_s=20.0,
        max_tokens=64,
    )
    seen: list[Event] = []
    with SimProcess(path, port_base=0) as sim:
        live = with_urls(load_profile(path), sim.urls)
        result, snapshot = asyncio.run(
            record_run(live, tmp_path / "out", subscribers=[seen.append])
        )
    assert result.status == "complete"
    reports = [e for e in seen if isinstance(e, ClientHealth)]
    assert len(reports) >= 2, f"{len(reports)} reports, one per {HEALTH_INTERVAL_S} s"
    for report in reports:
        assert report.pid == os.getpid()
        assert report.cpu_pct is not None and report.cpu_pct >= 0
        assert report.loop_lag_p99_s is not None and report.loop_lag_max_s is not None
        assert 0 <= report.loop_lag_p99_s <= report.loop_lag_max_s
        assert report.queued == 0 and 0 <= report.in_flight <= 1
    assert any(r.in_flight == 1 for r in reports), "one request was in flight most of the run"
    assert not [e for e in snapshot.events() if isinstance(e, ClientHealth)]
    assert decode(encode(reports[0])) == reports[0]  # a --workers shard sends it over its pipe


@pytest.mark.parametrize(
    ("fields", "limiting"),
    [
        ({}, False),
        ({"cpu_pct": 95.0}, True),
        ({"loop_lag_p99_s": 0.02}, True),
        ({"cpu_wait_s": 0.4}, True),
    ],
)
def test_the_client_is_limiting_when_busy_late_or_kept_off_its_cpu(
    fields: dict, limiting: bool
) -> None:
    readout = client_readout({1: health(**fields)}, now=T0)
    assert readout is not None and readout.limiting is limiting
    text, style = client_text(readout)
    assert text.startswith("⚠") is limiting and ("warning" in style) is limiting


def test_workers_are_summed_and_a_silent_one_is_named() -> None:
    reports = {
        1: health(pid=1, queued=3, in_flight=4, cpu_pct=40.0),
        2: health(t=T0 - SILENT_AFTER_S - 1, pid=2, queued=1, in_flight=4, cpu_pct=70.0),
    }
    readout = client_readout(reports, now=T0)
    assert readout is not None
    assert (readout.workers, readout.silent, readout.queued, readout.in_flight) == (2, 1, 4, 8)
    assert readout.cpu_pct == 70.0 and readout.limiting
    assert "1/2 workers reporting" in client_text(readout)[0]
    assert client_readout({}, now=T0) is None


async def test_the_header_shows_the_clients_health_while_it_sends() -> None:
    app, source = sample_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, source)
        app.state.apply(health(t=app.clock(), cpu_pct=97.0, queued=5))
        app.redraw()
        await pilot.pause()
        summary = str(app.screen.query_one(RunHeader).query_one(".summary").render())
        assert "⚠ client CPU 97% · lag p99 1 ms · 5 queued" in summary

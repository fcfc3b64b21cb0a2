"""Measured TTFT and decode tok/s equal the simulator's schedule; exactly N requests in flight.

The simulator runs in its own process (as in the demo), so the client's timing is not disturbed
by the server's work. A TTFT of 0.6 s keeps a few ms of event-loop wake-up latency on a busy
machine well inside the 2% tolerance. The middle wave of a closed-loop phase runs at exactly N in
flight, which is where the schedule's numbers apply.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import urllib.request
from pathlib import Path

import pytest

from nvfp4_tui.bench.runner import Runner
from nvfp4_tui.events import Event, RequestFinished
from nvfp4_tui.profile import load_profile, with_urls
from nvfp4_tui.sim.process import SimProcess
from nvfp4_tui.sim.schedule import decode_tps_at, expected_ttft_s
from nvfp4_tui.sim.tokens import count_prompt_tokens
from nvfp4_tui.suites import load_suites
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite

LEVELS = (1, 4, 16)
WAVES = 3


def sim_stats(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/sim/stats", timeout=5) as reply:
        return json.loads(reply.read())


@pytest.mark.parametrize("concurrency", LEVELS)
def test_measured_numbers_equal_the_schedule(tmp_path: Path, concurrency: int) -> None:
    write_suite(tmp_path / "suites", "essay", max_tokens=40)
    path = write_profile(
        tmp_path,
        [endpoint_toml("e0", 0, decode_tps=100.0, ttft_s=0.6)],
        suites=["essay"],
        concurrency=[concurrency],
        requests=WAVES * concurrency,
    )
    profile = load_profile(path)
    suites = load_suites(profile.suites_dir, profile.run.suites)
    spec = profile.endpoints[0].sim
    assert spec is not None
    records: list[RequestFinished] = []

    def collect(event: Event) -> None:
        if isinstance(event, RequestFinished):
            records.append(event)

    with SimProcess(path, port_base=0) as sim:
        live = with_urls(profile, sim.urls)
        asyncio.run(Runner(live, suites, "fidelity", collect).run())
        stats = sim_stats(sim.urls["e0"])

    assert len(records) == WAVES * concurrency
    assert all(r.status != "error" for r in records), [r.error_message for r in records]
    # The middle wave: sent after the first wave ended, finished before the last one began.
    middle = sorted(records, key=lambda r: r.t)[concurrency : 2 * concurrency]
    prompt = suites["essay"].prompts[0]
    prompt_tokens = count_prompt_tokens(prompt.messages(suites["essay"].system))
    assert {r.tokens_in for r in records} == {prompt_tokens}

    true_ttft = expected_ttft_s(spec, prompt_tokens, concurrency)
    true_decode = decode_tps_at(spec, concurrency)
    measured_ttft = statistics.median(r.ttft_s for r in middle)
    measured_decode = statistics.median(r.decode_tps for r in middle)
    assert measured_ttft / true_ttft == pytest.approx(1.0, abs=0.02)
    assert measured_decode / true_decode == pytest.approx(1.0, abs=0.02)

    # The simulator saw exactly N in flight: never more, and most tokens decoded at N.
    assert stats["max_in_flight"] == concurrency
    decoded = {int(k): v for k, v in stats["in_flight_while_decoding"].items()}
    assert max(decoded) == concurrency
    assert decoded[concurrency] / sum(decoded.values()) > 0.5

"""A replay of the persisted events equals the live run; memory stays bounded on a long run."""

from __future__ import annotations

import json
import random

from nvfp4_tui.core.endpoint_state import RECENT_REQUESTS_LEN
from nvfp4_tui.core.events import (
    HISTORY_LEN,
    GpuSample,
    PhaseStarted,
    RequestFinished,
    ServerSample,
    TokenProgress,
    decode,
    encode,
)
from nvfp4_tui.core.slo import Load
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.core.stats import percentile
from tests.support.digest import digest
from tests.support.factories import T0

from .builders import failed, request, simulated_run, three_endpoint_run


def reduce(events) -> FleetState:
    state = FleetState()
    state.apply_all(events)
    return state


def test_replay_without_token_progress_gives_the_live_summary() -> None:
    run = simulated_run()
    assert any(isinstance(e, TokenProgress) for e in run.events)
    live, replay = reduce(run.events), reduce(run.persisted)
    assert digest(live) == digest(replay)
    assert live.dropped == replay.dropped == 0
    # Whatever the views show at the end agrees too, beyond the digest.
    for endpoint_id, endpoint in live.endpoints.items():
        other = replay.endpoints[endpoint_id]
        assert endpoint.decode_tps_now() == other.decode_tps_now()
        assert endpoint.in_flight == other.in_flight == 0
        for level in endpoint.throughput_by_load():
            mine, theirs = endpoint.level_timings(level.load), other.level_timings(level.load)
            assert mine is not None and theirs is not None
            assert mine.ttft_p50_s == theirs.ttft_p50_s
            assert mine.decode() == theirs.decode()
        assert endpoint.leaderboard() == other.leaderboard()
        assert endpoint.phase_progress() == other.phase_progress()
        assert list(endpoint.recent_requests) == list(other.recent_requests)
    assert live.progress_fraction() == replay.progress_fraction() == 1.0


def test_summary_does_not_depend_on_row_order() -> None:
    # The snapshot reader sorts rows by t, and a RequestFinished's t is when it was sent, so a
    # replay sees requests in another order than the live UI did.
    run = simulated_run(seed=21)
    by_send_time = sorted(run.persisted, key=lambda e: e.t)
    assert by_send_time != run.persisted
    assert digest(reduce(run.events)) == digest(reduce(by_send_time))


def test_summary_does_not_depend_on_the_order_of_request_rows() -> None:
    run = simulated_run(seed=13)
    events = list(run.persisted)
    slots = [i for i, e in enumerate(events) if isinstance(e, RequestFinished)]
    rows = [events[i] for i in slots]
    random.Random(1).shuffle(rows)
    for i, row in zip(slots, rows, strict=True):
        events[i] = row
    assert digest(reduce(run.events)) == digest(reduce(events))


def test_summary_survives_the_json_codec_and_is_json_ready() -> None:
    run = simulated_run(seed=3)
    decoded = [decode(encode(e)) for e in run.persisted]
    summary = digest(reduce(run.events))
    assert digest(reduce(decoded)) == summary
    assert json.loads(json.dumps(summary)) == summary


def test_summary_notices_a_missing_row() -> None:
    run = simulated_run(seed=5)
    rows = [i for i, e in enumerate(run.persisted) if isinstance(e, RequestFinished)]
    fewer = [e for i, e in enumerate(run.persisted) if i != rows[len(rows) // 2]]
    assert digest(reduce(run.events)) != digest(reduce(fewer))


def test_summary_carries_the_durable_numbers() -> None:
    run = simulated_run(seed=9)
    state = reduce(run.events)
    summary = digest(state)
    assert summary["run"]["status"] == "complete"
    assert summary["run"]["requests_done"] == summary["run"]["total_requests"] == 144
    endpoint = summary["endpoints"][0]
    assert endpoint["status"] == "done"
    assert [row["load"] for row in endpoint["throughput"]] == ["c=1", "c=3"]
    assert set(endpoint["quality"]["score_heuristic"]) == {"english", "math"}
    assert len(endpoint["leaderboard"]) == 4
    gpus = {g["gpu"]: g for g in summary["gpus"]}
    assert gpus[0]["first_vram_mib"] == 80_000.0
    assert gpus[0]["last_vram_mib"] == state.gpus[("", 0)].last_vram_mib > 80_000.0


def test_rings_stay_bounded_over_a_long_run() -> None:
    state = FleetState()
    state.apply(three_endpoint_run())
    state.apply(PhaseStarted(T0, "a", "english", 1, 0))
    requests = 25_000
    ok_ttfts = []
    for i in range(requests):
        t = T0 + i * 0.5
        state.apply(TokenProgress(t, "a", 2, 250.0))
        state.apply(TokenProgress(t + 0.25, "a", 2, 260.0))
        state.apply(GpuSample(t, 0, vram_used_mib=90_000.0 + i % 7, power_w=400.0))
        if i % 2 == 0:
            state.apply(ServerSample(t, "a", kv_cache_pct=float(i % 100)))
        ttft_s = 0.1 + (i % 100) / 1000
        if i % 50 == 0:
            state.apply(failed("a", t=t, request_index=i))
        else:
            ok_ttfts.append(ttft_s)
            state.apply(request("a", t=t, request_index=i, ttft_s=ttft_s))
    a = state.endpoints["a"]
    assert state.version >= 100_000
    assert a.requests_done == requests
    assert len(a.decode_history) == HISTORY_LEN
    assert len(a.recent_requests) == RECENT_REQUESTS_LEN
    assert len(a.server_history) == HISTORY_LEN
    assert a.gpu is not None and len(a.gpu.history) == HISTORY_LEN
    assert a.gpu.samples == requests
    # The pane's TTFT median is of the level's requests that did not fail, in bounded memory
    # (past its exact cap the sketch is within 0.5%); the KV peak is the run's, not the ring's.
    level = a.level_timings(Load.of(1, None))
    expected = percentile(ok_ttfts, 50)
    assert level is not None and level.ttft_p50_s is not None and expected is not None
    assert abs(level.ttft_p50_s - expected) <= 0.005 * expected
    assert a.kv_cache_peak_pct == 98.0

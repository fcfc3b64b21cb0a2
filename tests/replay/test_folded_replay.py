"""Long jumps in a replay carry only the telemetry the state still shows, and end in the same state
as folding every recorded event in timeline order (the replay before it kept samples as frames)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from nvfp4_tui.core.events import (
    HISTORY_LEN,
    Event,
    GpuSample,
    PhaseFinished,
    PhasePlan,
    PhaseStarted,
    RunFinished,
    RunStarted,
    SamplesSkipped,
    ServerSample,
)
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.sources.base import Folded, ResetBatch
from nvfp4_tui.sources.replay import ReplaySource, timeline_t
from nvfp4_tui.store.reader import open_snapshot
from tests.support.digest import digest as durable_digest
from tests.support.factories import T0, endpoint_info, request, write_snapshot

SAMPLE_DEMO = Path(__file__).resolve().parents[2] / "snapshots" / "sample-demo"
SECONDS = 900  # 1,800 samples per GPU at 2/s: three history rings' worth
SECOND_RUN_AT_S = 600
CARDS = (("node-a", 0), ("node-b", 0), ("node-b", 2), ("node-b", 3))  # (host, GPU index)


def telemetry_run(seed: int = 7) -> list[Event]:
    """Two runs back to back (the second drops endpoint c), sampled all along: GPU samples every
    0.5 s on four GPUs of two nodes, each with a GPU 0 (GPU 3 serves no endpoint; ties, gaps in
    VRAM), server samples every second for each endpoint and for one no run names, some before
    the first RunStarted."""
    rng = random.Random(seed)
    first = (
        endpoint_info("a", 0, node="node-a"),
        endpoint_info("b", 0, node="node-b"),
        endpoint_info("c", 2, node="node-b"),
    )
    second = first[:2]
    second_t = T0 + SECOND_RUN_AT_S
    events: list[Event] = []
    for run_t, infos, name in ((T0, first, "first"), (second_t, second, "second")):
        plans = tuple(PhasePlan(info.id, "english", 1, None, duration_s=300.0) for info in infos)
        events.append(RunStarted(run_t, name, name, infos, plans))
        events.extend(PhaseStarted(run_t, info.id, "english", 1, 0) for info in infos)
    for step in range(-20, SECONDS * 2):
        t = T0 + step * 0.5
        for host, gpu in CARDS:
            vram = None if rng.random() < 0.05 else 1000.0 + rng.randint(0, 9000)
            events.append(
                GpuSample(
                    t + rng.choice((0.0, 0.0, 0.0, 0.5)),  # some land on the next sample's time
                    gpu,
                    vram_used_mib=vram,
                    power_w=rng.uniform(100, 600),
                    util_gpu_pct=rng.uniform(0, 100),
                    source="sim",
                    host=host,
                )
            )
        if step % 2 == 0:
            for endpoint_id in ("a", "b", "c", "ghost"):
                events.append(
                    ServerSample(t, endpoint_id, kv_cache_pct=rng.uniform(0, 100), ttft_mean_s=0.2)
                )
    for index in range(SECONDS // 3):
        for info in first:
            events.append(
                request(
                    info.id,
                    t=T0 + index * 3 + rng.uniform(0, 1),
                    prompt_id=f"p{index % 5}",
                    request_index=index,
                    status="ok" if rng.random() > 0.05 else "error",
                    ttft_s=rng.uniform(0.05, 0.3),
                    e2e_s=rng.uniform(1.0, 6.0),
                    tokens_out=rng.randint(50, 400),
                    decode_tps=rng.uniform(60, 140),
                    e2e_tps=rng.uniform(50, 120),
                    itl_p50_s=rng.uniform(0.005, 0.02),
                    score_heuristic=rng.uniform(0, 1),
                    answer_text=f"answer {index}",
                )
            )
    end_t = T0 + SECONDS
    events.extend(
        PhaseFinished(end_t, info.id, "english", 1, 0, 100, 0, 20_000, 300.0) for info in second
    )
    events.append(RunFinished(end_t, "complete"))
    return events


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_snapshot(tmp_path_factory.mktemp("folded"), "telemetry", telemetry_run())


def every_event_until(path: Path, position_t: float | None = None) -> FleetState:
    """The reference: every recorded event, in timeline order, up to ``position_t``."""
    timed = sorted(open_snapshot(path).events(), key=timeline_t)  # stable: ties keep their order
    state = FleetState()
    state.apply_all(e for e in timed if position_t is None or timeline_t(e) <= position_t)
    return state


def digest(state: FleetState) -> dict[str, Any]:
    """What the views read, rings and extremes included, beyond the durable digest."""
    return {
        "summary": durable_digest(state),
        "last_t": state.last_t,
        "dropped": state.dropped,
        "gpus": {
            gpu: (
                list(track.history),
                track.latest,
                track.samples,
                (track.first_vram_mib, track.first_vram_t),
                (track.last_vram_mib, track.last_vram_t),
            )
            for gpu, track in state.gpus.items()
        },
        "endpoints": {
            endpoint_id: (
                list(e.server_history),
                e.server_latest,
                e.server_samples,
                list(e.recent_requests),
                e.last_answer,
                list(e.decode_history),
            )
            for endpoint_id, e in state.endpoints.items()
        },
    }


class Player:
    """A replay folded the way the app folds it, with the commands given between batches."""

    def __init__(self, path: Path, speed: float | None = 1.0) -> None:
        self.source = ReplaySource(path, speed=speed, clock=lambda: 0.0)
        self.source.start()
        self.state = FleetState()
        self.batches: list[list[Folded]] = []

    def play(self, *commands: str) -> FleetState:
        for command in commands:
            self.source.control(command)
        while (batch := self.source.take_due()) is not None:
            self.batches.append(batch)
            if isinstance(batch, ResetBatch):
                self.state = FleetState()
            self.state.apply_all(batch)
        return self.state


def test_a_jump_to_the_end_carries_a_few_rings_of_samples(recorded: Path) -> None:
    player = Player(recorded)
    player.play("pause")
    state = player.play("end")
    assert player.source.at_end
    assert digest(state) == digest(every_event_until(recorded))
    [jump] = player.batches[1:]
    skipped = [e for e in jump if isinstance(e, SamplesSkipped)]
    delivered = sum(1 for e in player.batches[0] if not isinstance(e, SamplesSkipped))
    carried = len(jump) - len(skipped)
    assert carried + sum(e.count for e in skipped) + delivered == player.source.events_total
    gpu_carried = sum(1 for e in jump if isinstance(e, GpuSample))
    # A ring and its extremes per card, not 7,000; and the 20 samples per card from before the
    # first run, which on no run's nodes are filed by index alone.
    assert gpu_carried <= 4 * (HISTORY_LEN + 3) + 4 * 20
    # Endpoint c's samples in the second run, and the ghost's, are dropped by the state one by
    # one (it counts them): the jump carries them all.
    assert state.dropped == every_event_until(recorded).dropped > 0


def test_max_speed_in_chunks_ends_in_the_same_state(recorded: Path) -> None:
    player = Player(recorded, speed=None)
    state = player.play()
    assert player.source.at_end and len(player.batches) > 2
    assert any(isinstance(e, SamplesSkipped) for batch in player.batches for e in batch)
    assert digest(state) == digest(every_event_until(recorded))


@pytest.mark.parametrize("target_s", [30, SECOND_RUN_AT_S - 1, SECOND_RUN_AT_S + 150])
def test_seeking_back_rebuilds_the_state_of_that_moment(recorded: Path, target_s: int) -> None:
    player = Player(recorded)
    player.play("pause", "end")
    state = player.play(f"seek:{target_s}")
    assert isinstance(player.batches[-1], ResetBatch)
    position_t = player.source.position_t
    assert digest(state) == digest(every_event_until(recorded, position_t))
    # And on from there: forward seeks land where straight playback would.
    state = player.play("seek:+100")
    assert digest(state) == digest(every_event_until(recorded, position_t + 100))
    state = player.play("end")
    assert digest(state) == digest(every_event_until(recorded))


def test_home_then_end_on_the_shipped_sample(tmp_path: Path) -> None:
    player = Player(SAMPLE_DEMO)
    player.play("pause", "end")
    state = player.play("home")
    assert isinstance(player.batches[-1], ResetBatch)
    assert digest(state) == digest(every_event_until(SAMPLE_DEMO, player.source.start_t))
    state = player.play("end")
    assert digest(state) == digest(every_event_until(SAMPLE_DEMO))
    assert state.status == "complete"

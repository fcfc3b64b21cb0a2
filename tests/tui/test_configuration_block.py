"""What the run ran on, on the leaderboard screen: a setting shared by every endpoint said once,
one that differs said with where; nothing for a run that recorded none."""

from __future__ import annotations

from dataclasses import replace

from nvfp4_tui.core.events import EndpointConfig, EndpointInfo, PhasePlan, RunStarted
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.widgets.configuration import (
    ConfigurationBlock,
    SettingLine,
    configuration_lines,
)
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import settle
from tests.support.sample_events import sample_events

T0 = 1_780_000_000.0
INFOS = (
    EndpointInfo("a", "A", "http://127.0.0.1:1", "m", 0, "moe"),
    EndpointInfo("b", "B", "http://127.0.0.1:2", "m", 1, "dense"),
    EndpointInfo("c", "C", "http://127.0.0.1:3", "m", None, "dense"),
)
FP8 = EndpointConfig(
    "a",
    "0.11.0",
    kv_cache_dtype="fp8",
    gpu_name="NVIDIA RTX PRO 6000",
    driver_version="575.57.08",
    cuda_driver_version="12.9",
)


def _state(*configs: EndpointConfig) -> FleetState:
    state = FleetState()
    plans = tuple(PhasePlan(i.id, "math", 1, 1) for i in INFOS)
    state.apply(RunStarted(T0, "r", "run", INFOS, plans, configs))
    return state


def test_shared_settings_are_said_once_and_differences_say_where() -> None:
    state = _state(
        FP8,
        replace(FP8, endpoint_id="b", kv_cache_dtype="auto\x1b[31m"),
        replace(FP8, endpoint_id="c", kv_cache_dtype="auto", driver_version=None),
    )
    assert configuration_lines(state, {"c": "C"}) == [
        SettingLine("server", "0.11.0", shared=True),
        # The escape is dropped (b reads as c); c has no GPU, so its label says where it is.
        SettingLine("KV cache", "fp8 on GPU 0 · auto on GPU 1, C", shared=False),
        SettingLine("GPU", "RTX PRO 6000", shared=True),
        SettingLine("driver", "575.57.08 (CUDA 12.9) on GPU 0,1 · — on C", shared=False),
    ]


def test_a_setting_nobody_reported_is_left_out_and_no_configuration_says_nothing() -> None:
    bare = [EndpointConfig(i.id, kv_cache_dtype="fp8") for i in INFOS]
    assert configuration_lines(_state(*bare), {}) == [SettingLine("KV cache", "fp8", shared=True)]
    # An endpoint the probes never reached counts as unknown, not as agreeing.
    assert configuration_lines(_state(*bare[:2]), {"c": "C"}) == [
        SettingLine("KV cache", "fp8 on GPU 0,1 · — on C", shared=False)
    ]
    assert configuration_lines(_state(), {}) == []  # recorded before it was carried


async def test_the_leaderboard_shows_what_the_run_ran_on() -> None:
    events = sample_events(None)
    started = events[0]
    assert isinstance(started, RunStarted)
    auto = tuple(
        replace(c, kv_cache_dtype="auto") if c.endpoint_id == "dense_qwen35" else c
        for c in started.configuration
    )
    source = FixedSource([replace(started, configuration=auto), *events[1:]])
    app = FleetApp(source, clock=lambda: events[-1].t)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("l")
        await pilot.pause()
        block = app.screen.query_one(ConfigurationBlock)
        assert block.display
        text = str(block.render())
        assert text.startswith("ran on  server nvfp4-tui-sim 0.1.0  ·  GPU RTX PRO 6000")
        assert "KV cache differs  fp8 on GPU 0,1,2,4,5,6 · auto on GPU 3" in text

        # A run recorded before the configuration was carried: no block, no empty line.
        block.show(_state(), {})
        assert not block.display

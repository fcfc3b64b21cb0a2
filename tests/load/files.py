"""Profiles and a suite written into a temporary directory for the load tests, and a run of
one against the in-process simulated fleet."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path

from nvfp4_tui.bench.runner import Runner
from nvfp4_tui.config.plan import LaunchPlan
from nvfp4_tui.config.profile import Profile, with_urls
from nvfp4_tui.config.suites import Suite, load_suites
from nvfp4_tui.core.events import EndpointConfig, Event
from nvfp4_tui.sim.fleet import SimFleet

SUITE = """
[suite]
name = "essay"
kind = "text"
max_tokens = {max_tokens}
min_words = 100

[[prompt]]
id = "p0"
text = "Write an essay about rivers and the towns that grew beside them."
"""


def endpoint_toml(
    endpoint_id: str,
    position: int,
    *,
    decode_tps: float = 4.0,
    ttft_s: float = 0.1,
    curve: str | None = None,
    extra: str = "",
) -> str:
    text = f"""
[[endpoint]]
id = "{endpoint_id}"
url = "http://127.0.0.1:{18100 + position}"
model = "current"
gpu = {position}
class = "moe"
{extra}

[endpoint.sim]
decode_tps = {decode_tps}
ttft_s = {ttft_s}
vram_used_mib = 90000
seed = {position}
"""
    return text + (f"concurrency_curve = {curve}\n" if curve else "")


def write_profile(directory: Path, run: str, endpoints: list[str], max_tokens: int = 16) -> Path:
    """A profile whose [run] is ``run`` (without the header), over the one-prompt essay suite."""
    (directory / "suites").mkdir(parents=True, exist_ok=True)
    (directory / "suites" / "essay.toml").write_text(SUITE.format(max_tokens=max_tokens))
    path = directory / "profile.toml"
    header = '[run]\nname = "load"\nsuites = ["essay"]\nwarmup = false\ntimeout_s = 30\n'
    path.write_text(header + run + "\n" + "".join(endpoints))
    return path


def run_profile(profile: Profile, time_scale: float = 10.0) -> tuple[list[Event], dict]:
    """Run the whole plan against the simulated fleet; the events and the first endpoint's
    /sim/stats."""
    suites = load_suites(profile.suite_dirs, profile.run.suites)
    return run_suites(profile, suites, time_scale, model_clock=False)


def run_plan(
    plan: LaunchPlan,
    time_scale: float = 10.0,
    configuration: tuple[EndpointConfig, ...] = (),
) -> tuple[list[Event], dict]:
    """A resolved plan (its made suites: synthetic, trace, sessions, a context ladder) run
    against the simulated fleet, its rows in the model's seconds, with ``configuration`` what
    the servers said of themselves; the events and the first endpoint's /sim/stats."""
    return run_suites(plan.profile, plan.suites, time_scale, model_clock=True, config=configuration)


def run_suites(
    profile: Profile,
    suites: dict[str, Suite],
    time_scale: float,
    *,
    model_clock: bool,
    config: tuple[EndpointConfig, ...] = (),
) -> tuple[list[Event], dict]:
    events: list[Event] = []

    async def main() -> dict:
        async with SimFleet(profile.endpoints, time_scale=time_scale) as fleet:
            clock = time_scale if model_clock else 1.0
            live = with_urls(profile, fleet.urls, clock)
            await Runner(live, suites, "load", events.append).run(config)
            url = next(iter(fleet.urls.values()))
            stats = await asyncio.to_thread(urllib.request.urlopen, f"{url}/sim/stats", None, 5)
            return json.loads(stats.read())

    return events, asyncio.run(main())

"""A profile resolved once for one run: the frozen plan that launch, the worker and the session
receive, and its plain (JSON) form for the worker process.

Start-up resolves in one corridor. The command line applies its options over the profile's [run]
table (``with_overrides``); ``plan_run`` then takes the GPU telemetry choice and the suites; a
demo adds its simulator's URLs and clock (``with_urls``); telemetry resolves each endpoint's GPU
on the box that samples it (``with_gpus``). Nothing downstream re-derives a piece of it.

The worker is another process: ``to_plain`` carries the plan whole (the profile as resolved and
every suite with its prompts, by their fields: ``config.plain``) and ``from_plain`` gives it back
as the same records. The worker reads no profile, suite or dataset file, so what it runs is the
plan the user started, even when a file changes under it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from nvfp4_tui.config.plain import from_plain, to_plain
from nvfp4_tui.config.profile import Profile, with_urls
from nvfp4_tui.config.sessions import SESSIONS_SUITE
from nvfp4_tui.config.suites import (
    Sample,
    Suite,
    context_suites,
    load_suites,
    sessions_suite,
    synthetic_suite,
    trace_suite,
)
from nvfp4_tui.config.synthetic import SYNTHETIC_SUITE
from nvfp4_tui.config.telemetry_choice import TelemetryKind
from nvfp4_tui.config.trace import TRACE_SUITE


@dataclass(frozen=True)
class LaunchPlan:
    """The profile as this run will use it, and the suites it runs, by name."""

    profile: Profile
    suites: dict[str, Suite]

    def with_urls(self, urls: Mapping[str, str], time_scale: float = 1.0) -> LaunchPlan:
        """Endpoints moved to where a simulator serves them, on a clock ``time_scale`` times
        real time."""
        return replace(self, profile=with_urls(self.profile, dict(urls), time_scale))

    def with_gpus(self, gpus: Mapping[str, int]) -> LaunchPlan:
        """Endpoints' GPUs (UUID or "auto") replaced by the indices found on this box."""
        return replace(self, profile=self.profile.with_gpus(dict(gpus)))

    def to_plain(self) -> dict[str, Any]:
        """JSON-ready, whole: the profile and each suite by their fields."""
        return {
            "profile": to_plain(self.profile),
            "suites": {name: to_plain(suite) for name, suite in self.suites.items()},
        }

    @classmethod
    def from_plain(cls, plain: Mapping[str, Any]) -> LaunchPlan:
        """The plan ``to_plain`` wrote."""
        suites = {name: from_plain(Suite, suite) for name, suite in plain["suites"].items()}
        return cls(from_plain(Profile, plain["profile"]), suites)


def plan_run(profile: Profile, *, gpu_telemetry: TelemetryKind | None = None) -> LaunchPlan:
    """The plan for ``profile`` (the command line's overrides already applied): every endpoint's
    GPU telemetry from ``gpu_telemetry`` when given, and its suites loaded (ConfigError names
    each one missing or bad, before anything starts)."""
    if gpu_telemetry is not None:
        profile = profile.with_telemetry(gpu_telemetry)
    return LaunchPlan(profile, _suites_of(profile))


def _suites_of(profile: Profile) -> dict[str, Suite]:
    """The run's suites, in its order, each cut to ``run.sample`` prompts when it asks for a
    sample; the synthetic one made from ``run.synthetic``, the trace's read from ``run.trace``."""
    run = profile.run
    sample = None if run.sample is None else Sample(run.sample, run.seed)
    made = {}
    if run.synthetic is not None:
        made[SYNTHETIC_SUITE] = synthetic_suite(run.synthetic, path=profile.path)
    if run.trace is not None:
        made[TRACE_SUITE] = trace_suite(run.trace, run.trace.origin)
    if run.sessions is not None:
        made[SESSIONS_SUITE] = sessions_suite(run.sessions, profile.path)
    if run.context is not None:
        made |= context_suites(run.context, profile.path)
    read = [name for name in run.suites if name not in made]
    suites = {**load_suites(profile.suite_dirs, read, sample), **made}
    # A sample would cut a trace's schedule or a conversation's turns: those run whole.
    whole = {TRACE_SUITE, SESSIONS_SUITE}
    return {
        name: suites[name] if name in whole else suites[name].sampled(run.sample, run.seed)
        for name in run.suites
    }

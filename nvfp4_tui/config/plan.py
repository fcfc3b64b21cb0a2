"""A profile resolved once for one run: the frozen plan that launch, the worker and the session
receive, and its plain (JSON) form for the worker process.

Start-up resolves in one corridor. The command line applies its options over the profile's [run]
table (``with_overrides``); ``plan_run`` then takes the GPU telemetry choice and the suites; a
demo adds its simulator's URLs and clock (``with_urls``); telemetry resolves each endpoint's GPU
on the box that samples it (``with_gpus``). Nothing downstream re-derives a piece of it.

The worker is another process: ``to_plain`` carries what was resolved (the run table, each
endpoint's URL, clock, GPU and telemetry) and a digest of every file the plan was read from;
``from_plain`` reads the profile's endpoints and the suites from those files again and refuses
to run when one of them changed in between, so the worker runs the plan the user started.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from nvfp4_tui.config.datasets import DatasetError, NotRegularFile, open_regular
from nvfp4_tui.config.profile import (
    Profile,
    ReplyLimits,
    RunPlan,
    SweepSpec,
    load_profile,
    with_urls,
)
from nvfp4_tui.config.suites import Sample, Suite, load_suites
from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.core.slo import SloTargets

# What a plan resolves per endpoint, beyond the profile's file.
_ENDPOINT_CHOICES = ("url", "time_scale", "gpu", "telemetry")
_DIGEST_CHUNK_BYTES = 1 << 20


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
        """JSON-ready: the profile's path, its resolved run table and per-endpoint choices."""
        return {
            "profile_path": str(self.profile.path),
            "run": asdict(self.profile.run),
            "endpoints": {
                e.id: {key: getattr(e, key) for key in _ENDPOINT_CHOICES}
                for e in self.profile.endpoints
            },
            "files": _digests([self.profile.path, *self._suite_files()]),
        }

    def _suite_files(self) -> list[Path]:
        """Each suite's file, and the dataset a suite reads its prompts from."""
        files = [s.path for s in self.suites.values()]
        return files + [s.dataset.source for s in self.suites.values() if s.dataset]

    @classmethod
    def from_plain(cls, plain: Mapping[str, Any]) -> LaunchPlan:
        """The plan ``to_plain`` wrote; raises ConfigError when the files it names went bad or
        changed since it was written."""
        recorded: Mapping[str, str] = plain["files"]
        now = _digests(Path(name) for name in recorded)
        changed = [name for name, digest in recorded.items() if now[name] != digest]
        if changed:
            raise ConfigError([f"{name}: changed since the run was planned" for name in changed])
        profile = load_profile(Path(plain["profile_path"]))
        chosen: Mapping[str, Mapping[str, Any]] = plain["endpoints"]
        endpoints = tuple(replace(e, **chosen.get(e.id, {})) for e in profile.endpoints)
        profile = replace(profile, run=_run_from_plain(plain["run"]), endpoints=endpoints)
        return cls(profile, _suites_of(profile))


def plan_run(profile: Profile, *, gpu_telemetry: str | None = None) -> LaunchPlan:
    """The plan for ``profile`` (the command line's overrides already applied): every endpoint's
    GPU telemetry from ``gpu_telemetry`` when given, and its suites loaded (ConfigError names
    each one missing or bad, before anything starts)."""
    if gpu_telemetry is not None:
        profile = profile.with_telemetry(gpu_telemetry)
    return LaunchPlan(profile, _suites_of(profile))


def _suites_of(profile: Profile) -> dict[str, Suite]:
    """The run's suites, each cut to ``run.sample`` prompts when it asks for a sample."""
    run = profile.run
    sample = None if run.sample is None else Sample(run.sample, run.seed)
    suites = load_suites(profile.suite_dirs, run.suites, sample)
    return {name: suite.sampled(run.sample, run.seed) for name, suite in suites.items()}


def _digests(paths: Iterable[Path]) -> dict[str, str]:
    """SHA-256 of each file by its path, read in chunks; "" for one that cannot be read.
    ConfigError names a path that is no regular file: a FIFO swapped in would block the read,
    a device such as /dev/zero would never end it."""
    digests = {}
    for path in paths:
        try:
            digests[str(path)] = _sha256(path)
        except NotRegularFile as e:
            raise ConfigError([str(e)]) from None
        except (DatasetError, OSError):
            digests[str(path)] = ""
    return digests


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular(path, expected="the file the run was planned from") as f:
        while chunk := f.read(_DIGEST_CHUNK_BYTES):  # a large dataset is never held whole
            digest.update(chunk)
    return digest.hexdigest()


def _run_from_plain(raw: Mapping[str, Any]) -> RunPlan:
    # JSON gives lists for tuples and dicts for the nested records.
    sweep = raw["sweep"]
    return RunPlan(
        **{
            **raw,
            "suites": tuple(raw["suites"]),
            "concurrency": tuple(raw["concurrency"]),
            "rate_rps": tuple(raw["rate_rps"]),
            "sweep": None if sweep is None else SweepSpec(**sweep),
            "slo": SloTargets(**raw["slo"]),
            "limits": ReplyLimits(**raw["limits"]),
        }
    )

"""GpuSampler's thread, and the sources a profile's telemetry settings ask for."""

from __future__ import annotations

import threading

import pynvml
import pytest

from nvfp4_tui.core.events import GpuSample
from nvfp4_tui.telemetry.dcgm import DcgmSource
from nvfp4_tui.telemetry.nvml import NvmlSource
from nvfp4_tui.telemetry.sampler import GpuSampler, plan_gpu_telemetry
from tests.telemetry.fakes import FakeGpu, endpoint, install_fake_nvml, profile_of


class CountingSource:
    def __init__(self, gpu: int, fail_first: int = 0, fail_always: bool = False) -> None:
        self.gpu = gpu
        self.calls = 0
        self.closed = 0
        self.fail_first = fail_first
        self.fail_always = fail_always

    def sample(self, t: float) -> list[GpuSample]:
        self.calls += 1
        if self.fail_always or self.calls <= self.fail_first:
            raise RuntimeError(f"source {self.gpu} broke\nsecond line")
        return [GpuSample(t=t, gpu=self.gpu)]

    def close(self) -> None:
        self.closed += 1


class Collector:
    def __init__(self, wanted: int) -> None:
        self.batches: list[list[GpuSample]] = []
        self.errors: list[str] = []
        self.enough = threading.Event()
        self.wanted = wanted

    def on_samples(self, samples: list[GpuSample]) -> None:
        self.batches.append(samples)
        if len(self.batches) >= self.wanted:
            self.enough.set()


def test_a_last_round_samples_every_source_once_after_the_stop() -> None:
    # A slow period: each thread waits between calls when stop comes, so only the last round
    # can add the batches after the first two.
    sources = [CountingSource(0), CountingSource(1)]
    got = Collector(wanted=2)
    sampler = GpuSampler(sources, got.on_samples, rate_hz=0.1)
    sampler.start()
    assert got.enough.wait(10)
    assert sampler.stop(timeout_s=5, last_round=True)
    assert len(got.batches) == 4 and sorted(s.gpu for b in got.batches[2:] for s in b) == [0, 1]
    assert all(s.calls == 2 and s.closed == 1 for s in sources)


def test_samples_are_delivered_and_stop_is_clean() -> None:
    sources = [CountingSource(0), CountingSource(1)]
    got = Collector(wanted=5)
    sampler = GpuSampler(sources, got.on_samples, rate_hz=50, on_error=got.errors.append)
    sampler.start()
    assert got.enough.wait(10)
    assert sampler.stop(timeout_s=5)
    assert not sampler.running
    # One batch per call of a source: each source is sampled in a thread of its own.
    assert {tuple(s.gpu for s in batch) for batch in got.batches} == {(0,), (1,)}
    assert all(s.closed == 1 for s in sources)
    assert got.errors == []


def test_stop_wakes_a_slow_sampler_at_once() -> None:
    # One sample every 100 s: a sleep-based loop could not stop within the 5 s bound.
    got = Collector(wanted=1)
    sampler = GpuSampler([CountingSource(0)], got.on_samples, rate_hz=0.01)
    sampler.start()
    assert got.enough.wait(10)
    assert sampler.stop(timeout_s=5)


def test_a_raising_source_is_reported_once_and_retried_slower() -> None:
    broken, healthy = CountingSource(0, fail_always=True), CountingSource(1)
    got = Collector(wanted=120)
    sampler = GpuSampler(
        [broken, healthy],
        got.on_samples,
        rate_hz=100,
        on_error=got.errors.append,
        retry_interval_s=0.3,
    )
    sampler.start()
    assert got.enough.wait(20)
    assert sampler.stop(timeout_s=5)
    assert got.errors == ["source 0 broke second line"]
    assert all([s.gpu for s in batch] == [1] for batch in got.batches)
    # Retried every 0.3 s instead of every 0.01 s: far fewer calls than the healthy source.
    assert broken.calls >= 2
    assert broken.calls * 4 < healthy.calls
    assert broken.closed == 1


def test_a_source_that_recovers_delivers_again() -> None:
    flaky = CountingSource(3, fail_first=2)
    got = Collector(wanted=3)
    sampler = GpuSampler(
        [flaky], got.on_samples, rate_hz=100, on_error=got.errors.append, retry_interval_s=0.02
    )
    sampler.start()
    assert got.enough.wait(20)
    assert sampler.stop(timeout_s=5)
    assert len(got.errors) == 1
    assert got.batches[0][0].gpu == 3


def test_a_raising_callback_does_not_end_the_thread() -> None:
    calls: list[int] = []
    errors: list[str] = []
    done = threading.Event()

    def on_samples(samples: list[GpuSample]) -> None:
        calls.append(len(samples))
        if len(calls) >= 5:
            done.set()
        raise ValueError("consumer bug")

    sampler = GpuSampler([CountingSource(0)], on_samples, rate_hz=100, on_error=errors.append)
    sampler.start()
    assert done.wait(20)
    assert sampler.stop(timeout_s=5)
    assert errors == ["GPU sample callback failed: consumer bug"]


def test_a_source_stuck_in_a_call_is_closed_when_it_returns() -> None:
    release = threading.Event()
    entered = threading.Event()

    class Stuck(CountingSource):
        def sample(self, t: float) -> list[GpuSample]:
            entered.set()
            release.wait(10)
            return super().sample(t)

    stuck = Stuck(0)
    sampler = GpuSampler([stuck], lambda samples: None, rate_hz=10)
    sampler.start()
    assert entered.wait(10)
    assert not sampler.stop(timeout_s=0.05)
    assert stuck.closed == 0
    release.set()
    assert sampler.stop(timeout_s=5)
    assert stuck.closed == 1


def test_stop_without_start_closes_the_sources() -> None:
    source = CountingSource(0)
    assert GpuSampler([source], lambda samples: None).stop()
    assert (source.calls, source.closed) == (0, 1)


def test_rate_must_be_positive() -> None:
    with pytest.raises(ValueError):
        GpuSampler([], lambda samples: None, rate_hz=0)


UUIDS = [f"GPU-aaaaaaa{i}-1111-2222-3333-444444444444" for i in range(3)]


def test_sources_for_a_mixed_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    install_fake_nvml(monkeypatch, [FakeGpu(uuid=u) for u in UUIDS])
    profile = profile_of(
        endpoint("by_index", "http://127.0.0.1:8016", gpu=0),
        endpoint("by_uuid", "http://127.0.0.1:8017", gpu=UUIDS[2]),
        endpoint("missing", "http://127.0.0.1:8018", gpu=9),
        endpoint(
            "remote0", "http://10.0.0.7:8000", gpu=0, telemetry="dcgm:http://node7:9400/metrics"
        ),
        endpoint(
            "remote1", "http://10.0.0.7:8001", gpu=1, telemetry="dcgm:http://node7:9400/metrics"
        ),
        endpoint("simulated", "http://127.0.0.1:18016", gpu=3, telemetry="sim"),
        endpoint("blind", "http://127.0.0.1:8020", gpu=4, telemetry="none"),
    )
    plan = plan_gpu_telemetry(profile)
    nvml, dcgm = plan.sources
    assert isinstance(nvml, NvmlSource) and isinstance(dcgm, DcgmSource)
    assert dcgm.url == "http://node7:9400/metrics"
    assert [s.gpu for s in nvml.sample(1.0)] == [0, 2]
    assert plan.endpoint_gpus == {"by_index": 0, "by_uuid": 2, "remote0": 0, "remote1": 1}
    assert plan.messages == ["endpoint missing: gpu = 9 not found: NVML sees 3 GPU(s), indices 0-2"]
    nvml.close()


def test_nvml_unavailable_is_a_message_not_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    install_fake_nvml(monkeypatch, [], init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)
    profile = profile_of(
        endpoint("a", gpu=0),
        endpoint("b", "http://127.0.0.1:8017", gpu=1),
        endpoint("c", "http://10.0.0.7:8000", gpu=None, telemetry="dcgm:http://node7:9400/metrics"),
    )
    planned = plan_gpu_telemetry(profile)
    sources, messages = planned.sources, planned.messages
    assert messages == [
        "GPU telemetry unavailable: NVML init failed: NVML Shared Library Not Found"
    ]
    assert len(sources) == 1 and isinstance(sources[0], DcgmSource)


def test_no_named_gpu_samples_the_whole_box(monkeypatch: pytest.MonkeyPatch) -> None:
    install_fake_nvml(monkeypatch, [FakeGpu(uuid=u) for u in UUIDS])
    planned = plan_gpu_telemetry(profile_of(endpoint("a", gpu=None)))
    sources, messages = planned.sources, planned.messages
    assert messages == []
    assert [s.gpu for s in sources[0].sample(1.0)] == [0, 1, 2]
    sources[0].close()


def test_unresolvable_auto_closes_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install_fake_nvml(monkeypatch, [FakeGpu(uuid=u) for u in UUIDS])
    planned = plan_gpu_telemetry(profile_of(endpoint("a", "http://127.0.0.1:1", gpu="auto")))
    sources, messages = planned.sources, planned.messages
    assert sources == []
    assert messages == [
        "endpoint a: gpu = 'auto': no GPU process found serving port 1 on this host"
    ]
    assert fake.shutdowns == 1


def test_sampling_nvml_through_the_sampler(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install_fake_nvml(monkeypatch, [FakeGpu(uuid=u) for u in UUIDS])
    sources = plan_gpu_telemetry(profile_of(endpoint("a", gpu=1))).sources
    got = Collector(wanted=2)
    sampler = GpuSampler(sources, got.on_samples, rate_hz=50)
    sampler.start()
    assert got.enough.wait(10)
    assert sampler.stop(timeout_s=5)
    assert [s.gpu for s in got.batches[0]] == [1]
    assert fake.shutdowns == 1


def test_every_kind_a_profile_may_name_is_planned_or_plugged_in_by_its_owner() -> None:
    """A kind read on this host or from a URL has its planner; "sim" (the simulator's source,
    added by its owner) and "none" have none."""
    from typing import get_args

    from nvfp4_tui.config.telemetry_choice import HOST_KINDS, URL_KINDS, TelemetryKind
    from nvfp4_tui.telemetry.sampler import PLANNERS

    assert sorted((*HOST_KINDS, *URL_KINDS)) == sorted(get_args(TelemetryKind))
    assert set(PLANNERS) == {"nvml", *URL_KINDS}
    assert set(get_args(TelemetryKind)) - set(PLANNERS) == {"sim", "none"}

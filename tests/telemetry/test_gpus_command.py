"""`nvfp4-tui gpus`: what it prints with and without NVML, and with a profile."""

from __future__ import annotations

import pynvml
import pytest

from nvfp4_tui.telemetry.gpus_command import gpus_command
from tests.telemetry.fakes import (
    MIB,
    EngineState,
    FakeGpu,
    dcgm_text,
    endpoint,
    http_server,
    install_fake_nvml,
    profile_of,
    vllm_metrics_text,
)


def test_without_nvml_prints_one_line_and_exits_zero(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    install_fake_nvml(monkeypatch, [], init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED)
    assert gpus_command(None) == 0
    assert capsys.readouterr().out == (
        "GPU telemetry unavailable: NVML init failed: Driver Not Loaded\n"
    )


def test_on_this_machine_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert gpus_command(None) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(("GPU telemetry unavailable: ", "NVML: "))


def test_table_with_processes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gpus = [
        FakeGpu(uuid="GPU-11111111-2222-3333-4444-555555555555", compute=[(4242, 92000 * MIB)]),
        FakeGpu(uuid="GPU-66666666-2222-3333-4444-555555555555", name="NVIDIA H200"),
    ]
    gpus[1].fail = {"nvmlDeviceGetPowerUsage": pynvml.NVML_ERROR_NOT_SUPPORTED}
    fake = install_fake_nvml(monkeypatch, gpus, process_names={4242: "python3"})
    profile = profile_of(
        endpoint("first", "http://127.0.0.1:1", gpu=0),
        endpoint("by_uuid", "http://127.0.0.1:2", gpu=gpus[1].uuid),
        endpoint("gone", "http://127.0.0.1:3", gpu=7),
    )
    assert gpus_command(profile) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "NVML: 2 GPU(s)"
    assert "NVIDIA RTX PRO 6000 Blackwell Server Edition" in lines[2]
    assert "92316 / 97887" in lines[2] and "452 / 600" in lines[2]
    assert "NVIDIA H200" in lines[3] and "— / 600" in lines[3]
    assert any("4242" in line and "python3" in line and "92000" in line for line in lines)
    assert "GPU 1: no processes" in out
    rows = {line.split()[0]: line.split()[-1] for line in lines if "http://127.0.0.1:" in line}
    assert rows == {"first": "0", "by_uuid": "1", "gone": "found"}
    assert fake.shutdowns == 1


def test_with_a_profile_shows_endpoints_dcgm_and_server_metrics(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    install_fake_nvml(monkeypatch, [], init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)
    body = vllm_metrics_text([EngineState(running=2, waiting=1, kv_usage=0.375, preemptions=5)])
    routes = {"/metrics": lambda: (200, body), "/dcgm": lambda: (200, dcgm_text())}
    with http_server(routes) as base, http_server({}) as bare:
        profile = profile_of(
            endpoint("vllm", base, gpu=0),
            endpoint("plain", bare, gpu=1),
            endpoint("remote", "http://127.0.0.1:1", gpu=1, telemetry=f"dcgm:{base}/dcgm"),
        )
        assert gpus_command(profile) == 0
    out = capsys.readouterr().out
    assert out.startswith("GPU telemetry unavailable: NVML init failed: NVML Shared Library")
    assert f"DCGM exporter {base}/dcgm: 2 GPU(s)" in out
    assert "node7" in out
    vllm_row = [line for line in out.splitlines() if line.strip().startswith("vllm  ")][-1]
    assert vllm_row.split()[1:] == ["2", "1", "37.5", "5", "ok"]
    plain_row = [line for line in out.splitlines() if line.strip().startswith("plain  ")][-1]
    assert "no server metrics (HTTP 404)" in plain_row
    remote_row = [line for line in out.splitlines() if line.strip().startswith("remote  ")][-1]
    assert "server metrics unreachable" in remote_row

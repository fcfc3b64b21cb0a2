"""NvmlSource against a fake NVML at the pynvml-function level, and endpoint -> GPU resolution."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pynvml
import pytest

from nvfp4_tui.telemetry.nvml import (
    GpuProcess,
    NvmlSource,
    TelemetryUnavailable,
    cuda_version,
    descendant_pids,
    listening_pids,
    resolve_gpu,
)
from nvfp4_tui.telemetry.source import GpuIdentity
from tests.telemetry.fakes import MIB, FakeGpu, endpoint, install_fake_nvml

UUIDS = [f"GPU-0000000{i}-1111-2222-3333-444444444444" for i in range(3)]


def three_gpus() -> list[FakeGpu]:
    return [FakeGpu(uuid=u) for u in UUIDS]


def test_values_are_mapped_with_their_units(monkeypatch: pytest.MonkeyPatch) -> None:
    gpus = three_gpus()
    gpus[1] = FakeGpu(
        uuid=UUIDS[1],
        name=b"NVIDIA H200",  # older bindings return bytes
        used_bytes=1536 * MIB,
        total_bytes=143771 * MIB,
        util_gpu=12,
        util_mem=3,
        power_mw=123_456,
        limit_mw=700_000,
        temp_c=35,
        sm_mhz=1980,
        mem_mhz=3201,
    )
    install_fake_nvml(monkeypatch, gpus)
    source = NvmlSource.open()
    samples = source.sample(1234.5)
    assert [s.gpu for s in samples] == [0, 1, 2]
    s = samples[1]
    assert (s.t, s.name, s.uuid, s.source) == (1234.5, "NVIDIA H200", UUIDS[1], "nvml")
    assert s.vram_used_mib == 1536.0
    assert s.vram_total_mib == 143771.0
    assert (s.util_gpu_pct, s.util_mem_pct) == (12.0, 3.0)
    assert s.power_w == pytest.approx(123.456)
    assert s.power_limit_w == 700.0
    assert (s.temperature_c, s.sm_clock_mhz, s.mem_clock_mhz) == (35.0, 1980.0, 3201.0)
    assert samples[0].name == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert samples[0].vram_used_mib == 92316.0
    source.close()


def test_identities_carry_driver_cuda_limit_and_max_clocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpus = three_gpus()
    gpus[2] = FakeGpu(uuid=UUIDS[2], name=b"NVIDIA H200", limit_mw=700_000, max_sm_mhz=1980)
    install_fake_nvml(monkeypatch, gpus, driver_version=b"570.86.15", cuda_driver_version=12080)
    source = NvmlSource.open()
    identities = source.identities()
    assert [i.gpu for i in identities] == [0, 1, 2]
    assert identities[2] == GpuIdentity(
        gpu=2,
        name="NVIDIA H200",
        uuid=UUIDS[2],
        driver_version="570.86.15",
        cuda_driver_version="12.8",
        power_limit_w=700.0,
        max_sm_clock_mhz=1980.0,
        max_mem_clock_mhz=14001.0,
    )
    source.close()
    assert source.identities() == []


def test_identities_leave_what_nvml_refuses_none(monkeypatch: pytest.MonkeyPatch) -> None:
    gpus = three_gpus()
    gpus[0].fail["nvmlDeviceGetMaxClockInfo"] = pynvml.NVML_ERROR_NOT_SUPPORTED
    install_fake_nvml(monkeypatch, gpus, system_error=pynvml.NVML_ERROR_NO_PERMISSION)
    source = NvmlSource.open()
    first, second = source.identities()[:2]
    assert (first.driver_version, first.cuda_driver_version) == (None, None)
    assert (first.max_sm_clock_mhz, first.max_mem_clock_mhz) == (None, None)
    assert first.name is not None and first.power_limit_w == 600.0
    assert second.max_sm_clock_mhz == 2617.0
    source.close()


def test_cuda_version_reads_like_nvidia_smi() -> None:
    assert [cuda_version(v) for v in (12080, 13000, 11040)] == ["12.8", "13.0", "11.4"]


def test_a_failing_query_blanks_only_its_field(monkeypatch: pytest.MonkeyPatch) -> None:
    gpus = three_gpus()
    gpus[0].fail = {"nvmlDeviceGetPowerUsage": pynvml.NVML_ERROR_NOT_SUPPORTED}
    gpus[1].fail = {
        "nvmlDeviceGetTemperature": pynvml.NVML_ERROR_NO_PERMISSION,
        "nvmlDeviceGetUUID": pynvml.NVML_ERROR_NOT_SUPPORTED,
    }
    gpus[2].fail = {"nvmlDeviceGetMemoryInfo": pynvml.NVML_ERROR_GPU_IS_LOST}
    install_fake_nvml(monkeypatch, gpus)
    source = NvmlSource.open()
    s0, s1, s2 = source.sample(1.0)
    assert s0.power_w is None and s0.power_limit_w == 600.0 and s0.temperature_c == 66.0
    assert s1.temperature_c is None and s1.uuid is None and s1.power_w == pytest.approx(452.25)
    assert s2.vram_used_mib is None and s2.vram_total_mib is None and s2.util_gpu_pct == 97.0
    source.close()


def test_unsupported_fields_are_not_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    gpus = three_gpus()
    gpus[0].fail = {"nvmlDeviceGetPowerUsage": pynvml.NVML_ERROR_NOT_SUPPORTED}
    gpus[1].fail = {"nvmlDeviceGetPowerUsage": pynvml.NVML_ERROR_NO_PERMISSION}
    fake = install_fake_nvml(monkeypatch, gpus)
    source = NvmlSource.open()
    for _ in range(3):
        source.sample(1.0)
    # GPU 0 asked once (not supported is permanent); GPUs 1 and 2 asked every sample.
    assert fake.calls["nvmlDeviceGetPowerUsage"] == 1 + 3 + 3
    source.close()


@pytest.mark.parametrize(
    "code",
    [
        pynvml.NVML_ERROR_LIBRARY_NOT_FOUND,
        pynvml.NVML_ERROR_DRIVER_NOT_LOADED,
        pynvml.NVML_ERROR_NO_PERMISSION,
    ],
)
def test_init_failure_is_one_line(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    install_fake_nvml(monkeypatch, three_gpus(), init_error=code)
    with pytest.raises(TelemetryUnavailable) as caught:
        NvmlSource.open()
    text = str(caught.value)
    assert text.startswith("GPU telemetry unavailable: ")
    assert "\n" not in text
    assert str(pynvml.NVMLError(code)) in text


def test_missing_module_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    with pytest.raises(TelemetryUnavailable) as caught:
        NvmlSource.open()
    assert str(caught.value).startswith("GPU telemetry unavailable: the pynvml module")
    assert "\n" not in str(caught.value)


def test_no_gpu_is_unavailable_and_shuts_nvml_down(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install_fake_nvml(monkeypatch, [])
    with pytest.raises(TelemetryUnavailable, match="NVML sees no GPU"):
        NvmlSource.open()
    assert fake.shutdowns == 1


def test_this_machine_opens_or_says_why_in_one_line() -> None:
    try:
        source = NvmlSource.open()
    except TelemetryUnavailable as exc:
        assert str(exc).startswith("GPU telemetry unavailable: ")
        assert "\n" not in str(exc)
    else:
        assert len(source.sample(0.0)) == source.gpu_count >= 1
        source.close()


def test_processes_merge_compute_and_graphics(monkeypatch: pytest.MonkeyPatch) -> None:
    gpus = three_gpus()
    gpus[0].compute = [(4242, 90000 * MIB), (4300, None)]
    gpus[0].graphics = [(4242, 90000 * MIB), (777, 12 * MIB)]
    gpus[2].fail = {"nvmlDeviceGetComputeRunningProcesses": pynvml.NVML_ERROR_NO_PERMISSION}
    install_fake_nvml(monkeypatch, gpus, process_names={4242: "/usr/bin/python3", 777: b"Xorg"})
    source = NvmlSource.open()
    assert source.processes(0) == [
        GpuProcess(pid=777, name="Xorg", vram_used_mib=12.0),
        GpuProcess(pid=4242, name="/usr/bin/python3", vram_used_mib=90000.0),
        GpuProcess(pid=4300, name=None, vram_used_mib=None),
    ]
    assert source.processes(1) == []
    assert source.processes(2) == []
    source.close()


def test_close_is_idempotent_and_ends_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install_fake_nvml(monkeypatch, three_gpus())
    source = NvmlSource.open()
    source.close()
    source.close()
    assert fake.shutdowns == 1
    assert source.sample(1.0) == []
    assert source.processes(0) == []


def test_select_restricts_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    install_fake_nvml(monkeypatch, three_gpus())
    source = NvmlSource.open()
    source.select([2, 0, 9])
    assert [s.gpu for s in source.sample(1.0)] == [0, 2]
    source.select(None)
    assert len(source.sample(1.0)) == 3
    source.close()


def test_resolve_by_index_and_uuid(monkeypatch: pytest.MonkeyPatch) -> None:
    install_fake_nvml(monkeypatch, three_gpus())
    source = NvmlSource.open()
    assert resolve_gpu(endpoint("a", gpu=1), source) == 1
    assert resolve_gpu(endpoint("a", gpu=1), None) == 1
    assert resolve_gpu(endpoint("b", gpu=UUIDS[2]), source) == 2
    assert (
        resolve_gpu(endpoint("c", gpu="GPU-ffffffff-0000-0000-0000-000000000000"), source) is None
    )
    assert resolve_gpu(endpoint("d", gpu=None), source) is None
    assert resolve_gpu(endpoint("e", gpu="auto"), None) is None
    source.close()


linux_proc = pytest.mark.skipif(
    not Path("/proc/net/tcp").exists(), reason="needs Linux /proc/net/tcp"
)


@linux_proc
def test_auto_finds_the_gpu_of_the_listening_process(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        gpus = three_gpus()
        gpus[0].compute = [(1, 10 * MIB)]  # some other process
        gpus[1].compute = [(os.getpid(), 90000 * MIB)]
        install_fake_nvml(monkeypatch, gpus)
        source = NvmlSource.open()
        assert os.getpid() in listening_pids(port)
        assert resolve_gpu(endpoint("a", f"http://127.0.0.1:{port}", gpu="auto"), source) == 1
        source.close()


@linux_proc
def test_auto_follows_child_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    # vLLM's engine core, which holds the GPU memory, is a child of the API server that listens.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with socket.socket(socket.AF_INET6) as listener:
            listener.bind(("::1", 0))
            listener.listen()
            port = listener.getsockname()[1]
            gpus = three_gpus()
            gpus[2].compute = [(child.pid, 80000 * MIB)]
            install_fake_nvml(monkeypatch, gpus)
            source = NvmlSource.open()
            assert resolve_gpu(endpoint("a", f"http://[::1]:{port}", gpu="auto"), source) == 2
            source.close()
    finally:
        child.kill()
        child.wait(10)


@linux_proc
def test_auto_without_a_listener_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening
    install_fake_nvml(monkeypatch, three_gpus())
    source = NvmlSource.open()
    assert resolve_gpu(endpoint("a", f"http://127.0.0.1:{port}", gpu="auto"), source) is None
    source.close()


def test_proc_parsing_on_a_fake_tree(tmp_path: Path) -> None:
    (tmp_path / "net").mkdir()
    header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    (tmp_path / "net" / "tcp").write_text(
        header
        # 0x1F50 = 8016 listening (0A) with inode 5551; 8017 established (01) with inode 5552.
        + "   0: 0100007F:1F50 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5551 1 0 100 0 0 10 0\n"
        + "   1: 0100007F:1F51 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 5552 1 0 100 0 0 10 0\n"
    )
    (tmp_path / "net" / "tcp6").write_text(
        "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 00000000000000000000000001000000:1F52 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5553 1 0 100 0 0 10 0\n"
    )

    def process(pid: int, ppid: int, comm: str, sockets: list[int]) -> None:
        d = tmp_path / str(pid)
        (d / "fd").mkdir(parents=True)
        (d / "stat").write_text(f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 0 0\n")
        for fd, inode in enumerate(sockets, start=3):
            (d / "fd" / str(fd)).symlink_to(f"socket:[{inode}]")

    process(100, 1, "vllm serve", [5551])
    process(101, 100, "VLLM::EngineCore", [])
    process(102, 101, "weird) (name", [])
    process(200, 1, "client", [5552])
    process(300, 1, "v6server", [5553])
    (tmp_path / "self").mkdir()  # non-numeric entries are skipped

    assert listening_pids(8016, tmp_path) == {100}
    assert listening_pids(8017, tmp_path) == set()  # established, not listening
    assert listening_pids(8018, tmp_path) == {300}
    assert descendant_pids({100}, tmp_path) == {100, 101, 102}
    assert descendant_pids(set(), tmp_path) == set()
    assert listening_pids(8016, tmp_path / "missing") == set()

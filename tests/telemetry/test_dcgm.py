"""dcgm-exporter text -> GpuSample, and DcgmSource over HTTP."""

from __future__ import annotations

import socket

import pytest

from nvfp4_tui.telemetry.dcgm import DcgmSource, DcgmUnavailable, dcgm_samples
from tests.telemetry.fakes import DCGM_UUIDS, dcgm_text, http_server


def test_fields_and_labels_are_mapped() -> None:
    s0, s1 = dcgm_samples(dcgm_text(), t=7.0)
    assert (s0.t, s0.gpu, s0.uuid, s0.host, s0.source) == (7.0, 0, DCGM_UUIDS[0], "node7", "dcgm")
    assert s0.name == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert s0.vram_used_mib == 92316
    # No FB_TOTAL in the default counters: used + free + reserved.
    assert s0.vram_total_mib == 92316 + 5042 + 529
    assert (s0.util_gpu_pct, s0.util_mem_pct) == (97, 41)
    assert s0.power_w == pytest.approx(452.25)
    assert s0.power_limit_w is None
    assert (s0.temperature_c, s0.sm_clock_mhz, s0.mem_clock_mhz) == (66, 2430, 14001)
    assert (s1.gpu, s1.vram_used_mib, s1.util_gpu_pct) == (1, 377, 0)


def test_fb_total_is_preferred_when_exported() -> None:
    s0, _ = dcgm_samples(dcgm_text(with_total=True), t=0.0)
    assert s0.vram_total_mib == 97887


def test_filters_by_index_uuid_and_host() -> None:
    assert [s.gpu for s in dcgm_samples(dcgm_text(), 0.0, gpus=[1])] == [1]
    assert [s.gpu for s in dcgm_samples(dcgm_text(), 0.0, gpus=[DCGM_UUIDS[0]])] == [0]
    assert dcgm_samples(dcgm_text(), 0.0, gpus=[5]) == []
    both_hosts = dcgm_text(hosts=("node7", "node8"))
    assert len(dcgm_samples(both_hosts, 0.0)) == 4
    assert {s.host for s in dcgm_samples(both_hosts, 0.0, host="node8")} == {"node8"}


def test_source_reads_an_exporter_over_http() -> None:
    routes = {
        "/metrics": lambda: (200, dcgm_text()),
        "/html": lambda: (200, "<html>not here</html>"),
    }
    with http_server(routes) as base:
        samples = DcgmSource(f"{base}/metrics", gpus=[DCGM_UUIDS[1]]).sample(3.0)
        assert [(s.gpu, s.uuid) for s in samples] == [(1, DCGM_UUIDS[1])]
        with pytest.raises(DcgmUnavailable, match=r"HTTP 404$"):
            DcgmSource(f"{base}/missing").sample(3.0)
        with pytest.raises(DcgmUnavailable, match="not Prometheus text"):
            DcgmSource(f"{base}/html").sample(3.0)


def test_a_bad_exporter_line_is_quoted_scrubbed_and_cut() -> None:
    hostile = "\x1b]0;owned\x07DCGM_FI_DEV_GPU_UTIL{gpu=0} " + "x" * 500
    with (
        http_server({"/metrics": lambda: (200, hostile + "\n")}) as base,
        pytest.raises(DcgmUnavailable) as caught,
    ):
        DcgmSource(f"{base}/metrics").sample(0.0)
    message = str(caught.value)
    assert "not Prometheus text" in message and "DCGM_FI_DEV_GPU_UTIL" in message
    assert "\x1b" not in message and "\x07" not in message
    assert len(message) < len(base) + 300


def test_unreachable_exporter_is_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/metrics"
    with pytest.raises(DcgmUnavailable) as caught:
        DcgmSource(url, timeout_s=1.0).sample(0.0)
    assert str(caught.value).startswith(f"DCGM exporter {url}: ")
    assert "\n" not in str(caught.value)


def test_an_exporter_body_past_the_size_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nvfp4_tui.telemetry.dcgm.MAX_METRICS_BYTES", 64 << 10)
    routes = {"/metrics": lambda: (200, dcgm_text() + "# padding\n" * (16 << 10))}
    with (
        http_server(routes) as base,
        pytest.raises(DcgmUnavailable, match=r"body over 0\.0625 MiB$"),
    ):
        DcgmSource(f"{base}/metrics").sample(3.0)

"""compare pairs what is the same thing in both runs: an endpoint (by id, else by its model, else
by its label) with its own GPU, on one clock, and no effect size where nothing can be tested."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.core.events import (
    EndpointConfig,
    EndpointInfo,
    Event,
    GpuSample,
    RequestFinished,
    RunFinished,
    RunStarted,
)
from nvfp4_tui.output.compare import compare_snapshots, render_comparison
from nvfp4_tui.store.reader import open_snapshot
from tests.support.factories import T0, endpoint_info, seeded_run, write_snapshot

QWEN = endpoint_info("moe_qwen36", 0, label="Qwen3.6-35B-A3B")
REDHAT = endpoint_info("moe_redhat", 1, label="RedHatAI Gemma4-26B-A4B")
ROOTS = {"moe_qwen36": "/models/Qwen3.6-35B-A3B-NVFP4", "moe_redhat": "/models/gemma4-26b-rh"}
VRAM_MIB = {"moe_qwen36": 92316.0, "moe_redhat": 92862.0}


def _run(
    run_id: str,
    endpoints: tuple[EndpointInfo, ...],
    *,
    roots: dict[str, str],
    n: int = 8,
    speed: float = 1.0,
    seed: int = 1,
) -> list[Event]:
    """Each endpoint on its GPU with its VRAM (by model, wherever it sits), its server's model
    root recorded; every decode rate times ``speed`` and every TTFT over it."""
    events = seeded_run(run_id, seed, endpoints, ["english"], n=n)
    start = events[0]
    assert isinstance(start, RunStarted)
    configuration = tuple(EndpointConfig(e.id, model_root=roots[e.id]) for e in endpoints)
    events[0] = replace(start, configuration=configuration)
    model_of = {e.id: next(m for m, r in ROOTS.items() if r == roots[e.id]) for e in endpoints}
    for e in endpoints:
        assert e.gpu is not None
        for t, extra in ((T0, 0.0), (T0 + 1, 400.0)):
            vram = VRAM_MIB[model_of[e.id]] + extra
            events.append(GpuSample(t, e.gpu, vram_used_mib=vram, source="sim"))
    scaled = [
        replace(e, decode_tps=(e.decode_tps or 0) * speed, ttft_s=(e.ttft_s or 0) / speed)
        if isinstance(e, RequestFinished)
        else e
        for e in events
        if not isinstance(e, RunFinished)
    ]
    return [*sorted(scaled, key=lambda e: e.t), RunFinished(T0 + 100, "complete")]


def test_vram_follows_each_model_to_its_gpu_and_a_new_label_is_said(tmp_path: Path) -> None:
    a = write_snapshot(tmp_path, "a", _run("a", (QWEN, REDHAT), roots=ROOTS))
    # B swaps the two GPUs, and serves RedHatAI's model under a new id and a new label.
    moved_qwen = replace(QWEN, gpu=1)
    renamed = endpoint_info("gemma_fp8", 0, label="RedHatAI Gemma4 (fp8 KV)")
    roots_b = {"moe_qwen36": ROOTS["moe_qwen36"], "gemma_fp8": ROOTS["moe_redhat"]}
    b = write_snapshot(tmp_path, "b", _run("b", (moved_qwen, renamed), roots=roots_b, seed=2))
    comparison = compare_snapshots(open_snapshot(a), open_snapshot(b))

    assert [(p.endpoint_a, p.endpoint_b, p.matched_by) for p in comparison.pairings] == [
        ("moe_qwen36", "moe_qwen36", "id"),
        ("moe_redhat", "gemma_fp8", "model"),
    ]
    assert comparison.only_a == () and comparison.only_b == ()
    assert {c.label for c in comparison.cells} == {
        "Qwen3.6-35B-A3B",
        "RedHatAI Gemma4-26B-A4B → RedHatAI Gemma4 (fp8 KV)",
    }
    assert (
        "label changed: RedHatAI Gemma4-26B-A4B → RedHatAI Gemma4 (fp8 KV) (paired by model)"
        in comparison.pairing_notes
    )
    # Each model's VRAM beside its own in the other run: no change, though the GPUs swapped.
    assert [(v.gpus, v.before_a_mib, v.before_b_mib) for v in comparison.vram] == [
        ("0 → 1", 92316.0, 92316.0),
        ("1 → 0", 92862.0, 92862.0),
    ]
    text = render_comparison(comparison)
    assert "−546" not in text and "-546" not in text
    assert "label changed: RedHatAI" in text
    body = json.loads(render_comparison(comparison, "json"))
    assert body["pairs"][1]["matched_by"] == "model"
    assert (body["vram"][0]["gpu_a"], body["vram"][0]["gpu_b"]) == (0, 1)


def test_no_speed_is_compared_across_simulator_clocks(tmp_path: Path, capsys) -> None:
    a = write_snapshot(tmp_path, "a", _run("a", (QWEN,), roots=ROOTS))
    fast = (replace(QWEN, simulated=True, time_scale=10.0),)
    b = write_snapshot(tmp_path, "b", _run("b", fast, roots=ROOTS, speed=10.0, seed=1))
    comparison = compare_snapshots(open_snapshot(a), open_snapshot(b))

    assert [m.name for m in comparison.metrics] == ["quality"]
    assert comparison.levels == ()
    reason = "the runs' simulator clocks differ (×1 in A, ×10 in B)"
    assert all(reason in m for m in comparison.missing) and len(comparison.missing) == 3
    assert comparison.significant == ()  # the same seeded answers: nothing moved
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "decode tok/s" not in out.split("left out")[0]
    assert "simulator clock ×1 in A, ×10 in B" in out


def test_cells_too_small_to_test_carry_no_effect_size(tmp_path: Path, capsys) -> None:
    a = write_snapshot(tmp_path, "a", _run("a", (QWEN,), roots=ROOTS, n=1))
    b = write_snapshot(tmp_path, "b", _run("b", (QWEN,), roots=ROOTS, n=1))
    comparison = compare_snapshots(open_snapshot(a), open_snapshot(b))

    (cell,) = comparison.cells
    assert (cell.n_a, cell.n_b) == (1, 1)
    assert [m.cliffs_delta for m in cell.changes] == [None, None, None]
    assert [m.p_value for m in cell.changes] == [None, None, None]
    assert main(["compare", str(a), str(b)]) == 0
    assert "δ" not in capsys.readouterr().out.split("* significant")[0]


@pytest.mark.parametrize("n", [3, 8])
def test_cells_large_enough_to_test_carry_their_effect_size(tmp_path: Path, n: int) -> None:
    a = write_snapshot(tmp_path, "a", _run("a", (QWEN,), roots=ROOTS, n=n))
    b = write_snapshot(tmp_path, "b", _run("b", (QWEN,), roots=ROOTS, n=n, speed=2.0))
    (cell,) = compare_snapshots(open_snapshot(a), open_snapshot(b)).cells
    speed = next(m for m in cell.changes if m.metric.name == "decode_tps")
    assert speed.cliffs_delta == pytest.approx(1.0)

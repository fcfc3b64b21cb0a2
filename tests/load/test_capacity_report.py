"""A sweep stopped by the SLO, recorded to a snapshot: `report --format json` carries each
endpoint's capacity at SLO (per-endpoint targets honoured) and its load steps, beside the
leaderboard rows, whose keys are unchanged."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.core.events import Event, RunStarted
from nvfp4_tui.store.writer import SnapshotWriter
from tests.load.files import endpoint_toml, run_profile, write_profile
from tests.load.records import leaderboard_json_keys

# Per-request speed falls as 1/sqrt(c): aggregate throughput grows 41% per doubling (no knee
# in reach), while TTFT (1.0 s simulated at c=1, time scale 10) grows from 0.10 s at c=1 to
# 0.14, 0.20, 0.28 and 0.40 s at c=2, 4, 8 and 16.
CURVE = "[[1, 1.0], [2, 0.7071], [4, 0.5], [8, 0.3536], [16, 0.25]]"
RUN = """
duration_s = 1.2
warmup_s = 0.3
cooldown_s = 0.3
sweep = { max_steps = 6 }
slo = { ttft_s = 0.17, e2e_s = 5 }
"""
TIGHT = endpoint_toml("tight", 0, decode_tps=20.0, ttft_s=1.0, curve=CURVE)
LOOSE = endpoint_toml(
    "loose", 1, decode_tps=20.0, ttft_s=1.0, curve=CURVE, extra="slo = { ttft_s = 0.33 }"
)

LEADERBOARD_KEYS = leaderboard_json_keys()


def record(events: list[Event], root: Path) -> Path:
    writer = SnapshotWriter(root, "capacity", {"profile": {"name": "capacity"}})
    writer.open()
    for event in events:
        writer.add(event)
    writer.close("complete")
    return writer.path


@pytest.mark.slow  # a sweep run to its knee
def test_report_json_carries_capacity_at_slo(tmp_path: Path, capsys) -> None:
    profile = load_profile(write_profile(tmp_path, RUN, [TIGHT, LOOSE]))
    assert profile.endpoints[1].slo is not None and profile.endpoints[1].slo.e2e_s == 5.0
    events, _ = run_profile(profile, time_scale=10.0)
    [started] = [e for e in events if isinstance(e, RunStarted)]
    targets = {(p.endpoint_id, p.slo_ttft_s, p.slo_e2e_s, p.sweep) for p in started.phases}
    assert targets == {("tight", 0.17, 5.0, True), ("loose", 0.33, 5.0, True)}

    snapshot = record(events, tmp_path / "snapshots")
    assert main(["report", str(snapshot), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    leaderboard = [r for r in rows if "kind" not in r]
    assert leaderboard and all(set(r) == LEADERBOARD_KEYS for r in leaderboard)
    capacity = {r["endpoint"]: r for r in rows if r.get("kind") == "capacity"}
    steps = [r for r in rows if r.get("kind") == "load_step"]

    tight, loose = capacity["tight"], capacity["loose"]
    assert (tight["capacity"], tight["max_load"], tight["sweep_stop"]) == (2.0, 4.0, "slo")
    assert tight["slo_ttft_s"] == 0.17 and tight["slo_attainment"] == 0.9
    assert tight["capacity_attainment"] >= 0.9 and tight["capacity_goodput_rps"] > 0
    assert (loose["capacity"], loose["max_load"], loose["sweep_stop"]) == (8.0, 16.0, "slo")
    assert loose["slo_ttft_s"] == 0.33 and loose["slo_e2e_s"] == 5.0
    assert tight["knee"] is None and loose["knee"] is None  # throughput still grew

    loose_steps = [r for r in steps if r["endpoint"] == "loose"]
    assert [r["load"] for r in loose_steps] == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert [r["sustained"] for r in loose_steps] == [True, True, True, True, False]
    assert not any(r["knee"] for r in loose_steps)
    gains = [b["throughput_tps"] / a["throughput_tps"] for a, b in pairwise(loose_steps)]
    assert all(g > 1.2 for g in gains)
    assert all(r["load_kind"] == "concurrency" and r["requests"] > 0 for r in loose_steps)

    assert main(["report", str(snapshot)]) == 0
    text = capsys.readouterr().out
    assert "Capacity at SLO" in text and "TTFT≤0.17s E2E≤5s, 90% of requests" in text

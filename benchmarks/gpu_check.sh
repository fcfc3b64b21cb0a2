#!/usr/bin/env bash
# GPU check for nvfp4-tui on a machine with an NVIDIA GPU (under 5 minutes):
#   1. a fresh venv with the project installed (pip install -e .),
#   2. `nvfp4-tui gpus`, and NvmlSource called directly: one sample and the processes per GPU,
#   3. a 30 s headless demo whose GPU panes read the real NVML instead of the simulator,
#   4. the gpu table that demo recorded, printed with polars; fails if it holds no NVML rows.
#
# Environment:
#   OUT_DIR  where the demo's snapshot goes (default: $OUT/gpu-check, else a temporary folder)
#   VENV     the venv to create (default: /tmp/nvfp4-gpu-check-venv)
#   WHEELS   a folder of wheels for an offline machine: installs from it alone, without build
#            isolation (the venv sees the system's site-packages, so only missing ones are needed)
set -euo pipefail

cd "$(dirname "$0")/.."
OUT_DIR="${OUT_DIR:-${OUT:-$(mktemp -d)}/gpu-check}"
VENV="${VENV:-/tmp/nvfp4-gpu-check-venv}"
mkdir -p "$OUT_DIR"

step() { printf '\n=== %s (%ss elapsed)\n' "$1" "$SECONDS"; }

step "venv and install"
python3 -m venv --system-site-packages "$VENV"
# shellcheck disable=SC1091
. "$VENV/bin/activate"
if [[ -n "${WHEELS:-}" ]]; then
    timeout 120 python -m pip install -q --no-index --find-links "$WHEELS" --no-build-isolation -e .
else
    timeout 120 python -m pip install -q -e .
fi
python -c 'import nvfp4_tui, pynvml, polars; print("installed nvfp4-tui", nvfp4_tui.__version__)'

step "nvidia-smi"
if command -v nvidia-smi >/dev/null; then
    timeout 20 nvidia-smi --query-gpu=index,name,memory.used,memory.total,power.draw --format=csv
fi

step "nvfp4-tui gpus"
timeout 60 nvfp4-tui gpus

step "NvmlSource smoke"
timeout 60 python - <<'PY'
import time

from nvfp4_tui.telemetry.nvml import NvmlSource, TelemetryUnavailable

try:
    source = NvmlSource.open()
except TelemetryUnavailable as exc:
    raise SystemExit(str(exc))
try:
    samples = source.sample(time.time())
    assert len(samples) == source.gpu_count, (len(samples), source.gpu_count)
    for s in samples:
        print(s)
        assert s.vram_total_mib and s.vram_total_mib > 0, "no memory reading"
        for p in source.processes(s.gpu):
            print(f"  process {p.pid} {p.name} {p.vram_used_mib} MiB")
finally:
    source.close()
PY

step "30 s headless demo with NVML telemetry"
timeout 150 nvfp4-tui demo --headless --suites english --concurrency 1 --duration 30 \
    --gpu-telemetry nvml --out "$OUT_DIR"

step "gpu table"
timeout 60 python - "$OUT_DIR" <<'PY'
import sys
from pathlib import Path

import polars as pl

root = Path(sys.argv[1])
compacted = sorted(root.rglob("gpu.parquet"))
files = compacted[-1:] or sorted(root.rglob("gpu/part-*.parquet"))
if not files:
    raise SystemExit(f"no gpu.parquet or gpu/part-*.parquet under {root}")
gpu = pl.read_parquet(files)
pl.Config.set_tbl_cols(-1)
pl.Config.set_tbl_width_chars(200)
print(f"{len(gpu)} rows from {len(files)} file(s) under {files[0].parent}")
print(gpu.head(10))
print(gpu.tail(5))
if "source" in gpu.columns:
    nvml_rows = gpu.filter(pl.col("source") == "nvml").height
    print(f"{nvml_rows} rows from NVML")
    if nvml_rows == 0:
        raise SystemExit("the demo recorded no NVML samples")
PY

step "done"

#!/usr/bin/env bash
# gpu_device_run.sh — every GPU check of kvtop in one prepared run (written for one H200 lent by the
# workplace's device tool; any single NVIDIA GPU with torch works).
#
#   1. the driver's own view: nvidia-smi -q (memory section) and the CSV queries kvtop's checks read;
#   2. gpu_cuda_facts.py: CUDA's total against NVML's (what the engines size from against what nvidia-smi
#      shows), and what a process's CUDA context, first cuBLAS call and a one-rank NCCL group cost;
#   3. gpu_snapshot_check.sh while a second process holds 8 GiB (so per-process bytes are compared);
#   4. gpu_tui_screenshot.py: the TUI on the live node, headless, the same holder running: an SVG;
#   5. gpu_probe_check.sh: the probe through its runner and through `kvtop probe`, and two kill checks.
#
# Every step is bounded by `timeout`; everything lands under $OUTDIR (default $OUT, the device tool's
# folder, else a temporary one): log.txt as it runs, results.tgz at the end. Wheels of kvtop's
# dependencies the machine lacks may lie in .whl/ (installed to /tmp/site first).
set -u
cd "$(dirname "$0")/.." || exit 2
OUTDIR=${OUTDIR:-${OUT:-$(mktemp -d)}}
WORK=$(mktemp -d)
export PYTHONUNBUFFERED=1
exec > >(tee "$OUTDIR/log.txt") 2>&1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "wheel install failed"; exit 2; }
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$(pwd)${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p /tmp/bin && printf '#!/bin/sh\nexec python3 -m kvtop "$@"\n' >/tmp/bin/kvtop && chmod +x /tmp/bin/kvtop
export PATH=/tmp/bin:$PATH
export XDG_STATE_HOME=$WORK/state XDG_CONFIG_HOME=$WORK/config  # no store or preferences written outside $WORK

echo "=== 1. driver: $(date -u +%FT%TZ)"
timeout 30 nvidia-smi | tee "$WORK/nvidia-smi.txt"
timeout 30 nvidia-smi -q -d MEMORY >"$WORK/nvidia-smi-q-memory.txt"; cat "$WORK/nvidia-smi-q-memory.txt"
timeout 30 nvidia-smi -q >"$WORK/nvidia-smi-q.txt"
timeout 30 nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,memory.used,memory.reserved,memory.free \
  --format=csv | tee "$WORK/nvidia-smi-query-gpu.csv"
python3 -c "import torch, pydantic, pynvml, textual; print('torch', torch.__version__, 'cuda', torch.version.cuda,
  'nccl', torch.cuda.nccl.version(), '| pydantic', pydantic.VERSION, '| textual', textual.__version__)"

echo "=== 2. CUDA facts"
timeout 120 python3 benchmarks/gpu_cuda_facts.py >"$WORK/cuda_facts.json"; cat "$WORK/cuda_facts.json"

echo "=== 3. snapshot against nvidia-smi, with a process holding 8 GiB"
python3 -c "import time, torch; x = torch.empty(8 << 30, dtype=torch.uint8, device='cuda'); x.fill_(1); time.sleep(90)" &
HOLDER=$!
sleep 12
timeout 30 nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv | tee "$WORK/apps.csv"
timeout 120 bash benchmarks/gpu_snapshot_check.sh
timeout 60 kvtop snapshot --json >"$WORK/snapshot.json" 2>"$WORK/snapshot.err"; echo "snapshot --json exit $?"
timeout 60 kvtop snapshot >"$WORK/snapshot.txt" 2>&1; cat "$WORK/snapshot.txt"

echo "=== 4. TUI on the live node, headless"
timeout 90 python3 benchmarks/gpu_tui_screenshot.py "$WORK/tui_live.svg" "$WORK/tui_live.txt"; echo "exit $?"
cat "$WORK/tui_live.txt" 2>/dev/null | head -60
kill "$HOLDER" 2>/dev/null; wait "$HOLDER" 2>/dev/null

echo "=== 5. probe"
OUTDIR="$WORK/probe" timeout 300 bash benchmarks/gpu_probe_check.sh
echo "probe check exit $?"

echo "=== end: $(date -u +%FT%TZ)"
timeout 30 nvidia-smi --query-gpu=memory.used,memory.free --format=csv
tar -czf "$OUTDIR/results.tgz" -C "$WORK" . && echo "results.tgz written"
sleep 1  # let tee write the last lines

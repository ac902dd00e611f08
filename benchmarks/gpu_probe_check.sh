#!/usr/bin/env bash
# gpu_probe_check.sh — one prepared run of kvtop's probe on a GPU machine (written for one H200).
#
# What it does, each step bounded with `timeout`, in a few minutes in all:
#   A. the runner directly (kvtop.sources.probe.run_probe, NVML as the free-memory reader), with
#      buffers built by hand for two layouts, so the figures come even if `kvtop probe` is not wired:
#        Llama-3-70B at TP8 (one rank): 80 layers x K,V of (1 kv head, 128) bf16   = 40,960 B/token
#        DeepSeek-V3 (MLA, one rank):   61 layers x (1, 512 + 64) bf16             = 70,272 B/token
#      each with --tokens and --fill;
#   B. the same through the CLI: kvtop probe --model examples/models/llama-3-70b.json --tp 8 and
#      --model examples/models/deepseek-v3.json --tp 8, --tokens and --fill, --json;
#   C. a probe killed mid-run: the worker holds its allocation (KVTOP_PROBE_TEST_HOLD_S), gets
#      kill -9, and nvidia-smi must show the free memory back; then the same with kill -9 of the
#      parent (the worker must die with it: PR_SET_PDEATHSIG).
# It prints, per run: time to fill, bytes/token measured vs predicted, CUDA context overhead, free
# memory before / at peak / after, released; and PASS/FAIL for each kill check.
#
# Needs: nvidia-smi, and a python ($PYTHON, default python3) that imports torch (CUDA build),
# pydantic and nvidia-ml-py; `kvtop probe` (part B) also needs kvtop's other dependencies. The
# repository root goes on PYTHONPATH. Environment: GPU (index, default 0), OUTDIR (default a
# temporary folder; each run's JSON is kept there).
set -u

cd "$(dirname "$0")/.." || exit 2
REPO=$(pwd)
PY=${PYTHON:-python3}
GPU=${GPU:-0}
OUTDIR=${OUTDIR:-$(mktemp -d)}
mkdir -p "$OUTDIR" || exit 2
LLAMA=examples/models/llama-3-70b.json
DSV3=examples/models/deepseek-v3.json
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
FAILS=0

step() { printf '\n=== %s ===\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*"; FAILS=$((FAILS + 1)); }
child_of() {
  local pid
  pid=$(pgrep -P "$1" 2>/dev/null | head -1)
  [ -n "$pid" ] || pid=$(ps -o pid= --ppid "$1" 2>/dev/null | head -1 | tr -d ' ')
  echo "$pid"
}
free_mib() { nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i "$GPU" | tr -d ' '; }

# Prints the figures of one result JSON file (the --json contract, kvtop.probe/2).
summarize() {
  "$PY" - "$1" <<'PYEOF'
import json, sys
GIB = 2**30
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as error:
    print(f"  no result JSON ({error})"); raise SystemExit(0)
def gib(v): return "—" if v is None else f"{v / GIB:,.2f} GiB"
measured = d.get("measured") or {}
m, p = measured.get("bytes_per_token"), d.get("bytes_per_token_predicted")
delta = f" ({m / p - 1:+.3%})" if m and p else ""
spg = d.get("seconds_per_gib")
print(f"  outcome        {d['outcome']}: {d['message']}")
print(f"  tokens         {d['tokens_allocated']:,} (target {d.get('target_tokens')}), {d['chunks']} chunks, touched={d['touched']}")
print(f"  bytes          {d['bytes_allocated']:,} B = {gib(d['bytes_allocated'])}")
print(f"  bytes/token    measured {m} (of {measured.get('total_bytes')} B ÷ {measured.get('tokens')} tokens) vs predicted {p}{delta}")
print(f"  CUDA context   {gib(d.get('context_bytes'))} (driver free before the child minus after its CUDA init)")
print(f"  time to fill   {d['seconds']:.2f} s" + ("" if spg is None else f" = {spg:.4f} s/GiB ({1 / spg:,.1f} GiB/s)")
      + f"; start-up {d.get('init_seconds') or 0:.2f} s; wall {d.get('wall_seconds') or 0:.2f} s")
print(f"  free memory    driver before the child {gib(d.get('driver_free_before_bytes'))}; "
      f"after CUDA init {gib(d.get('free_before_bytes'))}, at peak {gib(d.get('free_at_peak_bytes'))}, "
      f"after exit {gib(d.get('free_after_exit_bytes'))} (reserve {gib(d.get('reserve_bytes'))})")
print(f"  released       {d['released']} ({d.get('release_check')})")
PYEOF
}

# The runner with hand-built buffers: direct.py LAYOUT (--tokens N | --fill) [--hold S] > result.json
cat >"$OUTDIR/direct.py" <<'PYEOF'
import argparse, json, sys
import pynvml
from kvtop.domain.probe import ProbeRequest, default_chunk_tokens, mha_buffers, mla_buffer
from kvtop.sources.hub import load_model
from kvtop.sources.probe import run_probe

parser = argparse.ArgumentParser()
parser.add_argument("layout", choices=("llama70b-tp8", "dsv3"))
parser.add_argument("--gpu", type=int, default=0)
parser.add_argument("--tokens", type=int)
parser.add_argument("--fill", action="store_true")
parser.add_argument("--hold", type=float, default=0.0)
parser.add_argument("--page", type=int, default=64)
args = parser.parse_args()
if args.layout == "llama70b-tp8":
    buffers = mha_buffers(80, 1, 128, "bfloat16")
else:
    dsv3 = load_model("deepseek-v3")  # the preset's config: kv_lora_rank 512, qk_rope_head_dim 64, 61 layers
    buffers = (mla_buffer(dsv3.num_layers, dsv3.mla, "bfloat16"),)
pynvml.nvmlInit()
handle = pynvml.nvmlDeviceGetHandleByIndex(args.gpu)
reader = lambda: int(pynvml.nvmlDeviceGetMemoryInfo(handle).free)
chunk = default_chunk_tokens(buffers, args.page)
request = ProbeRequest(device=f"cuda:{args.gpu}", buffers=buffers, page_size=args.page,
                       target_tokens=args.tokens, fill=args.fill, reserve_bytes=2 * 2**30,
                       chunk_tokens=chunk, timeout_s=240.0)
env = {"KVTOP_PROBE_TEST_HOLD_S": str(args.hold)} if args.hold else None
result = run_probe(request, free_memory_reader=reader, extra_env=env)
print(json.dumps(result.to_json_dict()))
sys.exit(0 if result.target_met and result.released else 1)
PYEOF

step "0. environment"
timeout 30 nvidia-smi --query-gpu=index,name,memory.total,memory.used,memory.free --format=csv -i "$GPU" || { echo "no nvidia-smi / GPU $GPU"; exit 2; }
timeout 30 nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
if ! timeout 120 "$PY" -c "import torch, pydantic, pynvml; print('torch', torch.__version__, 'cuda', torch.version.cuda, '| pydantic', pydantic.VERSION); assert torch.cuda.is_available(), 'torch sees no CUDA device'"; then
  echo "cannot import torch (with CUDA), pydantic and pynvml with $PY: carry the missing wheels and set PYTHON/PYTHONPATH"
  exit 2
fi
echo "results under $OUTDIR"

step "A. runner directly (hand-built buffers, NVML reader, page 64, reserve 2 GiB)"
for run in "llama70b-tp8 --tokens 2000000" "llama70b-tp8 --fill" "dsv3 --tokens 1000000" "dsv3 --fill"; do
  name=$(echo "$run" | tr ' ' '_' | tr -d '-')
  echo "--- $run"
  # shellcheck disable=SC2086
  timeout 300 "$PY" "$OUTDIR/direct.py" $run --gpu "$GPU" >"$OUTDIR/A_$name.json" 2>"$OUTDIR/A_$name.err"
  rc=$?
  summarize "$OUTDIR/A_$name.json"
  [ "$rc" -eq 0 ] || { tail -3 "$OUTDIR/A_$name.err"; fail "A $run exited $rc"; }
done

step "B. kvtop probe (CLI, model presets)"
if timeout 120 "$PY" -m kvtop probe --help >/dev/null 2>&1; then
  for run in "$LLAMA --tokens 2000000" "$LLAMA --fill" "$DSV3 --tokens 1000000" "$DSV3 --fill"; do
    name=$(basename "$(echo "$run" | cut -d' ' -f1)" .json)_$(echo "$run" | cut -d' ' -f2- | tr -d ' -')
    echo "--- kvtop probe --model $run --tp 8 --gpu $GPU --json"
    # shellcheck disable=SC2086
    timeout 300 "$PY" -m kvtop probe --model $run --tp 8 --gpu "$GPU" --json >"$OUTDIR/B_$name.json" 2>"$OUTDIR/B_$name.err"
    rc=$?
    summarize "$OUTDIR/B_$name.json"
    [ "$rc" -eq 0 ] || { tail -3 "$OUTDIR/B_$name.err"; fail "B $run exited $rc"; }
  done
else
  echo "SKIP: '$PY -m kvtop probe --help' failed (the CLI is not wired here, or a dependency is missing)"
fi

# Starts a holding probe in the background, waits until nvidia-smi shows its memory taken.
# Sets KILL_PARENT (the runner's pid) and KILL_WORKER (the worker's pid); returns 1 if it never showed.
start_holding_probe() {
  local label=$1 base=$2
  "$PY" "$OUTDIR/direct.py" llama70b-tp8 --tokens 1000000 --hold 120 --gpu "$GPU" \
    >"$OUTDIR/C_$label.json" 2>"$OUTDIR/C_$label.err" &
  KILL_PARENT=$!
  KILL_WORKER=""
  local waited=0
  while [ "$waited" -lt 180 ]; do  # 90 s in 0.5 s steps
    kill -0 "$KILL_PARENT" 2>/dev/null || return 1  # the probe ended before it was seen holding
    KILL_WORKER=$(child_of "$KILL_PARENT")
    local now
    now=$(free_mib)
    if [ -n "$KILL_WORKER" ] && [ $((base - now)) -gt 30000 ]; then
      echo "  probe holds $((base - now)) MiB (runner pid $KILL_PARENT, worker pid $KILL_WORKER)"
      return 0
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
  return 1
}

# Waits up to 30 s for free memory to come back within 512 MiB of $1; prints PASS or FAIL.
expect_memory_back() {
  local base=$1 label=$2 now waited=0
  while [ "$waited" -lt 60 ]; do
    now=$(free_mib)
    if [ "$now" -ge $((base - 512)) ]; then
      echo "PASS: $label: free memory back ($now MiB vs $base MiB before) after $((waited / 2)) s"
      return 0
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
  fail "$label: free memory NOT back: $now MiB vs $base MiB before"
}

step "C1. kill -9 the worker mid-probe (it holds ~38 GiB)"
base=$(free_mib)
if start_holding_probe kill_worker "$base"; then
  kill -9 "$KILL_WORKER"
  timeout 60 tail --pid="$KILL_PARENT" -f /dev/null
  wait "$KILL_PARENT" 2>/dev/null
  summarize "$OUTDIR/C_kill_worker.json"
  grep -q '"worker_crashed"' "$OUTDIR/C_kill_worker.json" || fail "C1: the runner did not report worker_crashed"
  expect_memory_back "$base" "C1 (worker killed)"
else
  fail "C1: the holding probe never showed its memory"; tail -3 "$OUTDIR/C_kill_worker.err"
  kill -9 "$KILL_PARENT" 2>/dev/null
fi

step "C2. kill -9 the parent mid-probe (the worker must die with it)"
base=$(free_mib)
if start_holding_probe kill_parent "$base"; then
  kill -9 "$KILL_PARENT"
  wait "$KILL_PARENT" 2>/dev/null
  gone=no
  for _ in $(seq 1 40); do
    if ! kill -0 "$KILL_WORKER" 2>/dev/null; then gone=yes; break; fi
    sleep 0.25
  done
  if [ "$gone" = yes ]; then echo "PASS: C2: worker $KILL_WORKER died with its parent"; else
    fail "C2: worker $KILL_WORKER outlived its parent"; kill -9 "$KILL_WORKER" 2>/dev/null; fi
  expect_memory_back "$base" "C2 (parent killed)"
else
  fail "C2: the holding probe never showed its memory"; tail -3 "$OUTDIR/C_kill_parent.err"
  kill -9 "$KILL_PARENT" 2>/dev/null
fi

step "done"
timeout 30 nvidia-smi --query-gpu=memory.used,memory.free --format=csv -i "$GPU"
echo "results under $OUTDIR; failures: $FAILS"
[ "$FAILS" -eq 0 ]

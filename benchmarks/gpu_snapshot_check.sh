#!/usr/bin/env bash
# gpu_snapshot_check.sh — does `kvtop snapshot --json` agree with nvidia-smi on a real GPU node?
#
# Reads nvidia-smi (per GPU: index, memory.total, memory.used, memory.reserved, in MiB; per
# compute process: gpu_uuid, pid, used_memory), then `kvtop snapshot --json`, then nvidia-smi
# again. Per GPU, kvtop's total must match within 1 MiB, and its used and reserved must lie within
# 1 MiB of the range the two nvidia-smi reads span (memory that moved between the reads is
# allowed, nothing more). Per process seen in both nvidia-smi reads, the same rule on its bytes.
# It also fails if kvtop fell back to the demo node (no driver found) or names a GPU state other
# than ok. Prints one row per GPU and a last line `VERDICT: PASS|FAIL|SKIPPED — …`.
#
# Needs: nvidia-smi, and kvtop on PATH (or KVTOP=/path/to/kvtop); python3 (stdlib only) for the
# comparison. Exit status: 0 pass, 1 fail, 2 skipped or could not run.
set -u

cd "$(dirname "$0")/.." || exit 2
KVTOP=${KVTOP:-kvtop}
PY=${PYTHON:-python3}
TOLERANCE_MIB=${TOLERANCE_MIB:-1}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "VERDICT: SKIPPED — nvidia-smi not found (this check needs a GPU node)"
  exit 2
fi
if ! command -v "$KVTOP" >/dev/null 2>&1; then
  echo "VERDICT: SKIPPED — $KVTOP not found (pip install -e . or set KVTOP=)"
  exit 2
fi

GPU_QUERY=(--query-gpu=index,memory.total,memory.used,memory.reserved --format=csv,noheader,nounits)
APP_QUERY=(--query-compute-apps=gpu_uuid,pid,used_memory --format=csv,noheader,nounits)

read_smi() {  # $1: before | after
  timeout 30 nvidia-smi "${GPU_QUERY[@]}" >"$TMP/$1-gpus.csv" || return 1
  timeout 30 nvidia-smi "${APP_QUERY[@]}" >"$TMP/$1-apps.csv" || : >"$TMP/$1-apps.csv"
}

read_smi before || { echo "VERDICT: FAIL — nvidia-smi --query-gpu failed"; exit 1; }
start=$(date +%s.%N)
timeout 120 "$KVTOP" snapshot --json >"$TMP/snapshot.json" 2>"$TMP/snapshot.err"
rc=$?
end=$(date +%s.%N)
read_smi after || { echo "VERDICT: FAIL — nvidia-smi --query-gpu failed on the second read"; exit 1; }
if [ ! -s "$TMP/snapshot.json" ]; then
  echo "VERDICT: FAIL — kvtop snapshot --json exited $rc with no output: $(tail -c 300 "$TMP/snapshot.err")"
  exit 1
fi
echo "kvtop snapshot took $("$PY" -c "print(f'{$end - $start:.2f}')") s (exit $rc)"

"$PY" - "$TMP" "$TOLERANCE_MIB" <<'PY'
import json
import sys
from pathlib import Path

tmp, tolerance = Path(sys.argv[1]), int(sys.argv[2])
MIB = 1 << 20


def number(text):
    text = text.strip()
    return None if not text or text.startswith("[") else int(float(text))


def gpus(name):
    rows = {}
    for line in (tmp / f"{name}-gpus.csv").read_text().splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) == 4 and parts[0].isdigit():
            rows[int(parts[0])] = {"total": number(parts[1]), "used": number(parts[2]), "reserved": number(parts[3])}
    return rows


def apps(name):
    rows = {}
    for line in (tmp / f"{name}-apps.csv").read_text().splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) == 3 and parts[1].isdigit():
            rows[(parts[0], int(parts[1]))] = number(parts[2])
    return rows


def within(value_mib, first, second):
    if value_mib is None or first is None or second is None:
        return None  # not reported by one side: not compared
    low, high = min(first, second) - tolerance, max(first, second) + tolerance
    return low <= value_mib <= high


snapshot = json.loads((tmp / "snapshot.json").read_text())
failures, compared = [], 0
if snapshot.get("source") != "nvml":
    failures.append(f"kvtop did not read NVML (source {snapshot.get('source')!r}; notice: {snapshot.get('notice')})")
before, after = gpus("before"), gpus("after")
ours = {gpu["index"]: gpu for gpu in snapshot.get("gpus", [])}
if set(ours) != set(before):
    failures.append(f"GPU indices differ: kvtop {sorted(ours)}, nvidia-smi {sorted(before)}")
print(f"{'GPU':>4} {'field':<9}{'kvtop MiB':>12}{'smi before':>12}{'smi after':>11}  result")
for index in sorted(before):
    gpu = ours.get(index)
    if gpu is None:
        continue
    if gpu.get("state") != "ok":
        failures.append(f"GPU {index}: kvtop says {gpu.get('state')}: {gpu.get('state_message')}")
    for field in ("total", "used", "reserved"):
        value = gpu.get(f"{field}_bytes")
        mib = None if value is None else value / MIB
        ok = within(mib, before[index][field], after.get(index, before[index])[field])
        shown = "—" if mib is None else f"{mib:,.1f}"
        print(f"{index:>4} {field:<9}{shown:>12}{before[index][field]!s:>12}{after.get(index, {}).get(field)!s:>11}  "
              f"{'ok' if ok else 'not compared' if ok is None else 'MISMATCH'}")
        if ok is False:
            failures.append(f"GPU {index} {field}: kvtop {mib:,.1f} MiB, nvidia-smi {before[index][field]}–{after[index][field]} MiB")
        compared += ok is not None
uuid_to_index = {gpu.get("uuid"): gpu["index"] for gpu in ours.values()}
apps_before, apps_after = apps("before"), apps("after")
for (uuid, pid), used_before in sorted(apps_before.items()):
    if (uuid, pid) not in apps_after or uuid not in uuid_to_index:
        continue  # started or exited between the reads
    ours_process = next((p for p in ours[uuid_to_index[uuid]]["processes"] if p["pid"] == pid), None)
    if ours_process is None:
        failures.append(f"pid {pid} on GPU {uuid_to_index[uuid]}: listed by nvidia-smi, missing in kvtop")
        continue
    value = ours_process.get("used_bytes")
    ok = within(None if value is None else value / MIB, used_before, apps_after[(uuid, pid)])
    compared += ok is not None
    if ok is False:
        failures.append(f"pid {pid} on GPU {uuid_to_index[uuid]}: kvtop {value / MIB:,.1f} MiB, "
                        f"nvidia-smi {used_before}–{apps_after[(uuid, pid)]} MiB")
ranks = sum(len(engine.get("ranks", [])) for engine in snapshot.get("engines", []))
print(f"engines: {len(snapshot.get('engines', []))}, ranks: {ranks}, notice: {snapshot.get('notice')}")
for failure in failures:
    print(f"FAIL: {failure}")
if failures:
    print(f"VERDICT: FAIL — {len(failures)} disagreement(s) over {compared} figures compared")
    sys.exit(1)
print(f"VERDICT: PASS — {len(before)} GPU(s), {compared} figures agree with nvidia-smi within {tolerance} MiB (+ movement between reads)")
PY

#!/usr/bin/env bash
# Settings sweeps on the GPU machine, to choose src/gpu/config.rs's defaults: pqgpu-bench (a
# `tuning` build, so the host profile and the ramp switch work) through the C ABI, registered
# arrays, median of three batches per figure, once per line of the sweep, all in one call so
# that the settings meet the same machine. A line is
#   NAME | SETTINGS (environment assignments, may be empty) | pqgpu-bench arguments
# read from sweep.txt beside this file when the stage has one, else the default list below (the
# sweep behind the ML-KEM chunk and keygen worker defaults, and two timelines). Lines starting
# with # are skipped.
# Results: summary.txt (each figure per line of the sweep, kernel-only beside it, and the host
# profile of each line's ML-KEM-768 / SLH-DSA batches), JSON and logs per line.
# A line's settings may name PQGPU_TIMELINE=$OUT/NAME.timeline: its batches' timeline, summed
# up by timeline.py into the summary.
# stage: bins="pqgpu-bench" features="tuning"
if [ "${1:-}" = stage ]; then
  cp scripts/device/timeline.py "$2/"
  exit 0
fi
source "$(dirname "$0")/common.sh"
SHOW="error|CHECK FAILED|panicked"
machine
B="--backend gpu --reps 3 --latency-samples 1 --host-memory registered"
# The kernels compile (NVRTC, cached) before anything is timed.
step warm 240 ./pqgpu-bench --backend gpu --reps 1 --latency-samples 1 --gpu-batch 1024 --alg mlkem
# The sweep's lines: sweep.txt when staged, else the default below (ML-KEM chunk sizes and
# keygen workers, three rounds alternated, then a timeline of ML-KEM and of SLH-DSA).
lines() {
  if [ -f sweep.txt ]; then cat sweep.txt; return; fi
  for r in 1 2 3; do
    for c in "c8k|PQGPU_CTRU_CHUNK=8192" "c4k|PQGPU_CTRU_CHUNK=4096" \
             "w4c4k|PQGPU_GPU_WORKERS=4 PQGPU_CTRU_CHUNK=4096" "w12c4k|PQGPU_GPU_WORKERS=12 PQGPU_CTRU_CHUNK=4096"; do
      for k in kpi:65536 one:1; do
        echo "${c%%|*}-${k%%:*}-$r | ${c#*|} | --alg mlkem --kem-keys ${k#*:}"
      done
    done
  done
  echo 'tl-kem | PQGPU_TIMELINE=$OUT/tl-kem.timeline | --alg mlkem --kem-keys 65536'
  echo 'tl-slh | PQGPU_TIMELINE=$OUT/tl-slh.timeline | --alg slhdsa --slh-sets SHA2-128s,SHA2-128f'
}
while IFS='|' read -r name settings args; do
  name=$(echo "$name" | xargs)
  case "$name" in ''|\#*) continue ;; esac
  # Within the call's ten minutes, with time left for the summary.
  left=$((${SWEEP_SECONDS:-570} - ($(date +%s) - run_start)))
  if [ "$left" -lt 30 ]; then echo "=== $name: left out, $left s left"; continue; fi
  # shellcheck disable=SC2086  # settings and arguments are word lists
  step "$name" $((left < 120 ? left : 120)) env PQGPU_HOST_PROFILE=1 ${settings//\$OUT/$OUT} ./pqgpu-bench $B $args --json "$OUT/$name.json" < /dev/null
done < <(lines)
python3 - "$OUT" > "$OUT/summary.txt" <<'PY'
import glob, json, os, re, sys
d = sys.argv[1]
rows = {}  # (alg, op) -> [(line, C ABI, kernel)]
order = []
for f in sorted(glob.glob(f"{d}/*.json"), key=os.path.getmtime):
    name = os.path.basename(f)[:-5]
    order.append(name)
    try:
        data = json.load(open(f))["throughput"]
    except (ValueError, KeyError):
        print("unreadable:", name)
        continue
    for r in data:
        c, k = r.get("c_abi_registered_ops_per_s"), r.get("kernel_only_ops_per_s")
        if c:
            rows.setdefault((r["alg"], r["op"]), []).append((name, c, k))
for (alg, op), v in sorted(rows.items()):
    print(f"{alg} {op}: " + "  ".join(
        f"{n} {c / 1e6:.3f}" + (f"/{k / 1e6:.2f}" if k else "") for n, c, k in v))
print("--- host profiles (ML-KEM-768, SLH-DSA-SHA2-128s/f), per line")
for name in order:
    log = f"{d}/{name}.log"
    if not os.path.exists(log):
        continue
    for line in open(log, errors="replace"):
        if line.startswith("host profile") and re.search(r"ML-KEM-768 .*, 65536 items|SLH-DSA-SHA2-128[sf] verify", line):
            print(name, line.strip())
PY
for t in "$OUT"/*.timeline; do
  [ -f "$t" ] || continue
  echo "--- timeline $(basename "$t")" >> "$OUT/summary.txt"
  python3 timeline.py "$t" "ML-KEM-768 .*, 65536 items|SHA2-128[sf] verify" | tail -8 >> "$OUT/summary.txt"
done
head -c 20000 "$OUT/summary.txt"
finish

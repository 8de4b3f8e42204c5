#!/bin/bash
# ML-DSA signing A/B on the GPU machine, in one call of about six minutes: the previous build
# (old/) and this one (new/) alternately, three end-to-end benchmark runs each (ML-DSA-44/65/87,
# batch 65,536, registered arrays; medians of the runs' medians printed side by side), then on
# the new build only: the ML-DSA and round-3 Dilithium GPU suites, compute-sanitizer memcheck
# and racecheck on a short signing run, and an Nsight Compute profile (SpeedOfLight,
# Occupancy, LaunchStats) of one 16,384-item ML-DSA-44 signing batch of examples/gpu_kernels
# (the old build's too, and a detailed one of sign_w and sign_z, when time is left). Everything lands in $OUT: summary.txt and logs.tgz.
#
# Build host, from the checkout with the change (OLD: the revision to compare against):
#   bash scripts/device/mldsa-sign-ab-stage.sh OLD
# which builds OLD in a temporary worktree and this checkout, then stages into target/device/sign-ab:
#   old/ new/ : pqgpu-bench, gpu_kernels (stripped); new/ also gpu_mldsa, gpu_dilithium
#   vectors/acvp, PQCsignKAT_Dilithium*.rsp.gz, run.sh (this file)
# GPU machine: bash target/device/sign-ab/run.sh   (carry ["target/device/sign-ab"])
# Success: summary.txt shows "rc=0" for every step, "test result: ok" for both suites,
# "ERROR SUMMARY: 0 errors" for memcheck and racecheck, and the new build's sign figures.
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/sign-ab-out}; mkdir -p "$OUT"
L=/tmp/sign-ab-logs; rm -rf $L; mkdir -p $L
export PQGPU_VECTORS_DIR=$PWD/vectors PQGPU_DILITHIUM_KAT_DIR=$PWD RUST_BACKTRACE=1
START=$(date +%s)
left() { echo $(( ${BUDGET:-345} - ($(date +%s) - START) )); }
S=$OUT/summary.txt; : > $S
step() { local name=$1 t=$2; shift 2
  local l=$(left); [ "$l" -lt 10 ] && { echo "SKIPPED $name: no time left" | tee -a $S; return; }
  [ "$t" -gt "$l" ] && t=$l
  local s=$(date +%s); timeout $t "$@" > $L/$name.log 2>&1; local rc=$?
  echo "=== $name: rc=$rc ($(( $(date +%s) - s )) s)" | tee -a $S
  grep -E "test result|SKIPPED|panicked|FAILED|ERROR SUMMARY|CHECK FAILED|error|pqgpu-bench:|GPU" $L/$name.log | head -12 | tee -a $S; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader >> $S 2>&1
BENCH="--backend gpu --alg mldsa --gpu-batch 65536 --host-memory registered --reps 3 --latency-samples 3"
# Kernels compile once per build (NVRTC, cached per source hash) before anything is timed.
for b in old new; do
  step warm_$b 60 env PQGPU_CACHE_DIR=/tmp/pqc-$b ./$b/pqgpu-bench --backend gpu --alg mldsa --gpu-batch 1024 --host-memory registered --reps 1 --latency-samples 1
done
for i in 1 2 3; do
  for b in old new; do
    step bench_${b}_$i 50 env PQGPU_CACHE_DIR=/tmp/pqc-$b ./$b/pqgpu-bench $BENCH --json $L/bench_${b}_$i.json
  done
done
python3 - $L >> $S 2>&1 <<'PY'
import json, statistics, sys, glob, os
d = sys.argv[1]; fig = {}
for b in ("old", "new"):
    for f in sorted(glob.glob(f"{d}/bench_{b}_*.json")):
        try: rows = json.load(open(f))["throughput"]
        except (ValueError, KeyError): print("unreadable:", os.path.basename(f)); continue
        for r in rows:
            for k in ("c_abi_registered_ops_per_s", "kernel_only_ops_per_s"):
                if r.get(k): fig.setdefault((r["alg"], r["op"], k), {}).setdefault(b, []).append(r[k])
print(f"{'alg':10} {'op':7} {'figure':8} {'old (median)':>14} {'new (median)':>14} {'new/old':>8}  runs")
for (alg, op, k), v in sorted(fig.items()):
    o, n = (statistics.median(v[b]) if v.get(b) else None for b in ("old", "new"))
    ratio = f"{n / o:8.3f}" if o and n else "       -"
    fmt = lambda x: f"{x / 1e6:12.3f} M" if x else "             -"
    print(f"{alg:10} {op:7} {('C ABI' if 'abi' in k else 'kernel'):8} {fmt(o)} {fmt(n)} {ratio}  old {v.get('old')} new {v.get('new')}")
PY
export PQGPU_CACHE_DIR=/tmp/pqc-new
step gpu_mldsa 60 env PQGPU_GPU_CASES=${CASES:-2000} ./new/gpu_mldsa --show-output
step gpu_dilithium 45 env PQGPU_GPU_CASES=${CASES:-2000} ./new/gpu_dilithium --show-output
step memcheck 45 env PQGPU_GPU_CASES=64 compute-sanitizer --tool memcheck --error-exitcode 9 ./new/gpu_mldsa --test-threads=1 gpu_matches_cpu_mldsa87
step racecheck 60 env PQGPU_GPU_CASES=48 compute-sanitizer --tool racecheck --error-exitcode 9 ./new/gpu_mldsa --test-threads=1 gpu_matches_cpu_mldsa44
NCU="ncu --section SpeedOfLight --section Occupancy --section LaunchStats -k regex:^(sign_|expand_mask) --launch-count 60"
step ncu_new 60 env PQGPU_CACHE_DIR=/tmp/pqc-new $NCU ./new/gpu_kernels 16384 44
step ncu_old 45 env PQGPU_CACHE_DIR=/tmp/pqc-old $NCU ./old/gpu_kernels 16384 44
# Where the two polynomial kernels' time goes (pipes, stall reasons, instruction mix), new build.
step ncu_detail 60 env PQGPU_CACHE_DIR=/tmp/pqc-new ncu --section ComputeWorkloadAnalysis \
  --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis \
  -k regex:^sign_[wz]$ --launch-count 2 ./new/gpu_kernels 16384 44
for b in new old; do [ -s $L/ncu_$b.log ] && python3 - $L/ncu_$b.log >> $S 2>&1 <<'PY'
import re, sys, collections
# Per kernel: launches, total duration, and the last launch's occupancy and registers.
cur = None; agg = collections.OrderedDict()
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\s+(\w+)\b.*\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", line)
    if m: cur = agg.setdefault(m.group(1), {"n": 0, "us": 0.0}); cur["n"] += 1; continue
    if cur is None: continue
    m = re.match(r"\s+Duration\s+(\w+)\s+([\d.,]+)", line)
    if m:
        v = float(m.group(2).replace(",", "")); cur["us"] += v * {"n": 1e-3, "u": 1, "m": 1e3, "s": 1e6}.get(m.group(1)[0], 1)
    for key, pat in (("regs", r"\s+Registers Per Thread\s+\S+\s+([\d.,]+)"), ("occ", r"\s+Achieved Occupancy\s+%\s+([\d.,]+)"), ("sm", r"\s+Compute \(SM\) Throughput\s+%\s+([\d.,]+)"), ("mem", r"\s+Memory Throughput\s+%\s+([\d.,]+)")):
        m = re.match(pat, line)
        if m: cur[key] = m.group(1)
tot = sum(k["us"] for k in agg.values()) or 1
print(f"--- {sys.argv[1].split('/')[-1]}: kernel, launches, us, share, SM %, memory %, achieved occupancy %, regs")
for name, k in agg.items():
    print(f"{name:16} {k['n']:4} {k['us']:10.1f} {100 * k['us'] / tot:5.1f}% {k.get('sm','-'):>6} {k.get('mem','-'):>6} {k.get('occ','-'):>6} {k.get('regs','-'):>4}")
PY
done
# The verdict in a few lines: sign new/old per set, the suites, the sanitizers.
python3 - $L >> $S 2>&1 <<'PY'
import json, statistics, sys, glob, re, os
d = sys.argv[1]; fig = {}
for b in ("old", "new"):
    for f in glob.glob(f"{d}/bench_{b}_*.json"):
        try: rows = json.load(open(f))["throughput"]
        except (ValueError, KeyError): continue
        for r in rows:
            if r.get("op") != "sign": continue
            for k in ("c_abi_registered_ops_per_s", "kernel_only_ops_per_s"):
                if r.get(k): fig.setdefault(r["alg"], {}).setdefault((k, b), []).append(r[k])
print("=== verdict")
for alg, v in sorted(fig.items()):
    cells = []
    for k, name in (("c_abi_registered_ops_per_s", "C ABI"), ("kernel_only_ops_per_s", "kernel")):
        o, n = (statistics.median(v[(k, b)]) if v.get((k, b)) else None for b in ("old", "new"))
        cells.append(f"{name} {o / 1e6 if o else 0:.2f} -> {n / 1e6 if n else 0:.2f} M ({n / o:.3f}x)" if o and n else f"{name} -")
    print(f"sign {alg:10} " + ", ".join(cells))
def log(name):
    p = f"{d}/{name}.log"
    return open(p, errors="replace").read() if os.path.exists(p) else ""
for t in ("gpu_mldsa", "gpu_dilithium"):
    text = log(t); res = re.findall(r"test result: (\w+)\. (\d+) passed; (\d+) failed", text)
    skipped = text.count("SKIPPED")
    print(f"suite {t}: " + (", ".join(f"{r[0]} ({r[1]} passed, {r[2]} failed)" for r in res) or "no result") + (f", {skipped} SKIPPED lines" if skipped else ""))
for t in ("memcheck", "racecheck"):
    m = re.findall(r"ERROR SUMMARY: (\d+) error", log(t))
    print(f"{t}: " + (f"{m[-1]} errors" if m else "no summary"))
PY
echo "total $(( $(date +%s) - START )) s" >> $S
tar czf $OUT/logs.tgz -C $L . 2>/dev/null
cat $S

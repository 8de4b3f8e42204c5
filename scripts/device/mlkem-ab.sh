#!/bin/bash
# ML-KEM kernels A/B on the GPU machine, in one call of under six minutes: the build of an older
# revision (old/) and this one (new/) alternately, three end-to-end benchmark runs each with a
# key per item and with one key (pqgpu-bench --alg mlkem, batch 65,536, registered arrays;
# medians of the runs printed side by side, C ABI and kernel-only), and on the new build only
# tests/gpu_mlkem at 500 cases per set (GPU == CPU, every ACVP case) and compute-sanitizer
# memcheck; while time is left, racecheck and an Nsight Compute profile (SpeedOfLight,
# Occupancy, LaunchStats) of one 16,384-item ML-KEM-768 round of examples/mlkem_kernels per
# build. Everything lands in $OUT: summary.txt, logs/.
#
# Build host, from the checkout with the change (OLD: the revision to compare against, by
# default main):
#   bash scripts/device/mlkem-ab.sh stage [OLD]
# which builds OLD and this checkout, then stages into target/device/mlkem-ab:
#   old/ new/ : pqgpu-bench, mlkem_kernels (stripped); new/ also gpu_mlkem; vectors/acvp/ML-KEM-*;
#   build.txt; run.sh (this file)
# GPU machine: bash target/device/mlkem-ab/run.sh   (carry ["target/device/mlkem-ab"])
# Success: summary.txt shows rc=0 for every step, "test result: ok" for gpu_mlkem, "0 errors"
# for memcheck, and in the table and the verdict the new build's figures against the old.
#
# When OLD differs from HEAD only in the ML-KEM kernel files (kernels/, src/gpu/mlkem/,
# src/gpu/config.rs, src/gpu/emu.rs; scripts, tools and documents aside) and HEAD deletes none
# of them, the old build is this checkout with OLD's versions of those put in place for one
# build and restored after (an incremental rebuild; files only HEAD has stay, unused by OLD's
# library); otherwise OLD is built from a temporary worktree into this target directory.
if [ "${1:-}" = stage ]; then
  set -euo pipefail
  OLD=${2:-main}
  cd "$(git rev-parse --show-toplevel)"
  ROOT=$PWD
  D=$ROOT/target/device/mlkem-ab
  # The vectors beside the main checkout (../shared/vectors, as the tests find them), also
  # from a linked worktree.
  VEC=${PQGPU_VECTORS_DIR:-$(git rev-parse --path-format=absolute --git-common-dir)/../../shared/vectors}
  rm -rf "$D"
  mkdir -p "$D/old" "$D/new" "$D/vectors/acvp"
  build() { # $1: source tree, $2: destination, $3: "tests" to take the GPU suite too
    (cd "$1" && CARGO_TARGET_DIR=$ROOT/target cargo build --release -p pqgpu-bench \
      && CARGO_TARGET_DIR=$ROOT/target cargo build --release -p pqgpu --example mlkem_kernels)
    cp "$ROOT/target/release/pqgpu-bench" "$ROOT/target/release/examples/mlkem_kernels" "$2/"
    if [ "$3" = tests ]; then
      exe=$(cd "$1" && CARGO_TARGET_DIR=$ROOT/target cargo test --release -p pqgpu --no-run \
        --test gpu_mlkem --message-format=json | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
      cp "$exe" "$2/gpu_mlkem"
    fi
  }
  SWAP=(kernels src/gpu/mlkem src/gpu/config.rs src/gpu/emu.rs)
  if git diff --quiet "$OLD" HEAD -- . ':!kernels' ':!src/gpu/mlkem' ':!src/gpu/config.rs' \
       ':!src/gpu/emu.rs' ':!scripts' ':!tools' ':!*.md' \
     && git diff --quiet --diff-filter=D "$OLD" HEAD -- "${SWAP[@]}"; then
    git diff --quiet HEAD -- "${SWAP[@]}" || { echo "${SWAP[*]} have uncommitted changes: commit them first" >&2; exit 1; }
    trap 'git checkout -q HEAD -- "${SWAP[@]}"' EXIT
    git checkout -q "$OLD" -- "${SWAP[@]}"
    build "$ROOT" "$D/old" no
    git checkout -q HEAD -- "${SWAP[@]}"
    trap - EXIT
  else
    TMP=$(mktemp -d)
    git worktree add --detach "$TMP/old" "$OLD"
    build "$TMP/old" "$D/old" no
    git worktree remove --force "$TMP/old"
    rmdir "$TMP"
    # Cargo fingerprints a workspace member by paths relative to the workspace: the old tree's
    # newer artifacts would pass for this checkout's unless its sources are newer still.
    find src kernels bench/src build.rs -type f -exec touch {} +
  fi
  build "$ROOT" "$D/new" tests
  if cmp -s "$D/old/pqgpu-bench" "$D/new/pqgpu-bench"; then
    echo "old and new pqgpu-bench are the same binary: nothing to compare" >&2
    exit 1
  fi
  strip "$D"/old/* "$D"/new/*
  cp -r "$VEC"/acvp/ML-KEM-* "$D/vectors/acvp/"
  echo "old $(git rev-parse --short "$OLD") new $(git rev-parse --short HEAD)" > "$D/build.txt"
  cp scripts/device/mlkem-ab.sh "$D/run.sh"
  du -sh "$D"
  exit 0
fi

cd "$(dirname "$0")" || exit 1
OUT=${OUT:-/tmp/mlkem-ab-out}
L=$OUT/logs
mkdir -p "$L"
export PQGPU_VECTORS_DIR=$PWD/vectors RUST_BACKTRACE=1
START=$(date +%s)
left() { echo $(( ${BUDGET:-340} - ($(date +%s) - START) )); }
S=$OUT/summary.txt
: > "$S"
step() { # NAME SECONDS COMMAND...: under a timeout cut to the time left; skipped without time
  local name=$1 t=$2 l s rc
  shift 2
  l=$(left)
  [ "$l" -lt 10 ] && { echo "SKIPPED $name: no time left" | tee -a "$S"; return; }
  [ "$t" -gt "$l" ] && t=$l
  s=$(date +%s)
  timeout "$t" "$@" > "$L/$name.log" 2>&1
  rc=$?
  echo "=== $name: rc=$rc ($(( $(date +%s) - s )) s)" | tee -a "$S"
  grep -E "test result|SKIPPED|panicked|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|CHECK FAILED|error|pqgpu-bench:" \
    "$L/$name.log" | head -12 | tee -a "$S"
}
{ cat build.txt 2>/dev/null; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; } >> "$S" 2>&1
B="--backend gpu --alg mlkem --reps 3 --latency-samples 1 --host-memory registered"
# Kernels compile once per build (NVRTC, cached per source hash) before anything is timed:
# the old build by a small run, the new one by its test suite.
step warm_old 60 env PQGPU_CACHE_DIR=/tmp/pqc-old ./old/pqgpu-bench $B --gpu-batch 1024 --kem-keys 1
step gpu_mlkem 100 env PQGPU_CACHE_DIR=/tmp/pqc-new PQGPU_GPU_CASES=${CASES:-500} ./new/gpu_mlkem --nocapture --test-threads=1
for i in 1 2 3; do
  for keys in 65536 1; do
    for b in old new; do
      step bench_${keys}_${b}_$i 45 env PQGPU_CACHE_DIR=/tmp/pqc-$b ./$b/pqgpu-bench $B \
        --kem-keys $keys --json "$L/bench_${keys}_${b}_$i.json"
    done
  done
done
export PQGPU_CACHE_DIR=/tmp/pqc-new
step memcheck 50 env PQGPU_GPU_CASES=48 compute-sanitizer --tool memcheck --error-exitcode 9 \
  ./new/gpu_mlkem --test-threads=1 matches_cpu
step racecheck 40 env PQGPU_GPU_CASES=16 compute-sanitizer --tool racecheck --error-exitcode 9 \
  ./new/gpu_mlkem --test-threads=1 gpu_mlkem_1024_matches_cpu
NCU="ncu --section SpeedOfLight --section Occupancy --section LaunchStats -k regex:^mlkem_ --launch-count 60"
step ncu_new 50 env PQGPU_CACHE_DIR=/tmp/pqc-new $NCU ./new/mlkem_kernels 16384 768
step ncu_old 40 env PQGPU_CACHE_DIR=/tmp/pqc-old $NCU ./old/mlkem_kernels 16384 768
for b in new old; do [ -s "$L/ncu_$b.log" ] && python3 - "$L/ncu_$b.log" >> "$S" 2>&1 <<'PY'
import collections, re, sys
# Per kernel: launches, total duration, and the last launch's throughputs, occupancy, registers.
cur = None
agg = collections.OrderedDict()
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\s+(\w+)\b.*\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", line)
    if m:
        cur = agg.setdefault(m.group(1), {"n": 0, "us": 0.0})
        cur["n"] += 1
        continue
    if cur is None:
        continue
    m = re.match(r"\s+Duration\s+(\w+)\s+([\d.,]+)", line)
    if m:
        v = float(m.group(2).replace(",", ""))
        cur["us"] += v * {"n": 1e-3, "u": 1, "m": 1e3, "s": 1e6}.get(m.group(1)[0], 1)
    for key, pat in (("regs", r"\s+Registers Per Thread\s+\S+\s+([\d.,]+)"),
                     ("occ", r"\s+Achieved Occupancy\s+%\s+([\d.,]+)"),
                     ("sm", r"\s+Compute \(SM\) Throughput\s+%\s+([\d.,]+)"),
                     ("mem", r"\s+Memory Throughput\s+%\s+([\d.,]+)")):
        m = re.match(pat, line)
        if m:
            cur[key] = m.group(1)
tot = sum(k["us"] for k in agg.values()) or 1
print(f"--- {sys.argv[1].split('/')[-1]}: kernel, launches, us, share, SM %, memory %, achieved occupancy %, regs")
for name, k in agg.items():
    print(f"{name:22} {k['n']:4} {k['us']:10.1f} {100 * k['us'] / tot:5.1f}% {k.get('sm', '-'):>6} {k.get('mem', '-'):>6} {k.get('occ', '-'):>6} {k.get('regs', '-'):>4}")
PY
done
python3 - "$L" >> "$S" 2>&1 <<'PY'
import glob, json, os, re, statistics, sys
d = sys.argv[1]
fig = {}  # (alg, op, keys, figure) -> {build: [ops/s per run]}
for f in sorted(glob.glob(f"{d}/bench_*.json")):
    _, keys, b, _ = os.path.basename(f)[:-5].split("_")
    try:
        rows = json.load(open(f))["throughput"]
    except (ValueError, KeyError):
        print("unreadable:", os.path.basename(f))
        continue
    for r in rows:
        for k, name in (("c_abi_registered_ops_per_s", "C ABI"), ("kernel_only_ops_per_s", "kernel")):
            if r.get(k):
                fig.setdefault((r["alg"], r["op"], keys, name), {}).setdefault(b, []).append(r[k])
med = lambda v: statistics.median(v) if v else None
print(f"{'alg':12} {'op':7} {'keys':6} {'figure':7} {'old (median)':>13} {'new (median)':>13} {'new/old':>8}  runs (M ops/s)")
for (alg, op, keys, name), v in sorted(fig.items()):
    o, n = med(v.get("old")), med(v.get("new"))
    ratio = f"{n / o:8.3f}" if o and n else "       -"
    fmt = lambda x: f"{x / 1e6:11.2f} M" if x else "            -"
    runs = lambda b: "[" + " ".join(f"{x / 1e6:.2f}" for x in v.get(b, [])) + "]"
    print(f"{alg:12} {op:7} {keys:6} {name:7} {fmt(o)} {fmt(n)} {ratio}  old {runs('old')} new {runs('new')}")
# The verdict: ML-KEM-768 through the C ABI against the targets, then the checks.
print("=== verdict (ML-KEM-768, C ABI, registered; target in brackets)")
targets = (("keygen", "65536", 13e6), ("encaps", "65536", 30e6), ("decaps", "65536", 13e6), ("decaps", "1", 30e6), ("encaps", "1", None))
for op, keys, want in targets:
    v = fig.get(("ML-KEM-768", op, keys, "C ABI"), {})
    o, n = med(v.get("old")), med(v.get("new"))
    if not (o and n):
        print(f"{op} keys={keys}: no figures")
        continue
    goal = f" [{want / 1e6:.0f} M: {'met' if n >= want else 'not met'}]" if want else ""
    print(f"{op:6} keys={keys:5}: {o / 1e6:6.2f} -> {n / 1e6:6.2f} M ({n / o:.3f}x){goal}")
def log(name):
    p = f"{d}/{name}.log"
    return open(p, errors="replace").read() if os.path.exists(p) else ""
text = log("gpu_mlkem")
res = re.findall(r"test result: (\w+)\. (\d+) passed; (\d+) failed", text)
print("suite gpu_mlkem: " + (", ".join(f"{r[0]} ({r[1]} passed, {r[2]} failed)" for r in res) or "no result")
      + (f", {text.count('SKIPPED')} SKIPPED lines" if "SKIPPED" in text else ""))
for t in ("memcheck", "racecheck"):
    m = re.findall(r"(?:ERROR|RACECHECK) SUMMARY: (\d+) (?:error|hazard)", log(t))
    print(f"{t}: " + (f"{m[-1]} errors" if m else "no summary"))
PY
echo "total $(( $(date +%s) - START )) s" >> "$S"
cat "$S"

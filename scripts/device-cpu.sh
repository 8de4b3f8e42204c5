#!/bin/bash
# The CPU backend (#15) on the H200 host in one device call of about 2 minutes (capped at 170 s):
# pqgpu-bench --backend cpu for ML-DSA-44/65/87 and CTRU-Prime-653/761/1277, on all 16 threads
# and on one pinned thread, with the vector paths on (AVX2) and forced off (PQGPU_CPU_SIMD=off,
# the portable code); then second runs for the noise.
# Every figure is checked by the bench itself (signatures verified, shared secrets matched).
#
# Build host:  cargo build --release --bin pqgpu-bench && scripts/device-cpu.sh pack <checkout>
#              (copies the stripped pqgpu-bench and this script into <checkout>/.device/cpu)
# GPU machine: bash .device/cpu/run.sh   (carry .device/cpu; logs, JSON and summary.txt in $OUT)
set -u

if [ "${1:-}" = pack ]; then
    root=$(cd "$(dirname "$0")/.." && pwd)
    D=${2:?usage: $0 pack <checkout>}/.device/cpu
    mkdir -p "$D"
    cp "$root/target/release/pqgpu-bench" "$D/pqgpu-bench" && strip "$D/pqgpu-bench"
    cp "$0" "$D/run.sh"
    (cd "$root" && git rev-parse --short HEAD && git status --short | head -5) > "$D/commit.txt"
    du -sh "$D"
    exit 0
fi

cd "$(dirname "$0")"
OUT=${OUT:-/tmp/device-cpu}; mkdir -p "$OUT"
T=${PQGPU_DEVICE_THREADS:-$(nproc)}
start=$(date +%s)
fails=0
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cores," \
    "$(grep -o -w 'avx2\|avx512f\|avx512bw\|avx512_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "build: $(cat commit.txt 2>/dev/null | head -1)"
# step NAME TIMEOUT ENV... -- ARGS...: one bench run, skipped once the call nears its budget.
step() {
    local name=$1 t=$2; shift 2
    local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    if [ $(( $(date +%s) - start + t )) -gt 170 ]; then echo "=== $name SKIPPED (budget)"; return; fi
    echo "=== $name"
    local s=$(date +%s)
    timeout "$t" env "${envs[@]}" $PIN ./pqgpu-bench --backend cpu --alg all --reps 5 \
        --latency-samples 20 --json "$OUT/$name.json" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    echo "rc=$rc ($name, $(( $(date +%s) - s )) s)"; [ $rc = 0 ] || fails=$((fails + 1))
    grep -E "^cpu x[0-9]+ .* (keygen|sign|verify|encaps|decaps) +[0-9]+ " "$OUT/$name.log" \
        | awk -v n="$name" '$6 == "-" {print n, $3, $4, $7 ($8 == "k" || $8 == "M" ? " " $8 : "")}' | tee -a "$OUT/summary.txt"
    grep -E "error|panicked|mismatch|all results checked" "$OUT/$name.log" | head -3
}
# All threads: batch 256 per thread. One thread pinned to core 0: batch 256.
B=$((256 * T))
PIN=
step simd_${T}t 30 PQGPU_CPU_SIMD=on -- --threads "$T" --cpu-batch "$B"
step off_${T}t 40 PQGPU_CPU_SIMD=off -- --threads "$T" --cpu-batch "$B"
PIN="taskset -c 0"
step simd_1t 30 PQGPU_CPU_SIMD=on -- --threads 1 --cpu-batch 256
step off_1t 40 PQGPU_CPU_SIMD=off -- --threads 1 --cpu-batch 256
# Second runs (noise), while the budget lasts.
PIN=
step off_${T}t_b 40 PQGPU_CPU_SIMD=off -- --threads "$T" --cpu-batch "$B"
step simd_${T}t_b 30 PQGPU_CPU_SIMD=on -- --threads "$T" --cpu-batch "$B"
PIN="taskset -c 0"
step simd_1t_b 30 PQGPU_CPU_SIMD=on -- --threads 1 --cpu-batch 256
echo "=== summary: $fails failed steps, $(( $(date +%s) - start )) s; figures in $OUT/summary.txt" \
    "(step algorithm op ops/s), JSON per step in $OUT/*.json"
[ "$fails" = 0 ]

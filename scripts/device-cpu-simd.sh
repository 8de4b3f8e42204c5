#!/bin/bash
# The CPU vector paths (#15) on the H200 host (16 cores, AVX2/AVX-512), in one call of ~3 minutes:
# one-thread ops/s portable vs AVX2 (examples/cpu_ops), pqgpu-bench --backend cpu on all cores
# with and without the vector paths, and pq-crystals' ML-DSA AVX2 reference on one core and on
# 16 pinned processes (same machine, same run).
#
# Build host (binaries only; the reference's code is never committed), from the repo root:
#   cargo build --release --bin pqgpu-bench --example cpu_ops
#   D=<checkout that `run` ships>/.device/cpu-simd; mkdir -p $D; H=$PWD
#   cp target/release/pqgpu-bench target/release/examples/cpu_ops $D/; cp scripts/device-cpu-simd.sh $D/run.sh
#   R=$(mktemp -d); git --git-dir=<mirror of github:pq-crystals/dilithium> archive HEAD | tar x -C $R
#   for m in 2 3 5; do (cd $R/avx2 && cc -O3 -mavx2 -mbmi2 -mpopcnt -fomit-frame-pointer -w \
#     -DDILITHIUM_MODE=$m -I. $H/scripts/reference/dilithium_speed.c sign.c packing.c polyvec.c \
#     poly.c ntt.S invntt.S pointwise.S shuffle.S consts.c rejsample.c rounding.c fips202.c \
#     fips202x4.c f1600x4.S symmetric-shake.c randombytes.c -o $D/dilavx2_$m); done
#   strip $D/cpu_ops $D/pqgpu-bench $D/dilavx2_*
# GPU machine: bash .device/cpu-simd/run.sh   (carry .device/cpu-simd; logs land in $OUT)
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/cpu-simd-out}; mkdir -p "$OUT"
step() { local name=$1 t=$2; shift 2; echo "=== $name"; local s=$(date +%s)
  timeout $t "$@" > $OUT/$name.log 2>&1; echo "rc=$? ($name, $(( $(date +%s) - s )) s)"
  grep -E "^\|| ops/s|ML-DSA|CTRU|error|panicked" $OUT/$name.log | head -60; }
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cores, $(grep -o 'avx2\|avx512f' /proc/cpuinfo | sort -u | tr '\n' ' ')"
# One thread, pinned: portable vs AVX2 (best of 3 runs of 0.3 s per figure).
step one_thread 60 taskset -c 0 ./cpu_ops 0.3 3 both mldsa
# All cores through the batch interface, vector paths on (default) and forced off.
step bench_simd 60 ./pqgpu-bench --backend cpu --alg mldsa --reps 3 --latency-samples 20
step bench_portable 60 env PQGPU_CPU_SIMD=off ./pqgpu-bench --backend cpu --alg mldsa --reps 3 --latency-samples 20
step bench_simd_1t 40 taskset -c 0 ./pqgpu-bench --backend cpu --alg mldsa --threads 1 --cpu-batch 64 --reps 3 --latency-samples 5
# pq-crystals AVX2 reference: one core, then 16 pinned processes (sum of their rates).
if [ -x ./dilavx2_2 ]; then
  for m in 2 3 5; do step ref1_$m 10 taskset -c 0 ./dilavx2_$m 1; done
  for m in 2 3 5; do
    echo "=== ref16_$m"
    for c in $(seq 0 $(( $(nproc) - 1 ))); do taskset -c $c timeout 10 ./dilavx2_$m 1 > $OUT/ref16_${m}_$c.log 2>&1 & done; wait
    cat $OUT/ref16_${m}_*.log | awk '{s[$1" "$2]+=$3} END {for (k in s) printf "%s %.0f (all cores)\n", k, s[k]}' | tee $OUT/ref16_$m.log
  done
fi

#!/bin/bash
# CTRU-Prime on the GPU machine, in one call (binaries built on the build host, see below):
# correctness (all KAT vectors; PQGPU_GPU_CASES random cases per set, half per product engine,
# 1/4 bit-flipped and 1/4 random ciphertexts), compute-sanitizer, end-to-end throughput per
# engine at batch 65,536 (and keygen with the per-key inversion), and per-kernel / host-phase
# profiles for tuning.
#
# Build host:  cargo build --release --features tuning --tests --bin pqgpu-bench
#              (the forced engines and profiles below exist only in `tuning` builds)
#              D=<checkout that `run` ships>/.device/ctru; mkdir -p $D/vectors
#              cp target/release/deps/gpu_ctru-<hash> $D/gpu_ctru; cp target/release/pqgpu-bench $D/
#              strip $D/*; cp -r ../shared/vectors/ctru-prime $D/vectors/; cp scripts/device-ctru.sh $D/run.sh
# GPU machine: bash .device/ctru/run.sh   (carry .device/ctru; logs land in $OUT)
cd "$(dirname "$0")"
export PQGPU_CACHE_DIR=/tmp/pqc PQGPU_VECTORS_DIR=$PWD/vectors RUST_BACKTRACE=1
step() { local name=$1 t=$2; shift 2; echo "=== $name"; local s=$(date +%s)
  timeout $t "$@" > $OUT/$name.log 2>&1; echo "rc=$? ($name, $(( $(date +%s) - s )) s)"
  grep -E "test result|SKIPPED|match|panicked|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|CTRU-Prime" $OUT/$name.log | head -40; }
step kat 25 ./gpu_ctru --nocapture gpu_ctru_kat_vectors
step bench_tc 40 ./pqgpu-bench --backend gpu --alg ctru --latency-samples 3
step bench_cc 32 env PQGPU_CTRU_ENGINE=cc ./pqgpu-bench --backend gpu --alg ctru --latency-samples 3
step bench_perkey 32 env PQGPU_CTRU_INVERT=perkey ./pqgpu-bench --backend gpu --alg ctru --latency-samples 3
step cases 55 env PQGPU_GPU_CASES=${PQGPU_GPU_CASES:-100000} ./gpu_ctru --nocapture matches_cpu
step memcheck 12 env PQGPU_GPU_CASES=300 PQGPU_GPU_KEYGEN_CASES=8 compute-sanitizer --tool memcheck --error-exitcode 9 ./gpu_ctru --test-threads=1 matches_cpu
step racecheck 10 env PQGPU_GPU_CASES=130 PQGPU_GPU_KEYGEN_CASES=4 compute-sanitizer --tool racecheck --error-exitcode 9 ./gpu_ctru --test-threads=1 gpu_ctru_761
# Tuning data (not needed for correctness): where the time goes, and smaller chunks.
step profile 40 env PQGPU_PROFILE=1 PQGPU_HOST_PROFILE=1 ./pqgpu-bench --backend gpu --alg ctru --latency-samples 1 --reps 1
step chunk4k 40 env PQGPU_CTRU_CHUNK=4096 ./pqgpu-bench --backend gpu --alg ctru --latency-samples 1

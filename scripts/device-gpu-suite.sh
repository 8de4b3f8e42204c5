#!/bin/bash
# The GPU engine's checks on the GPU machine, in one call (about 2-3 minutes): every GPU test
# suite (ML-DSA, round-3 Dilithium, CTRU-Prime, registered host memory, a GPU failure injected
# mid-batch, the C ABI's batches), compute-sanitizer memcheck on short runs of both kernel
# families, and the benchmark's end-to-end and kernel-only figures (ML-DSA and CTRU-Prime,
# batch 65,536, registered and pageable buffers) as JSON. Run it on binaries built before and
# after a change of src/gpu or kernels/, one after the other on the same machine, and compare
# bench.json (kernel-only: the "kernel" field of each ML-DSA row).
#
# Build host (from the checkout to measure; the same commands before and after the change):
#   cargo build --release --bin pqgpu-bench
#   for t in gpu_mldsa gpu_dilithium gpu_ctru gpu_hostmem robustness_gpu_fail c_abi_batches; do
#     cargo test --release --no-run --test $t; done
#   D=<checkout that `run` ships>/.device/gpu-suite; mkdir -p $D/vectors
#   for t in gpu_mldsa gpu_dilithium gpu_ctru gpu_hostmem robustness_gpu_fail c_abi_batches; do
#     cp $(ls -t target/release/deps/$t-* | grep -v '\.d$' | head -1) $D/$t; done
#   cp target/release/pqgpu-bench $D/; strip $D/*
#   cp -r ../shared/vectors/acvp ../shared/vectors/ctru-prime $D/vectors/
#   cp tests/data/dilithium-r3/*.rsp.gz $D/; cp scripts/device-gpu-suite.sh $D/run.sh
# GPU machine: bash .device/gpu-suite/run.sh   (carry .device/gpu-suite; logs land in $OUT)
# The suites pick the GPU themselves (gpu_* through the GPU backend, c_abi_batches and
# robustness_gpu_fail through PQG_BACKEND_GPU contexts); without a GPU each prints SKIPPED.
cd "$(dirname "$0")"
export PQGPU_CACHE_DIR=/tmp/pqc PQGPU_VECTORS_DIR=$PWD/vectors RUST_BACKTRACE=1
export PQGPU_DILITHIUM_KAT_DIR=$PWD
step() { local name=$1 t=$2; shift 2; echo "=== $name"; local s=$(date +%s)
  timeout $t "$@" > $OUT/$name.log 2>&1; echo "rc=$? ($name, $(( $(date +%s) - s )) s)"
  grep -E "test result|SKIPPED|match|panicked|FAILED|ERROR SUMMARY|injected" $OUT/$name.log | head -20; }
# Compile every kernel once (NVRTC, cached in $PQGPU_CACHE_DIR) so later steps time only work.
step warmup_mldsa 90 env PQGPU_GPU_CASES=16 ./gpu_mldsa --test-threads=1 gpu_matches_cpu_mldsa44
step warmup_ctru 60 ./gpu_ctru --test-threads=1 gpu_ctru_kat_vectors
step gpu_mldsa 40 env PQGPU_GPU_CASES=${CASES:-2000} ./gpu_mldsa
step gpu_dilithium 40 env PQGPU_GPU_CASES=${CASES:-2000} ./gpu_dilithium
step gpu_ctru 40 env PQGPU_GPU_CASES=${CASES:-2000} ./gpu_ctru
step gpu_hostmem 30 env PQGPU_GPU_CASES=${CASES:-2000} ./gpu_hostmem
step robustness_gpu_fail 30 ./robustness_gpu_fail --nocapture
step c_abi_batches 30 env PQGPU_GPU_CASES=${CASES:-2000} ./c_abi_batches
# memcheck: CTRU-Prime with enough items per key for the grouped Tensor-Core product (3 keys x
# 3 x 128 items) and the keygen tree; ML-DSA signing and verification on a few items.
step memcheck_ctru 45 env PQGPU_GPU_CASES=1600 PQGPU_GPU_KEYGEN_CASES=13 compute-sanitizer --tool memcheck --error-exitcode 9 ./gpu_ctru --test-threads=1 gpu_ctru_653_matches_cpu
step memcheck_mldsa 30 env PQGPU_GPU_CASES=64 compute-sanitizer --tool memcheck --error-exitcode 9 ./gpu_mldsa --test-threads=1 gpu_matches_cpu_mldsa44
step bench 70 ./pqgpu-bench --backend gpu --alg all --reps 3 --latency-samples 3 --json $OUT/bench.json
grep -E "ML-DSA|CTRU|kernel" $OUT/bench.log | head -40

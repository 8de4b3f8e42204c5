#!/bin/bash
# Dilithium round 3 (v3.1) on the GPU machine, in one call (binaries built on the build host,
# see below): all 300 reference KAT records on the GPU, GPU vs CPU on PQGPU_GPU_CASES random
# cases per level (default 20,000) and hedged signatures, the mixed batch (ML-DSA and round-3
# jobs in flight on one context through the C ABI), ML-DSA regression (ACVP and random cases:
# the kernels are shared), then throughput at batch 65,536 for Dilithium2/3/5 beside
# ML-DSA-44/65/87: end to end through pqgpu-bench and kernel-only (gpu_kernels).
# About 3-4 minutes, most of it the first NVRTC compile of the six modules and the benchmark.
#
# Build host:  cargo build --release --bin pqgpu-bench --example gpu_kernels \
#                --test gpu_dilithium --test dilithium_ffi --test gpu_mldsa
#              D=<checkout that `run` ships>/.device/dilithium; mkdir -p $D/vectors
#              for t in gpu_dilithium dilithium_ffi gpu_mldsa; do
#                cp $(ls -t target/release/deps/$t-* | grep -v '\.d$' | head -1) $D/$t; done
#              cp target/release/pqgpu-bench target/release/examples/gpu_kernels $D/
#              strip $D/*; cp -r ../shared/vectors/acvp $D/vectors/
#              cp tests/data/dilithium-r3/*.rsp.gz $D/; cp scripts/device-dilithium.sh $D/run.sh
# GPU machine: bash .device/dilithium/run.sh   (carry .device/dilithium; logs land in $OUT)
cd "$(dirname "$0")"
export PQGPU_CACHE_DIR=/tmp/pqc PQGPU_VECTORS_DIR=$PWD/vectors PQGPU_DILITHIUM_KAT_DIR=$PWD
export RUST_BACKTRACE=1
step() { local name=$1 t=$2; shift 2; echo "=== $name"; local s=$(date +%s)
  timeout $t "$@" > $OUT/$name.log 2>&1; echo "rc=$? ($name, $(( $(date +%s) - s )) s)"
  grep -E "test result|SKIPPED|identical|panicked|FAILED|M ops/s|error|Dilithium|ML-DSA" $OUT/$name.log | head -60; }
# The first step compiles (and caches) the PTX of all six ML-DSA-family modules.
step kat 120 ./gpu_dilithium --nocapture gpu_kat
step cases 150 env PQGPU_GPU_CASES=${PQGPU_GPU_CASES:-20000} ./gpu_dilithium --nocapture gpu_matches_cpu hedged
step mixed 60 ./dilithium_ffi --nocapture mixed_batch_gpu
step mldsa 120 env PQGPU_GPU_CASES=5000 ./gpu_mldsa --nocapture
step bench 180 ./pqgpu-bench --backend gpu --alg dilithium --latency-samples 3 --json $OUT/bench.json
step kernels 90 ./gpu_kernels 65536

#!/bin/bash
# ML-KEM on the GPU machine, in one call of about five minutes (binaries built on the build host):
# the kernels' first compile, every ACVP ML-KEM case on the GPU, GPU == CPU on PQGPU_GPU_CASES
# items per set (default 20,000: key per item, one key, three keys; tampered ciphertexts;
# malformed keys; fresh randomness; registered buffers), compute-sanitizer memcheck on a small
# run, kernel-only throughput at batch 65,536, and the benchmark's ML-KEM figures when it has
# them. Logs land in $OUT; the lines that matter are echoed.
#
# Build host (from the repository root):
#   cargo build --release --tests --examples && cargo build --release -p pqgpu-bench
#   D=target/device/mlkem; rm -rf $D; mkdir -p $D/vectors/acvp
#   cp $(ls -t target/release/deps/gpu_mlkem-* | grep -v '\.d$' | head -1) $D/gpu_mlkem
#   cp target/release/examples/mlkem_kernels target/release/pqgpu-bench $D/
#   strip $D/gpu_mlkem $D/mlkem_kernels $D/pqgpu-bench
#   cp -r ../shared/vectors/acvp/ML-KEM-* $D/vectors/acvp/; cp scripts/device/mlkem.sh $D/run.sh
#   du -sh $D   # well under 64 MiB
# GPU machine: bash target/device/mlkem/run.sh   (carry: target/device/mlkem)
cd "$(dirname "$0")"
export PQGPU_CACHE_DIR=/tmp/pqc PQGPU_VECTORS_DIR=$PWD/vectors RUST_BACKTRACE=1
OUT=${OUT:-/tmp/mlkem-out}; mkdir -p "$OUT"
step() { local name=$1 t=$2; shift 2; echo "=== $name"; local s=$(date +%s)
  timeout $t "$@" > $OUT/$name.log 2>&1; echo "rc=$? ($name, $(( $(date +%s) - s )) s)"
  grep -E "test result|SKIPPED|match|pass|panicked|FAILED|ERROR SUMMARY|M ops/s|error|ML-KEM|gpu:" $OUT/$name.log | head -40; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
# NVRTC compiles the three sets once (cached in PQGPU_CACHE_DIR for the steps after).
step compile 150 ./mlkem_kernels 1024 768
step acvp 40 ./gpu_mlkem --nocapture gpu_mlkem_acvp_vectors
step cases 100 env PQGPU_GPU_CASES=${PQGPU_GPU_CASES:-20000} ./gpu_mlkem --nocapture --test-threads=1
step kernels 45 ./mlkem_kernels 65536
if ./pqgpu-bench --help 2>&1 | grep -qi mlkem; then
  step bench 60 ./pqgpu-bench --backend gpu --alg mlkem --latency-samples 3
else
  echo "=== bench: pqgpu-bench has no ML-KEM option; kernel-only figures above"
fi
step memcheck 60 env PQGPU_GPU_CASES=200 compute-sanitizer --tool memcheck --error-exitcode 9 ./gpu_mlkem --test-threads=1 gpu_mlkem_768_matches_cpu gpu_mlkem_registered

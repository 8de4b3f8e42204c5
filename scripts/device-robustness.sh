#!/bin/bash
# Issue #17 on the GPU machine, in one call (about 3-4 minutes): a GPU failure injected in
# the middle of a signing batch through the C ABI (PQGPU_GPU_FAIL_AFTER), the robustness
# regression tests with a GPU context (adversarial keys in GPU sign batches, forged and wrong-length
# signatures in GPU verify batches, all checked against the CPU one at a time), the stress
# test's long form on the GPU backend, and compute-sanitizer memcheck / racecheck on the
# signing path (the attempt bound's kernels included).
#
# Build host:  cargo build --release --test robustness --test robustness_gpu_fail --test stress --test gpu_mldsa
#              D=<checkout that `run` ships>/.device/robustness; mkdir -p $D
#              for t in robustness robustness_gpu_fail stress gpu_mldsa; do
#                cp $(ls -t target/release/deps/$t-* | grep -v '\.d$' | head -1) $D/$t; done
#              strip $D/*; cp scripts/device-robustness.sh $D/run.sh
# GPU machine: bash .device/robustness/run.sh   (carry .device/robustness; logs land in $OUT)
cd "$(dirname "$0")"
export PQGPU_CACHE_DIR=/tmp/pqc RUST_BACKTRACE=1
step() { local name=$1 t=$2; shift 2; echo "=== $name"; local s=$(date +%s)
  timeout $t "$@" > $OUT/$name.log 2>&1; echo "rc=$? ($name, $(( $(date +%s) - s )) s)"
  grep -E "test result|SKIPPED|GPU batch|round|injected|stress:|panicked|FAILED|ERROR SUMMARY|RACECHECK SUMMARY" $OUT/$name.log | head -40; }
step inject 60 ./robustness_gpu_fail --nocapture
step robustness 120 ./robustness --nocapture
step stress_gpu 100 env PQGPU_STRESS_BACKEND=gpu PQGPU_STRESS_SECS=${PQGPU_STRESS_SECS:-60} ./stress --nocapture
step memcheck 90 compute-sanitizer --tool memcheck --error-exitcode 9 ./robustness --test-threads=1 gpu_batches_with_adversarial_keys
step racecheck 90 env PQGPU_GPU_CASES=64 compute-sanitizer --tool racecheck --error-exitcode 9 ./gpu_mldsa --test-threads=1 gpu_matches_cpu_mldsa44

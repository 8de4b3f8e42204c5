#!/usr/bin/env bash
# SLH-DSA on the GPU machine, in about five minutes: NIST's ACVP SLH-DSA keyGen and sigVer
# cases on the GPU (the first step compiles the twelve sets' kernels), GPU == CPU on
# PQGPU_GPU_CASES items per set (default 400; signing on the s sets a tenth: their CPU side is
# slow) with every interface, key per item / one key / three keys, hedged, tampered and
# malformed items and registered buffers, compute-sanitizer memcheck on a small run, then the
# hash ceilings with SHA2-128f's and SHA2-128s's kernel-only figures (examples/slhdsa_kernels),
# then `pqgpu-bench --alg slhdsa` for every set (through the C ABI, verification batches of
# 131,072; the 128-bit sets registered and pageable, the others registered, in three groups
# while time is left; with kernel-only figures; median of 3) on the GPU and on the CPU backend.
# Each set's test prints "SLH-DSA-...: ... match the CPU" when it passes.
# stage: tests="gpu_slhdsa" examples="slhdsa_kernels" bins="pqgpu-bench"
if [ "${1:-}" = stage ]; then
  # Only the SLH-DSA ACVP folders the GPU test reads (well under 10 MiB).
  v=${PQGPU_VECTORS_DIR:-../shared/vectors}/acvp
  mkdir -p "$2/vectors/acvp/v1.1.0.35-hotfix"
  cp -r "$v/SLH-DSA-keyGen-FIPS205" "$2/vectors/acvp/"
  cp -r "$v/v1.1.0.35-hotfix/SLH-DSA-sigVer-FIPS205" "$2/vectors/acvp/v1.1.0.35-hotfix/"
  exit 0
fi
source "$(dirname "$0")/common.sh"
SHOW="test result|SKIPPED|panicked|FAILED|ERROR SUMMARY|match the CPU|ACVP|ceilings|ops/s|error|SLH-DSA"
SHOW_LINES=60
machine
step acvp 240 ./gpu_slhdsa --nocapture gpu_slhdsa_acvp_vectors
step cases 240 env PQGPU_GPU_CASES=${PQGPU_GPU_CASES:-400} ./gpu_slhdsa --nocapture --test-threads=1 --skip acvp
step memcheck 120 env PQGPU_GPU_CASES=4 compute-sanitizer --tool memcheck --error-exitcode 9 \
  ./gpu_slhdsa --test-threads=1 gpu_slhdsa_sha2_128f_matches_cpu gpu_slhdsa_shake_256s_matches_cpu
step kernels 120 ./slhdsa_kernels 1 SHA2-128f SHA2-128s
if ./pqgpu-bench --help 2>&1 | grep -qi slhdsa; then
  SHOW="gpu|cpu|SLH-DSA|CHECK FAILED|error|all results"
  # The 128-bit sets registered and pageable, then the others registered only, each group
  # while the run's ten minutes allow (the CPU backend's step keeps its 120 s).
  left() { echo $((560 - 120 - ($(date +%s) - run_start))); }
  step bench_gpu 200 ./pqgpu-bench --backend gpu --alg slhdsa --reps 3 \
    --slh-sets SHA2-128f,SHA2-128s,SHAKE-128f,SHAKE-128s --json "$OUT/bench_gpu.json"
  i=1
  for g in SHA2-192f,SHA2-192s,SHA2-256f,SHA2-256s SHAKE-192f,SHAKE-192s,SHAKE-256f,SHAKE-256s; do
    t=$(left) i=$((i + 1))
    if [ "$t" -lt 30 ]; then echo "=== bench_gpu $g: left out, $t s left"; continue; fi
    step bench_gpu_$i $((t < 150 ? t : 150)) ./pqgpu-bench --backend gpu --alg slhdsa \
      --reps 3 --host-memory registered --latency-samples 5 --slh-sets "$g" --json "$OUT/bench_gpu_$i.json"
  done
  step bench_cpu 120 ./pqgpu-bench --backend cpu --alg slhdsa --reps 3 --json "$OUT/bench_cpu.json"
else
  echo "=== bench: pqgpu-bench has no SLH-DSA option; kernel-only figures above"
fi
finish

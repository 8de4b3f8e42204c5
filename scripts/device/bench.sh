#!/usr/bin/env bash
# The GPU figures of BENCHMARKS.md on the GPU machine: pqgpu-bench at batch 65,536 through the
# C ABI (registered and pageable arrays, the kernel-only figure beside them, single-call
# latency), RUNS times one after the other (default 3: this machine's runs move by 5-10 %);
# round-3 Dilithium beside ML-DSA; the kernel-only figures of examples/gpu_kernels; and, where more than one GPU is visible, one GPU against all of them
# at batch 262,144. Every figure is checked by the benchmark itself. JSON per run in $OUT.
# About 4 minutes with RUNS=3 on one H200 (the first run includes the NVRTC compile).
# stage: bins="pqgpu-bench" examples="gpu_kernels"
source "$(dirname "$0")/common.sh"
SHOW="ML-DSA|CTRU|Dilithium|kernel|CHECK FAILED|panicked|error"
SHOW_LINES=60
machine
for r in $(seq 1 "${RUNS:-3}"); do
  step abi_$r 150 ./pqgpu-bench --backend gpu --alg all --reps 3 --latency-samples 3 --json "$OUT/abi_$r.json"
done
step dilithium 150 ./pqgpu-bench --backend gpu --alg dilithium --latency-samples 3 --json "$OUT/dilithium.json"
step kernels 90 ./gpu_kernels 65536
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$gpus" -gt 1 ]; then
  many=(./pqgpu-bench --backend gpu --gpu-batch 262144 --reps 3 --latency-samples 1 --host-memory registered)
  step gpus_1 150 env PQGPU_DEVICES=0 "${many[@]}" --json "$OUT/gpus_1.json"
  step gpus_$gpus 150 "${many[@]}" --json "$OUT/gpus_$gpus.json"
fi
finish

#!/usr/bin/env bash
# Where the GPU time goes, for kernel and engine work, on a `tuning` build (the switches below
# exist only there, src/gpu/config.rs): per-kernel times (PQGPU_PROFILE=1, every launch
# synchronised, so these runs are slower than the figures) and each batch's host phases
# (PQGPU_HOST_PROFILE=1) for ML-DSA and CTRU-Prime; examples/gpu_kernels' per-kernel breakdown
# of kernel-only ML-DSA; CTRU-Prime's product engines (Tensor-Core against CUDA-core), the
# per-key inversion against the product tree, and smaller chunks, end to end at batch 65,536.
# Not figures to publish: measurements to decide a kernel or engine change. About 4 minutes.
# stage: bins="pqgpu-bench" examples="gpu_kernels" features="tuning"
source "$(dirname "$0")/common.sh"
SHOW="ML-DSA|CTRU|ms|CHECK FAILED|panicked|error"
SHOW_LINES=80
machine
one=(./pqgpu-bench --backend gpu --reps 1 --latency-samples 1 --host-memory registered)
step profile_mldsa 90 env PQGPU_PROFILE=1 PQGPU_HOST_PROFILE=1 "${one[@]}" --alg mldsa
step profile_ctru 60 env PQGPU_PROFILE=1 PQGPU_HOST_PROFILE=1 "${one[@]}" --alg ctru
step kernels 90 env PQGPU_PROFILE=1 ./gpu_kernels 65536
ctru=(./pqgpu-bench --backend gpu --alg ctru --latency-samples 1 --host-memory registered)
step ctru_tc 40 "${ctru[@]}"
step ctru_cc 40 env PQGPU_CTRU_ENGINE=cc "${ctru[@]}"
step ctru_perkey 40 env PQGPU_CTRU_INVERT=perkey "${ctru[@]}"
step ctru_chunk4k 40 env PQGPU_CTRU_CHUNK=4096 "${ctru[@]}"
finish

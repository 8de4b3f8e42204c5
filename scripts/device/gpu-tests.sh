#!/usr/bin/env bash
# Every GPU test suite on the GPU machine, at reduced case counts (PQGPU_GPU_CASES random cases
# per set, default 2,000; every ACVP, CTRU-Prime and round-3 KAT vector), each GPU result
# compared with the CPU backend; a GPU failure injected mid-batch; then compute-sanitizer
# memcheck and racecheck on short runs of the kernel families; ML-KEM at 20,000 random items per
# set; a forked child of a process that did GPU work (tests/fork_gpu.rs). No suite may print SKIPPED
# there: the summary counts those lines as a failure. About 4-5 minutes, the first step
# including the NVRTC compile of every kernel module.
# stage: tests="context gpu_mldsa gpu_dilithium gpu_ctru gpu_hostmem c_abi_batches dilithium_ffi robustness robustness_gpu_fail serve gpu_mlkem fork_gpu" vectors="acvp ctru-prime" kat=1
source "$(dirname "$0")/common.sh"
export PQGPU_GPU_CASES=${PQGPU_GPU_CASES:-2000}
SHOW="test result|SKIPPED|panicked|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|injected|backend=|gpu="
SAN="compute-sanitizer --error-exitcode 9 --tool"
machine
step context 120 ./context --nocapture
step gpu_mldsa 150 ./gpu_mldsa --nocapture
step gpu_dilithium 120 ./gpu_dilithium --nocapture
step gpu_ctru 90 ./gpu_ctru --nocapture
step gpu_hostmem 60 ./gpu_hostmem --nocapture
step c_abi_batches 60 ./c_abi_batches --nocapture gpu_batches
step dilithium_ffi 60 ./dilithium_ffi --nocapture mixed_batch_gpu
step robustness 60 ./robustness --nocapture gpu_batches
step robustness_gpu_fail 60 ./robustness_gpu_fail --nocapture
step serve 75 ./serve --nocapture --test-threads=1 gpu_
# ML-KEM: ACVP on the GPU and GPU == CPU on 20,000 items per set (the first step compiles its kernels).
step gpu_mlkem 240 env PQGPU_GPU_CASES=${PQGPU_MLKEM_CASES:-20000} ./gpu_mlkem --nocapture --test-threads=1
step fork_gpu 90 ./fork_gpu --nocapture
# Sanitizers: CTRU-Prime with enough items per key for the grouped Tensor-Core product
# (3 keys x 3 x 128 items) and the keygen tree; ML-DSA keygen, signing and verification.
step memcheck_ctru 45 env PQGPU_GPU_CASES=1600 PQGPU_GPU_KEYGEN_CASES=13 \
  $SAN memcheck ./gpu_ctru --test-threads=1 gpu_ctru_653_matches_cpu
step memcheck_mlkem 60 env PQGPU_GPU_CASES=64 $SAN memcheck ./gpu_mlkem --test-threads=1
step memcheck_mldsa 30 env PQGPU_GPU_CASES=64 $SAN memcheck ./gpu_mldsa --test-threads=1 gpu_matches_cpu_mldsa44
step racecheck_ctru 30 env PQGPU_GPU_CASES=130 PQGPU_GPU_KEYGEN_CASES=4 \
  $SAN racecheck ./gpu_ctru --test-threads=1 gpu_ctru_761_matches_cpu
step racecheck_mldsa 90 env PQGPU_GPU_CASES=64 $SAN racecheck ./gpu_mldsa --test-threads=1 gpu_matches_cpu_mldsa44
skips=$(cat "$OUT"/*.log | grep -c SKIPPED)
echo "=== $skips SKIPPED lines (0 on a GPU machine)"
[ "$skips" = 0 ] || fails=$((fails + 1))
finish

#!/usr/bin/env bash
# The CPU backend on the GPU machine's host, every figure checked by the benchmark itself:
#   bench_*   pqgpu-bench --backend cpu (ML-DSA-44/65/87, CTRU-Prime-653/761/1277) on all cores
#             (batch 256 per thread) and on one pinned thread (batch 256), with the vector
#             paths on and forced off (PQGPU_CPU_SIMD=off: the portable code)
#   one_thread  examples/cpu_ops, one pinned thread, portable against the vector paths
#   same_*    one core, pqgpu (examples/cpu_ops xN) against pq-crystals' AVX2 ML-DSA on the
#             same inputs (scripts/reference/dilithium_same_inputs.c): CPU seconds of N
#             operations minus those of none, the best of ROUNDS alternated rounds
#   ref_*     pq-crystals' AVX2 ML-DSA (scripts/reference/dilithium_speed.c) on one core and
#             as one pinned process per core (the sum of their rates)
# The pq-crystals steps run only when staged with PQGPU_REF_DIR=<a pq-crystals/dilithium
# checkout> (its code is never committed here; binaries only). About 4 minutes.
# stage: bins="pqgpu-bench" examples="cpu_ops"
if [ "${1:-}" = stage ]; then
  set -e
  D=$2 R=${PQGPU_REF_DIR:-}
  [ -n "$R" ] || { echo "cpu: no PQGPU_REF_DIR: the pq-crystals steps will be skipped"; exit 0; }
  here=$PWD/scripts/reference d=$R/avx2
  for m in 2 3 5; do
    src=("$d"/{sign,packing,polyvec,poly,consts,rejsample,rounding,fips202,fips202x4,symmetric-shake}.c
         "$d"/{ntt,invntt,pointwise,shuffle,f1600x4}.S)
    flags=(-O3 -mavx2 -mpopcnt -march=native -mtune=native -w -DDILITHIUM_MODE=$m -I"$d")
    cc "${flags[@]}" "$here/dilithium_speed.c" "${src[@]}" "$d/randombytes.c" -o "$D/dilavx2_$m"
    cc "${flags[@]}" "$here/dilithium_same_inputs.c" "${src[@]}" -o "$D/det_$m"
  done
  strip "$D"/dilavx2_* "$D"/det_*
  exit 0
fi
source "$(dirname "$0")/common.sh"
SHOW="^cpu x[0-9]+ |ops/s|ML-DSA|CTRU|CHECK FAILED|panicked|error"
SHOW_LINES=60
machine
T=$(nproc)
bench=(./pqgpu-bench --backend cpu --alg all --reps 5 --latency-samples 20)
step bench_simd_${T}t 60 env PQGPU_CPU_SIMD=on "${bench[@]}" --threads "$T" --cpu-batch $((256 * T)) --json "$OUT/simd_${T}t.json"
step bench_off_${T}t 80 env PQGPU_CPU_SIMD=off "${bench[@]}" --threads "$T" --cpu-batch $((256 * T)) --json "$OUT/off_${T}t.json"
step bench_simd_1t 60 env PQGPU_CPU_SIMD=on taskset -c 0 "${bench[@]}" --threads 1 --cpu-batch 256 --json "$OUT/simd_1t.json"
step bench_off_1t 80 env PQGPU_CPU_SIMD=off taskset -c 0 "${bench[@]}" --threads 1 --cpu-batch 256 --json "$OUT/off_1t.json"
step one_thread 60 taskset -c 0 ./cpu_ops 0.3 3 both mldsa
if [ -x ./det_2 ]; then
  # cpu_seconds CMD...: user + system CPU seconds of CMD on core 0.
  cpu_seconds() { local TIMEFORMAT='%U %S'; { time taskset -c 0 "$@" > /dev/null; } 2>&1 | awk '{print $1 + $2}'; }
  N=${SAME_N:-2000}
  for m in 2 3 5; do
    set_name=ML-DSA-$((m == 2 ? 44 : m == 3 ? 65 : 87))
    for op in keygen sign verify; do
      best_ref="" best_ours=""
      for r in $(seq 1 "${ROUNDS:-5}"); do
        ref=$(awk -v a="$(cpu_seconds ./det_$m "$N" $op)" -v b="$(cpu_seconds ./det_$m 0 $op)" -v n="$N" 'BEGIN {print (a - b) / n * 1e6}')
        ours=$(awk -v a="$(cpu_seconds ./cpu_ops x"$N" 1 simd "$set_name" $op)" -v b="$(cpu_seconds ./cpu_ops x0 1 simd "$set_name" $op)" -v n="$N" 'BEGIN {print (a - b) / n * 1e6}')
        best_ref=$(awk -v x="$ref" -v y="$best_ref" 'BEGIN {print (y == "" || x < y) ? x : y}')
        best_ours=$(awk -v x="$ours" -v y="$best_ours" 'BEGIN {print (y == "" || x < y) ? x : y}')
      done
      echo "same $set_name $op: pq-crystals $best_ref us, pqgpu $best_ours us, ratio $(awk -v a="$best_ref" -v b="$best_ours" 'BEGIN {printf "%.2f", a / b}')" | tee -a "$OUT/same.txt"
    done
  done
fi
if [ -x ./dilavx2_2 ]; then
  for m in 2 3 5; do step ref1_$m 15 taskset -c 0 ./dilavx2_$m 1; done
  for m in 2 3 5; do
    for c in $(seq 0 $((T - 1))); do taskset -c "$c" timeout 15 ./dilavx2_$m 1 > "$OUT/ref${T}_${m}_$c.log" 2>&1 & done
    wait
    cat "$OUT"/ref"${T}"_"${m}"_*.log | awk -v t="$T" '{s[$1" "$2] += $3} END {for (k in s) printf "%s %.0f (%d processes)\n", k, s[k], t}' | tee -a "$OUT/ref_all.txt"
  done
fi
finish

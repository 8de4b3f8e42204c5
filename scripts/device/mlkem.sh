#!/usr/bin/env bash
# ML-KEM on the GPU machine in one call of under five minutes:
#   cases     tests/gpu_mlkem at 2,000 cases per set (GPU == CPU: a key per item, one key,
#             three keys, malformed keys mixed into key-per-item batches, tampered
#             ciphertexts, fresh randomness, registered buffers, every ACVP case); the first
#             step, so it also pays the kernels' NVRTC compile
#   abi_*     pqgpu-bench --alg mlkem through the C ABI at batch 65,536, registered arrays, a
#             key per item (--kem-keys 65536) and one key (--kem-keys 1), three runs of each
#             alternated; kernel-only beside them
#   c_bench   examples-c/bench (the exported functions from C, registered arrays, ML-KEM only)
#   serve     serving: asynchronous single items on the event loop, one key handle,
#             ML-KEM-768 encaps and decaps at 65,536 outstanding (ops/s, p50 / p99)
#   cpu       the CPU backend on all cores (pqgpu-bench --backend cpu --alg mlkem)
#   chunk_*   with time left: ML-KEM-768 rows again at other chunk sizes (PQGPU_CTRU_CHUNK,
#             the KEM chunk setting), to check the defaults of src/gpu/config.rs
# Ends with a summary: per set and operation the median of the three runs (ops/s, M), the
# kernel-only figure and the serving rows. Every figure is checked by the benchmark itself
# (every status, every shared secret decapsulated again).
# stage: bins="pqgpu-bench" tests="gpu_mlkem" vectors="acvp"
if [ "${1:-}" = stage ]; then
  # examples-c/bench against the library built here, found next to it at run time.
  dir=$2
  cargo build --release --lib -p pqgpu
  cp target/release/libpqgpu.so "$dir/libpqgpu.so.0"
  cc -O2 -std=c99 -Iinclude -Iexamples-c -o "$dir/c_bench" examples-c/bench.c \
    -Ltarget/release -lpqgpu -Wl,-rpath,'$ORIGIN' -lpthread
  strip "$dir/c_bench" "$dir/libpqgpu.so.0"
  # Only ML-KEM's ACVP files are read.
  find "$dir/vectors/acvp" -mindepth 1 -maxdepth 1 ! -name 'ML-KEM*' ! -name README.md -exec rm -rf {} +
  exit 0
fi
source "$(dirname "$0")/common.sh"
SHOW="test result|SKIPPED|panicked|FAILED|match the CPU|CHECK FAILED|error|ML-KEM"
SHOW_LINES=30
machine

step cases 150 env PQGPU_GPU_CASES=2000 ./gpu_mlkem --nocapture --test-threads=1

B=(./pqgpu-bench --backend gpu --alg mlkem --reps 3 --latency-samples 1 --host-memory registered)
for r in 1 2 3; do
  step abi_k_$r 60 "${B[@]}" --kem-keys 65536
  step abi_1_$r 60 "${B[@]}" --kem-keys 1
done
step c_bench 60 env PQG_BENCH_ONLY=ML-KEM ./c_bench 65536 3
step serve 40 ./pqgpu-bench --serve --backend gpu --gpu-batch 0 --serve-drivers 16 \
  --serve-algs ML-KEM-768 --serve-ops encaps,decaps --serve-threads 0 \
  --serve-outstanding 65536 --host-memory registered --serve-seconds 1
step cpu 60 ./pqgpu-bench --backend cpu --alg mlkem --reps 3 --latency-samples 1
for c in 8192 32768; do
  if [ $(( $(date +%s) - run_start )) -lt 210 ]; then
    step chunk_${c}_k 40 env PQGPU_CTRU_CHUNK=$c "${B[@]}" --kem-keys 65536
    step chunk_${c}_1 40 env PQGPU_CTRU_CHUNK=$c "${B[@]}" --kem-keys 1
  fi
done

# The summary. Throughput rows of pqgpu-bench: backend ("gpu", "cpu x16"), algorithm, op,
# batch, then the registered, pageable and kernel-only figures ("14.30 M", "512.0 k", "-");
# the latency table after them is skipped.
rows() { # FILES...: "alg op registered kernel" per row, ops/s
  awk 'FNR == 1 { lat = 0 } /^Latency/ { lat = 1 } lat { next }
  { s = ($1 == "cpu" && $2 ~ /^x[0-9]+$/) ? 1 : 0 }
  ($1 == "gpu" || $1 == "cpu") && $(2 + s) ~ /^ML-KEM/ && $(4 + s) ~ /^[0-9]+$/ {
    n = 0
    for (i = 5 + s; i <= NF; i++) {
      if ($i == "-") { v[++n] = "-"; continue }
      x = $i
      if ($(i + 1) == "M") { x *= 1e6; i++ } else if ($(i + 1) == "k") { x *= 1e3; i++ }
      v[++n] = x
    }
    print $(2 + s), $(3 + s), (v[1] != "-" ? v[1] : v[2]), v[3]
  }' "$@" 2>/dev/null
}
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) printf "%.2f", a[int((NR + 1) / 2)] / 1e6; else printf "-" }'; }
table() { # TITLE FILES...
  local title=$1; shift
  echo "$title"
  printf '  %-12s %-7s %10s %10s\n' set op "M ops/s" kernel
  for a in ML-KEM-512 ML-KEM-768 ML-KEM-1024; do for o in keygen encaps decaps; do
    local got; got=$(rows "$@" | awk -v a=$a -v o=$o '$1 == a && $2 == o')
    [ -n "$got" ] || continue
    printf '  %-12s %-7s %10s %10s\n' $a $o "$(echo "$got" | awk '{ print $3 }' | median)" \
      "$(echo "$got" | awk '$4 != "-" { print $4 }' | median)"
  done; done
}
echo "=== summary (H200 targets, ML-KEM-768: keygen >= 13 M, encaps >= 30 M and decaps >= 13 M with a key per item, decaps >= 30 M under one key)"
table "key per item, median of 3 runs (C ABI, batch 65,536, registered):" "$OUT"/abi_k_?.log
table "one key, median of 3 runs:" "$OUT"/abi_1_?.log
echo "examples-c/bench (best of 3; encaps/k, decaps/k: a key per item):"
grep -E '^ML-KEM' "$OUT/c_bench.log" | sed 's/^/  /'
echo "serving (event loop, one key handle, 65,536 outstanding):"
grep -E '^(async|blocking)' "$OUT/serve.log" | sed 's/^/  /'
table "CPU backend, all cores:" "$OUT/cpu.log"
for c in 8192 32768; do
  if [ -f "$OUT/chunk_${c}_k.log" ]; then
    table "PQGPU_CTRU_CHUNK=$c (one run), key per item:" "$OUT/chunk_${c}_k.log" | grep -E 'ML-KEM-768|set'
    table "PQGPU_CTRU_CHUNK=$c (one run), one key:" "$OUT/chunk_${c}_1.log" | grep -E 'ML-KEM-768|set'
  fi
done
finish

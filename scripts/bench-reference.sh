#!/usr/bin/env bash
# Measures pqgpu's CPU backend on one core next to the C references, in one run on one machine:
#   * pq-crystals `dilithium`: ref/ (the portable FIPS 204 reference) and avx2/ (its AVX2 build,
#     the speed target of issue #15; built only where the CPU has AVX2), and
#   * Prime-KEM `FPTRU-KEM`, the CTRU-Prime reference.
# Neither is part of pqgpu: check their public sources out beside the project first, e.g.
#   git clone <pq-crystals/dilithium> ../ref/dilithium
#   git clone <Prime-KEM/FPTRU-KEM>   ../ref/FPTRU-KEM
# Usage: scripts/bench-reference.sh [REF_DIR (default ../ref)] [seconds per figure (default 1)]
#        [core to pin to (default 0)]
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:-${PQGPU_REF_DIR:-../ref}}
secs=${2:-1}
core=${3:-0}
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
here=$PWD/scripts/reference

echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), one core"
if [ -d "$ref/dilithium/ref" ]; then
  echo "== pq-crystals dilithium ref ($(git -C "$ref/dilithium" rev-parse --short HEAD 2>/dev/null || echo unknown)), its own flags -O3 -fomit-frame-pointer"
  d=$ref/dilithium/ref
  for mode in 2 3 5; do
    cc -O3 -fomit-frame-pointer -w -DDILITHIUM_MODE=$mode -I"$d" "$here/dilithium_speed.c" \
      "$d"/{sign,packing,polyvec,poly,ntt,reduce,rounding,fips202,symmetric-shake,randombytes}.c -o "$build/dil$mode"
    taskset -c "$core" "$build/dil$mode" "$secs" | tee -a "$build/ref.txt"
  done
  if grep -q avx2 /proc/cpuinfo; then
    echo "== pq-crystals dilithium avx2, its own flags -O3 -mavx2 -mpopcnt -march=native -mtune=native"
    d=$ref/dilithium/avx2
    for mode in 2 3 5; do
      cc -O3 -mavx2 -mpopcnt -march=native -mtune=native -w -DDILITHIUM_MODE=$mode -I"$d" \
        "$here/dilithium_speed.c" "$d"/{sign,packing,polyvec,poly,consts,rejsample,rounding,fips202,fips202x4,symmetric-shake,randombytes}.c \
        "$d"/{ntt,invntt,pointwise,shuffle,f1600x4}.S -o "$build/dilavx2_$mode"
      taskset -c "$core" "$build/dilavx2_$mode" "$secs" | sed 's/ / avx2-/' | tee -a "$build/ref.txt"
    done
  fi
else
  echo "(no $ref/dilithium: ML-DSA reference skipped)"
fi
if [ -d "$ref/FPTRU-KEM" ]; then
  echo "== Prime-KEM FPTRU-KEM ($(git -C "$ref/FPTRU-KEM" rev-parse --short HEAD 2>/dev/null || echo unknown)), its own flags -O3 -march=native -mtune=native"
  f=$ref/FPTRU-KEM
  for n in 653 761 1277; do
    cc -O3 -march=native -mtune=native -fomit-frame-pointer -w -DFPTRU_N=$n -I"$f" "$here/fptru_speed.c" \
      "$f"/{pke,poly,reduce,coding,randombytes,cbd,pack,kem,fips202,inverse}.c "$f/poly_mul_n${n}q/radix_ntt_n$n.c" -o "$build/fptru$n"
    taskset -c "$core" "$build/fptru$n" "$secs" | tee -a "$build/ref.txt"
  done
else
  echo "(no $ref/FPTRU-KEM: CTRU-Prime reference skipped)"
fi
echo "== pqgpu CPU backend, one thread, pinned to the same core"
cargo build --release --quiet --bin pqgpu-bench
taskset -c "$core" "${CARGO_TARGET_DIR:-target}/release/pqgpu-bench" --backend cpu --threads 1 --cpu-batch 64 --reps 5 --latency-samples 50 \
  --json "$build/pqgpu.json"
echo
echo "== one core, ops/s: reference C vs pqgpu CPU backend (same run, same core)"
python3 - "$build/ref.txt" "$build/pqgpu.json" <<'PY'
import json, sys
ref = {}
for line in open(sys.argv[1]):
    alg, op, rate = line.split()
    ref[(alg, op)] = float(rate)
ours = {(r["alg"], r["op"]): r["ops_per_s"] for r in json.load(open(sys.argv[2]))["throughput"]}
ours.update({(a, "avx2-" + o): r for (a, o), r in ours.items()})
print(f"| {'algorithm':<16} | {'op':<7} | {'reference':>10} | {'pqgpu':>10} | {'pqgpu/ref':>9} |")
print(f"|{'-'*18}|{'-'*9}|{'-'*12}|{'-'*12}|{'-'*11}|")
for (alg, op), r in ref.items():
    o = ours.get((alg, op))
    if o:
        print(f"| {alg:<16} | {op:<7} | {r:>10.0f} | {o:>10.0f} | {o / r:>9.2f} |")
PY

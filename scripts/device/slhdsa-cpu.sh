#!/usr/bin/env bash
# SLH-DSA on one CPU core of the GPU machine's host: pqgpu (examples/slhdsa_cpu: the multi-lane
# hashes on; then once with PQGPU_CPU_SIMD=off) against the SPHINCS+ team's AVX2 code
# (test/benchmark of sha2-avx2 / shake-avx2, THASH=simple, -march=x86-64-v3), both pinned to
# the same core, alternated ROUNDS times (default 3). Prints one table: per set and operation,
# pqgpu's median and best microseconds and SPHINCS+'s average, each the best of the rounds.
# The SPHINCS+ steps run only when staged with PQGPU_SPHINCS_DIR=<a sphincs/sphincsplus
# checkout> (its code is never committed here; binaries only). About 1-2 minutes.
# stage: examples="slhdsa_cpu"
SETS="SHA2-128f SHA2-128s SHAKE-128f SHAKE-128s SHA2-192f SHAKE-192f"
if [ "${1:-}" = stage ]; then
  set -e
  D=$2 R=${PQGPU_SPHINCS_DIR:-}
  [ -n "$R" ] || { echo "slhdsa-cpu: no PQGPU_SPHINCS_DIR: the SPHINCS+ steps will be skipped"; exit 0; }
  tmp=$(mktemp -d)
  cp -r "$R"/. "$tmp"
  for s in $SETS; do
    fam=$(echo "${s%-*}" | tr 'A-Z' 'a-z') size=${s#*-}
    params=sphincs-$fam-$size
    rm -f "$tmp/$fam-avx2/test/benchmark"
    make -s -C "$tmp/$fam-avx2" test/benchmark PARAMS="$params" THASH=simple \
      CFLAGS="-O3 -std=c99 -march=x86-64-v3 -fomit-frame-pointer -DPARAMS=$params" > /dev/null
    strip -o "$D/spx-$s" "$tmp/$fam-avx2/test/benchmark"
  done
  rm -rf "$tmp"
  exit 0
fi
source "$(dirname "$0")/common.sh"
SHOW="^\| |CHECK FAILED|panicked|error"
SHOW_LINES=60
machine
CORE=${CORE:-2}
N=${N:-5}
names=$(for s in $SETS; do printf 'SLH-DSA-%s ' "$s"; done)
: > "$OUT/all.txt"
for r in $(seq 1 "${ROUNDS:-3}"); do
  step pqgpu_$r 100 taskset -c "$CORE" ./slhdsa_cpu "$N" $names
  awk -F'|' '/SLH-DSA/ {gsub(/ /, ""); print $2, "keygen pqgpu", $3, $6; print $2, "sign pqgpu", $4, $7;
    print $2, "verify pqgpu", $5, $8}' "$OUT/pqgpu_$r.log" >> "$OUT/all.txt"
  for s in $SETS; do
    [ -x "./spx-$s" ] || continue
    step spx_${s}_$r 60 taskset -c "$CORE" "./spx-$s"
    awk -v s="SLH-DSA-$s" '/^Generating/ {print s, "keygen spx", $4, $4} /^Signing/ {print s, "sign spx", $3, $3}
      /^Verifying/ {print s, "verify spx", $3, $3}' "$OUT/spx_${s}_$r.log" >> "$OUT/all.txt"
  done
done
step pqgpu_portable 150 env PQGPU_CPU_SIMD=off taskset -c "$CORE" ./slhdsa_cpu "$N" $names
awk -F'|' '/SLH-DSA/ {gsub(/ /, ""); print $2, "keygen portable", $3, $6; print $2, "sign portable", $4, $7;
  print $2, "verify portable", $5, $8}' "$OUT/pqgpu_portable.log" >> "$OUT/all.txt"
# The best of the rounds: pqgpu's median and best, the portable code's median, SPHINCS+'s average.
awk '{k = $1 " " $2; w = $3; key = k SUBSEP w
      if (!(key in med) || $4 + 0 < med[key]) med[key] = $4 + 0
      if (!(key in best) || $5 + 0 < best[key]) best[key] = $5 + 0
      if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
     END {
      print "| set | op | pqgpu median us | pqgpu best us | portable median us | SPHINCS+ AVX2 avg us | SPHINCS+ / pqgpu |"
      print "|---|---|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++) {
        k = order[i]; p = k SUBSEP "pqgpu"; q = k SUBSEP "spx"; o = k SUBSEP "portable"
        split(k, f, " ")
        printf "| %s | %s | %.0f | %.0f | %s | %s | %s |\n", f[1], f[2], med[p], best[p],
          (o in med) ? sprintf("%.0f", med[o]) : "-", (q in med) ? sprintf("%.0f", med[q]) : "-",
          (q in med) ? sprintf("%.2f", med[q] / med[p]) : "-"
      } }' "$OUT/all.txt" | tee "$OUT/table.md"
finish

#!/usr/bin/env bash
# Long fuzz runs on the GPU machine's CPU cores (no Rust there): every target of fuzz/ at once,
# the cores shared out so that the slow targets get more of them. About 3.5 minutes.
#
#  1. Calibration (CAL_SECS=4): each target alone on one core, from the shipped seed corpus;
#     its executions per second there.
#  2. Cores: as many targets as the cores allow get enough to reach FUZZ_RUNS with a 10 %
#     margin (smallest need first); the others one core each; cores left over, max-min.
#  3. FUZZ_SECS (default 200) of fuzzing: per target, one libFuzzer process per core on a shared
#     corpus (-reload), each capped at its share of FUZZ_RUNS (default 10,000,000) and at the
#     time left; a process that stops on a finding is restarted for the time left (the finding
#     stays in artifacts/).
#  4. One line per target: executions (calibration included), findings, corpus, coverage.
#
# Staging (scripts/device/stage.sh fuzz) builds the targets (scripts/fuzz.sh, release,
# libFuzzer linked in; without comparison tracing unless FUZZ_TRACE_CMP=1: 2.4-3.8x the
# executions) and stages bin/ (debug info stripped, symbols kept: a panic's backtrace still
# names the functions; reproduce a finding here with the unstripped binary), lib/ (the
# libstdc++ and libgcc_s the binaries link, used through LD_LIBRARY_PATH only where the GPU
# machine has none that works; glibc >= 2.34, or 2.36 with the shipped libstdc++) and seeds/
# (fuzz/corpus/* as it is here).
# Results in $OUT: summary.txt, artifacts/<target>/ (findings), logs/<target>/, corpora.tar.gz
# (the grown corpora: `tar xzf corpora.tar.gz -C fuzz/` here to keep them).
# Env (GPU machine): FUZZ_SECS=200  FUZZ_RUNS=10000000  CAL_SECS=4  FUZZ_CPUS=$(nproc)
#   FUZZ_TARGETS="a b" (default: every binary in bin/)
# The SLH-DSA targets (slhdsa_pk, slhdsa_sk, slhdsa_sig) run one full verification or key
# generation per input, hundreds of executions per second per core: run them on their own,
# FUZZ_TARGETS="slhdsa_pk slhdsa_sk slhdsa_sig" FUZZ_SECS=560, seeded with earlier corpora,
# several such runs for FUZZ_RUNS each (the summary counts one run).
set -uo pipefail

if [ "${1:-}" = stage ]; then
  set -e
  D=$2
  # Long runs: no comparison tracing unless FUZZ_TRACE_CMP=1 (see scripts/fuzz.sh).
  cmp=${FUZZ_TRACE_CMP:-0}
  FUZZ_TRACE_CMP=$cmp FUZZ_BUILD_ONLY=1 scripts/fuzz.sh
  tdir=fuzz/target; [ "$cmp" = 0 ] && tdir=fuzz/target-nocmp
  host=$(rustc -vV | sed -n 's/^host: //p')
  mapfile -t targets < <(sed -n 's/^name = "\(.*\)"/\1/p' fuzz/Cargo.toml | grep -vx pqgpu-fuzz)
  mkdir -p "$D/bin" "$D/lib" "$D/seeds"
  for t in "${targets[@]}"; do
    strip --strip-debug -o "$D/bin/$t" "$tdir/$host/release/$t"
    if [ -d "fuzz/corpus/$t" ]; then cp -r "fuzz/corpus/$t" "$D/seeds/"; fi
  done
  # The C++ runtime of libFuzzer (the only libraries besides glibc's that the binaries link).
  for l in $(ldd "$D/bin/${targets[0]}" | awk '/libstdc\+\+|libgcc_s/ {print $3}'); do cp -L "$l" "$D/lib/"; done
  echo "fuzz: ${#targets[@]} targets, comparison tracing $([ "$cmp" = 0 ] && echo off || echo on)"
  exit 0
fi

cd "$(dirname "$0")"
: "${OUT:?set OUT to the folder for results}"
export RUST_BACKTRACE=1
secs=${FUZZ_SECS:-200} cap=${FUZZ_RUNS:-10000000} cal=${CAL_SECS:-4} ncpu=${FUZZ_CPUS:-$(nproc)}
read -r -a targets <<< "${FUZZ_TARGETS:-$(ls bin | tr '\n' ' ')}"
# The host's own libstdc++ first (ours needs glibc 2.36); the shipped one where that fails.
if ! ./bin/"${targets[0]}" -help=1 > /dev/null 2>&1; then
  export LD_LIBRARY_PATH=$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "== using the shipped libstdc++ (lib/)"
fi
[ -f build.txt ] && echo "== $(cat build.txt)" | tee "$OUT/build.txt"
echo "== fuzz: ${#targets[@]} targets, $ncpu cores, ${cal} s calibration + ${secs} s, cap $cap executions per target"
for t in "${targets[@]}"; do
  mkdir -p "$OUT/corpus/$t" "$OUT/artifacts/$t" "$OUT/logs/$t"
  if [ -d "seeds/$t" ]; then cp seeds/"$t"/* "$OUT/corpus/$t/" 2>/dev/null; fi
  if ! ./bin/"$t" -help=1 > /dev/null 2>&1; then
    echo "$t does not start here:"; ldd "bin/$t"; exit 1
  fi
done

# fuzz TARGET LOGTAG SECONDS RUNS: one libFuzzer process (returns its exit status).
fuzz() {
  timeout $(($3 + 40)) ./bin/"$1" "$OUT/corpus/$1" -artifact_prefix="$OUT/artifacts/$1/" \
    -max_len=12000 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -max_total_time="$3" -runs="$4" > "$OUT/logs/$1/$2.log" 2>&1
}
execs() { cat "$@" 2>/dev/null | awk '/^stat::number_of_executed_units/ {s += $2} END {print s + 0}'; }

# 1. Calibration.
for t in "${targets[@]}"; do fuzz "$t" cal "$cal" "$cap" & done
wait
rates=$(for t in "${targets[@]}"; do echo "$t $(execs "$OUT/logs/$t/cal.log")"; done)

# 2. Cores. Each target needs ceil(left / (rate * T * 0.9)) cores to reach FUZZ_RUNS (a 10 %
#    margin: the rate on one core of a full machine is below the calibration's); targets are
#    served in order of need, smallest first, while cores last, so that as many as possible
#    reach the cap; a target that cannot gets one core, and any cores left over go to the
#    target with the fewest projected executions (max-min).
alloc=$(echo "$rates" | awk -v n="$ncpu" -v T="$secs" -v cal="$cal" -v cap="$cap" '
  { t[NR] = $1; done[NR] = $2; r[NR] = ($2 > 0 ? $2 : 1) / cal; m = NR
    need[NR] = int((cap - $2) / (r[NR] * T * 0.9)) + 1; if (need[NR] < 1) need[NR] = 1 }
  END {
    left = n
    for (i = 1; i <= m; i++) { k[i] = 0; order[i] = i }
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
      if (need[order[j]] < need[order[i]]) { x = order[i]; order[i] = order[j]; order[j] = x }
    # Cores for the targets that cannot reach the cap: one each, set aside first.
    for (a = 1; a <= m; a++) {
      i = order[a]; rest = 0
      for (b = a + 1; b <= m; b++) rest++
      if (need[i] + rest <= left) { k[i] = need[i]; left -= need[i] } else { k[i] = 1; left-- }
    }
    for (; left > 0; left--) {
      best = 0
      for (i = 1; i <= m; i++) {
        p = done[i] + r[i] * 0.9 * k[i] * T
        if (best == 0 || p < bp) { best = i; bp = p }
      }
      k[best]++
    }
    for (i = 1; i <= m; i++) printf "%s %d %d %.0f\n", t[i], k[i], done[i], r[i]
  }')
echo "$alloc" | awk '{printf "   %-14s %2d cores (calibration: %d executions, %d/s on one core)\n", $1, $2, $3, $4}'

# 3. The run. worker TARGET INDEX RUNS END: restarts after a finding until END or RUNS.
worker() {
  local t=$1 j=$2 runs=$3 end=$4 i=0 left rc
  while [ "$i" -lt 20 ] && [ "$runs" -gt 0 ]; do
    left=$((end - $(date +%s)))
    [ "$left" -ge 2 ] || break
    fuzz "$t" "w$j.$i" "$left" "$runs"; rc=$?
    runs=$((runs - $(execs "$OUT/logs/$t/w$j.$i.log")))
    i=$((i + 1))
    [ "$rc" -eq 0 ] && break
  done
}
start=$(date +%s)
end=$((start + secs))
while read -r t k done _; do
  per=$(( (cap - done + k - 1) / k ))
  for j in $(seq 1 "$k"); do worker "$t" "$j" "$per" "$end" & done
done <<< "$alloc"
wait
echo "== fuzzing took $(( $(date +%s) - start )) s"

# 4. Summary.
{
  printf "%-14s %12s %6s %9s %7s %14s  %s\n" target executions cores findings corpus "cov / ft" "cap $cap"
  while read -r t k _; do
    n=$(execs "$OUT"/logs/"$t"/*.log)
    found=$(find "$OUT/artifacts/$t" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
    corp=$(find "$OUT/corpus/$t" -type f | wc -l)
    cov=$(cat "$OUT"/logs/"$t"/*.log | grep -E '^#[0-9]+' | sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/\1 \2/p' |
      sort -n -k1,1 -k2,2 | tail -1 | awk '{print $1 " / " $2}')
    [ "$n" -ge "$cap" ] && ok=reached || ok="below ($n)"
    printf "%-14s %12d %6d %9d %7d %14s  %s\n" "$t" "$n" "$k" "$found" "$corp" "$cov" "$ok"
  done <<< "$alloc"
} | tee "$OUT/summary.txt"
grep -h -A3 -E "panicked|ERROR: libFuzzer|SUMMARY" "$OUT"/logs/*/*.log 2>/dev/null | head -40
tar czf "$OUT/corpora.tar.gz" -C "$OUT" corpus && rm -rf "$OUT/corpus"

#!/bin/bash
# Builds the fuzz targets (fuzz/, its own workspace) with libFuzzer on the stable toolchain
# (libfuzzer-sys plus the coverage flags cargo-fuzz would pass, without a sanitizer), then
# runs each for SECS seconds (default 5: the CI smoke) or RUNS executions. Corpora live in
# fuzz/corpus/<target> (not committed); findings land in fuzz/artifacts/<target>.
#
# Usage: scripts/fuzz.sh [target ...]      (default: every target)
# Env:   SECS=5  RUNS=<n> (overrides SECS)  FUZZ_BUILD_ONLY=1 (build, run nothing:
#        scripts/device/stage.sh fuzz)  FUZZ_TRACE_CMP=0 (no comparison tracing: edge
#        coverage only, built into fuzz/target-nocmp; the deep targets run 2.4-3.8x faster
#        (measured, same coverage reached), which is what the 10 M long runs use)
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
cmp=-Cllvm-args=-sanitizer-coverage-trace-compares tdir=fuzz/target
if [ "${FUZZ_TRACE_CMP:-1}" = 0 ]; then cmp= tdir=fuzz/target-nocmp; fi
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
 $cmp --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# --target keeps RUSTFLAGS off build scripts and proc macros (as cargo-fuzz does).
cargo build --release --manifest-path fuzz/Cargo.toml --target "$host" --target-dir "$tdir" --bins
bin=$tdir/$host/release
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0
targets=("$@")
# Default: every [[bin]] of fuzz/Cargo.toml.
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(sed -n 's/^name = "\(.*\)"/\1/p' fuzz/Cargo.toml | grep -vx pqgpu-fuzz)
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  if [ -n "${RUNS:-}" ]; then limit=(-runs="$RUNS"); else limit=(-max_total_time="${SECS:-5}"); fi
  echo "== fuzz $t ${limit[*]}"
  "$bin/$t" "fuzz/corpus/$t" -artifact_prefix="fuzz/artifacts/$t/" -max_len=12000 \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${limit[@]}" 2>&1 |
    grep -E "^(#[0-9]+\s+(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+== ERROR|SUMMARY|thread .* panicked|artifact)" || true
  # libFuzzer exits non-zero on a finding; PIPESTATUS keeps that through the filter.
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "fuzz $t: finding (exit $rc), see fuzz/artifacts/$t" >&2; exit 1; }
done

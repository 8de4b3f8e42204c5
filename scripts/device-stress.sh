#!/bin/bash
# Issue #17's long stress run on the GPU machine, in one call of about 2.5 minutes:
# tests/stress.rs with the shared context on the GPU backend for STRESS_SECS (default 120)
# seconds. 8 threads mix single sign / verify / keygen calls, ML-DSA-44 sign and verify
# batches, CTRU-Prime-761 decapsulation batches, registered memory unregistered under a
# running job, contexts freed under their batch, jobs freed out of order, and a fork whose
# child signs a batch on a fresh context; every result is compared with one-at-a-time calls on
# a CPU context. It prints the operations per kind, the results checked and the mismatches
# (the test fails on any mismatch, hang or wrong status).
#
# Build host:  scripts/device-stress.sh pack
#   (cargo build --release --test stress; the test binary, stripped, and this script as run.sh
#   into .device/stress/)
# GPU machine: bash .device/stress/run.sh   (carry .device/stress; the log lands in $OUT)
# Env (GPU machine): STRESS_SECS=120
set -uo pipefail

if [ "${1:-}" = pack ]; then
  set -e
  cd "$(dirname "$0")/.."
  cargo build --release --test stress
  bin=$(ls -t target/release/deps/stress-* | grep -v '\.d$' | head -1)
  D=.device/stress
  rm -rf "$D" && mkdir -p "$D"
  strip -o "$D/stress" "$bin"
  cp scripts/device-stress.sh "$D/run.sh"
  echo "packed $bin into $D ($(du -sm "$D" | cut -f1) MiB)"
  exit 0
fi

cd "$(dirname "$0")"
: "${OUT:?set OUT to the folder for results}"
export PQGPU_CACHE_DIR=/tmp/pqc RUST_BACKTRACE=1
secs=${STRESS_SECS:-120}
echo "=== stress_gpu ($secs s)"
s=$(date +%s)
PQGPU_STRESS_BACKEND=gpu PQGPU_STRESS_SECS=$secs timeout $((secs + 90)) ./stress --nocapture \
  > "$OUT/stress_gpu.log" 2>&1
echo "rc=$? (stress_gpu, $(( $(date +%s) - s )) s; 124 = hung)"
grep -E "stress:|test result|panicked|FAILED|SKIPPED" "$OUT/stress_gpu.log" | head -20

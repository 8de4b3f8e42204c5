# Sourced by every run of scripts/device/ on the GPU machine. A run is staged by
# scripts/device/stage.sh into target/device/RUN: its binaries, the vectors it reads, this file
# and the run itself as run.sh, which sources this file from its own folder.
#
# It moves into the run's folder, sets $OUT (where the device tool collects results; default
# /tmp/pqgpu-device), the kernel cache and the vector folders, and defines:
#   step NAME SECONDS COMMAND...   COMMAND under a timeout, its output in $OUT/NAME.log; prints
#                                  the exit status and time, then the log's lines matching $SHOW
#   machine                        one line each for the GPUs, the CPU and the staged build
#   finish                         the count of failed steps; nonzero status if any failed
set -u
cd "$(dirname "${BASH_SOURCE[1]}")" || exit 1
OUT=${OUT:-/tmp/pqgpu-device}
mkdir -p "$OUT"
export PQGPU_CACHE_DIR=${PQGPU_CACHE_DIR:-/tmp/pqgpu-kernels} RUST_BACKTRACE=1
if [ -d vectors ]; then export PQGPU_VECTORS_DIR=$PWD/vectors; fi
if [ -d kat ]; then export PQGPU_DILITHIUM_KAT_DIR=$PWD/kat; fi
SHOW=${SHOW:-"test result|SKIPPED|panicked|FAILED|CHECK FAILED|ERROR SUMMARY|RACECHECK SUMMARY"}
fails=0
run_start=$(date +%s)

step() {
  local name=$1 t=$2 s rc
  shift 2
  echo "=== $name"
  s=$(date +%s)
  timeout "$t" "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  echo "rc=$rc ($name, $(( $(date +%s) - s )) s$([ "$rc" = 124 ] && echo ', timed out'))"
  [ "$rc" = 0 ] || fails=$((fails + 1))
  grep -E "$SHOW" "$OUT/$name.log" | head -"${SHOW_LINES:-40}"
  return 0
}

machine() {
  echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | tr '\n' ';')"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores," \
    "$(grep -o -w 'avx2\|avx512f\|avx512vl' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  if [ -f build.txt ]; then echo "build: $(cat build.txt)"; fi
}

finish() {
  echo "=== $fails failed steps, $(( $(date +%s) - run_start )) s; logs in $OUT"
  [ "$fails" = 0 ]
}

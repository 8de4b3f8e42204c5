#!/bin/bash
# The GPU test suites on the GPU machine, after the move of their helpers into tests/common and
# with pqg_context_describe: every GPU test binary at reduced case counts, each with a timeout.
# On the H200 no test may print SKIPPED: the summary at the end counts them (and fails on any).
# About 2-3 minutes, most of it the first NVRTC compile of the kernel modules.
#
# Build host:  cargo build --release --tests && scripts/device-tests.sh pack <checkout that `run` ships>
#              (copies the newest test binaries, stripped, the vectors, the round-3 KAT files and
#              this script into <checkout>/.device/tests)
# GPU machine: bash .device/tests/run.sh   (carry .device/tests; logs land in $OUT)
set -u
TESTS="context gpu_mldsa gpu_ctru gpu_hostmem gpu_dilithium c_abi_batches dilithium_ffi robustness robustness_gpu_fail"

if [ "${1:-}" = pack ]; then
    root=$(cd "$(dirname "$0")/.." && pwd)
    D=${2:?usage: $0 pack <checkout>}/.device/tests
    mkdir -p "$D/vectors"
    for t in $TESTS; do
        bin=$(ls -t "$root"/target/release/deps/"$t"-* | grep -v '\.d$' | head -1)
        cp "$bin" "$D/$t" && strip "$D/$t"
    done
    cp -r "$root/../shared/vectors/acvp" "$root/../shared/vectors/ctru-prime" "$D/vectors/"
    cp "$root"/tests/data/dilithium-r3/*.rsp.gz "$D/"
    cp "$0" "$D/run.sh"
    du -sh "$D"
    exit 0
fi

cd "$(dirname "$0")"
export PQGPU_CACHE_DIR=/tmp/pqc PQGPU_VECTORS_DIR=$PWD/vectors PQGPU_DILITHIUM_KAT_DIR=$PWD
export RUST_BACKTRACE=1 PQGPU_GPU_CASES=${PQGPU_GPU_CASES:-2000}
OUT=${OUT:-/tmp/device-tests}; mkdir -p "$OUT"
fails=0
step() { local name=$1 t=$2; shift 2; echo "=== $name"; local s=$(date +%s)
  timeout "$t" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "rc=$rc ($name, $(( $(date +%s) - s )) s)"; [ $rc = 0 ] || fails=$((fails + 1))
  grep -E "test result|SKIPPED|panicked|FAILED|identical|match|backend=|gpu=|gpu_devices=" "$OUT/$name.log" | head -30; }
# The first GPU step compiles (and caches) the PTX of the kernel modules.
step context 120 ./context --nocapture
step gpu_mldsa 150 ./gpu_mldsa --nocapture
step gpu_ctru 90 ./gpu_ctru --nocapture
step gpu_hostmem 60 env PQGPU_GPU_CASES=1000 ./gpu_hostmem --nocapture
step gpu_dilithium 120 ./gpu_dilithium --nocapture
step c_abi_batches 120 ./c_abi_batches --nocapture gpu_batches
step dilithium_ffi 60 ./dilithium_ffi --nocapture mixed_batch_gpu
step robustness 60 ./robustness --nocapture gpu_batches
step robustness_gpu_fail 60 ./robustness_gpu_fail --nocapture
skips=$(cat "$OUT"/*.log | grep -c "SKIPPED")
echo "=== summary: $fails failed steps, $skips SKIPPED lines (both must be 0 on a GPU machine)"
[ "$fails" = 0 ] && [ "$skips" = 0 ]

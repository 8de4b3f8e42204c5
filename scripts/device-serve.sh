#!/bin/bash
# Serving (issue #13) on the GPU machine, in one call, 3.75 minutes at most (the first step
# includes the kernel compile): the serving tests at 100,000 items (GPU results bit-identical
# to the CPU reference; failures injected mid-batch into real GPU batches), a crossover sweep for PQG_OPT_CPU_CROSSOVER's default, and the
# serving benchmark (blocking threads T = 1..1024, async N = 1K..64K, ML-DSA-44/65/87 sign and
# verify, CTRU-Prime-761 encaps and decaps, batch 65,536 with a key handle vs per-item keys).
#
# Build host:  cargo build --release --tests --bin pqgpu-bench
#              D=<checkout that `run` ships>/.device/serve; mkdir -p $D
#              cp target/release/deps/serve-<hash> $D/serve_tests; cp target/release/pqgpu-bench $D/
#              strip $D/*; cp scripts/device-serve.sh $D/run.sh
# GPU machine: bash .device/serve/run.sh   (carry .device/serve; logs land in $OUT)
cd "$(dirname "$0")"
export PQGPU_CACHE_DIR=/tmp/pqc RUST_BACKTRACE=1
step() { local name=$1 t=$2; shift 2; echo "=== $name"; local s=$(date +%s)
  timeout $t "$@" > $OUT/$name.log 2>&1; echo "rc=$? ($name, $(( $(date +%s) - s )) s)"
  grep -E "test result|SKIPPED|panicked|FAILED|gpu (blocking|async)|^(blocking|async|batch)" $OUT/$name.log | head -80; }
# Correctness first: 100,000 items per check on the GPU, then failures mid-batch.
step tests 90 env PQGPU_SERVE_CASES=100000 ./serve_tests --nocapture --test-threads=1 gpu_
# ML-DSA-44 at the headline points (the issue's targets), then the full grid in short figures.
step headline 30 ./pqgpu-bench --serve --backend gpu --alg mldsa --serve-seconds 0.8 --serve-threads 1,1024 --serve-outstanding 65536 --gpu-batch 65536
# Crossover: light loads with PQG_OPT_CPU_CROSSOVER 0 (always the GPU) and 8 (the default).
for c in 0 8; do
  step crossover$c 15 ./pqgpu-bench --serve --backend gpu --alg mldsa --serve-crossover $c --serve-seconds 0.3 --serve-threads 1,4,16 --serve-outstanding 16 --gpu-batch 0
done
step grid 75 ./pqgpu-bench --serve --backend gpu --serve-seconds 0.6 --serve-threads 1,16,256,1024 --serve-outstanding 1024,4096,16384,65536 --gpu-batch 65536

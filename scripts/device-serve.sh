#!/bin/bash
# Serving (issue #13) on the GPU machine, in one call, about 3 minutes (the first step
# includes the kernel compile):
#   tests     the serving tests at 100,000 items (GPU results bit-identical to the CPU
#             reference; failures injected mid-batch into real GPU batches)
#   tune      the grid that chooses the defaults of PQG_OPT_MAX_WAIT_US, PQG_OPT_MAX_BATCH and
#             PQG_OPT_MAX_IN_FLIGHT: ML-DSA-44 sign, 1,024 blocking threads and 4K / 64K async
#             outstanding, over wait x in-flight x batch (18 option sets)
#   crossover light loads (1..64 threads, 16 / 64 outstanding) for PQG_OPT_CPU_CROSSOVER's
#             default: 0 (always the GPU) .. 128
#   keygen    coalesced single-call key generation (ML-DSA-44, CTRU-Prime-761), 1..1,024 threads
#   grid      the issue's figures with the defaults (ML-DSA-44/65/87 sign and verify,
#             CTRU-Prime-761 encaps and decaps, T = 1..1024, N = 1K..64K, batch 65,536 with a
#             key handle vs per-item keys)
# Every row ends with its option set in [brackets]; pick, per column, the set with the best
# ops/s whose p99 stays <= 5 ms (scripts/device-serve.sh's grep lines are what the lead reads).
#
# Build host:  cargo build --release --test serve --bin pqgpu-bench
#              D=<checkout that `run` ships>/.device/serve; mkdir -p $D
#              cp $(ls -t target/release/deps/serve-* | grep -v '\.d$' | head -1) $D/serve_tests
#              cp target/release/pqgpu-bench $D/; strip $D/serve_tests $D/pqgpu-bench
#              cp scripts/device-serve.sh $D/run.sh
# GPU machine: bash .device/serve/run.sh   (carry .device/serve; logs land in $OUT)
cd "$(dirname "$0")"
export PQGPU_CACHE_DIR=/tmp/pqc RUST_BACKTRACE=1
step() { local name=$1 t=$2; shift 2; echo "=== $name"; local s=$(date +%s)
  timeout $t "$@" > $OUT/$name.log 2>&1; echo "rc=$? ($name, $(( $(date +%s) - s )) s)"
  grep -E "test result|SKIPPED|panicked|FAILED|CHECK|gpu (blocking|async)|^(blocking|async|batch)" $OUT/$name.log | head -150; }
B="./pqgpu-bench --serve --backend gpu --gpu-batch 0"
# Correctness first: 100,000 items per check on the GPU, then failures mid-batch.
step tests 75 env PQGPU_SERVE_CASES=100000 ./serve_tests --nocapture --test-threads=1 gpu_
# Defaults: max wait x batches in flight x max batch.
sets=""
for w in 250 1000 2000; do for f in 2 4 8; do for b in 16384 65536; do
  sets="$sets,wait=$w+inflight=$f+batch=$b"; done; done; done
step tune 50 $B --serve-algs ML-DSA-44 --serve-ops sign --serve-seconds 0.3 \
  --serve-threads 1024 --serve-outstanding 4096,65536 --serve-config "${sets#,}"
# Crossover: light loads, sign and verify.
step crossover 25 $B --serve-algs ML-DSA-44 --serve-ops sign,verify --serve-seconds 0.2 \
  --serve-threads 1,4,16,64 --serve-outstanding 16,64 \
  --serve-config crossover=0,crossover=2,crossover=8,crossover=32,crossover=128
# Single-call key generation, coalesced.
step keygen 15 $B --serve-algs ML-DSA-44,CTRU-Prime-761 --serve-ops keygen --serve-seconds 0.4 \
  --serve-threads 1,16,256,1024
# The issue's grid with the defaults.
step grid 60 ./pqgpu-bench --serve --backend gpu --serve-algs ML-DSA-44,ML-DSA-65,ML-DSA-87,CTRU-Prime-761 \
  --serve-seconds 0.4 --serve-threads 1,16,256,1024 --serve-outstanding 1024,4096,16384,65536 --gpu-batch 65536

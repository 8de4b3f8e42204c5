#!/usr/bin/env bash
# Serving figures on the GPU machine (one request at a time through the C ABI, one key handle):
#   figures   the rows of BENCHMARKS.md's serving table: ML-DSA-44 signing from 1,024 blocking
#             threads and at 4K-8K asynchronous items outstanding (16 driver threads), and
#             verification, CTRU-Prime-761 encapsulation and decapsulation at 65,536
#             outstanding into registered memory, with 4 and 8 batches in flight
#   tune      the grid behind the defaults of PQG_OPT_MAX_WAIT_US, PQG_OPT_MAX_BATCH and
#             PQG_OPT_MAX_IN_FLIGHT (ML-DSA-44 signing, 1,024 threads and 4K / 64K outstanding,
#             wait x in-flight x batch: 18 option sets)
#   crossover light loads (1..64 threads, 16 / 64 outstanding) for PQG_OPT_CPU_CROSSOVER's
#             default: 0 (always the GPU) .. 128
#   keygen    coalesced single-call key generation (ML-DSA-44, CTRU-Prime-761), 1..1,024 threads
#   grid      ML-DSA-44/65/87 sign and verify, CTRU-Prime-761 encaps and decaps with the
#             defaults, T = 1..1024, N = 1K..64K, and a batch of 65,536 with a key handle
#             against per-item keys
# Every row ends with its option set in [brackets]. Every signature is verified and every
# shared secret compared by the benchmark. About 3-4 minutes. (The serving tests run in
# gpu-tests.)
# stage: bins="pqgpu-bench"
source "$(dirname "$0")/common.sh"
SHOW="panicked|CHECK|^(blocking|async|batch)"
SHOW_LINES=150
machine
B=(./pqgpu-bench --serve --backend gpu --gpu-batch 0)
step figures_sign 40 "${B[@]}" --serve-drivers 16 --alg mldsa --serve-algs ML-DSA-44 --serve-ops sign \
  --serve-threads 1024 --serve-outstanding 4096,6144,8192 --serve-seconds 0.5
step figures_kem 60 "${B[@]}" --serve-drivers 16 --serve-algs ML-DSA-44,CTRU-Prime-761 \
  --serve-ops verify,encaps,decaps --serve-threads 0 --serve-outstanding 65536 --host-memory registered \
  --serve-seconds 1 --serve-config inflight=4,inflight=8
sets=""
for w in 250 1000 2000; do for f in 2 4 8; do for b in 16384 65536; do
  sets="$sets,wait=$w+inflight=$f+batch=$b"; done; done; done
step tune 50 "${B[@]}" --serve-algs ML-DSA-44 --serve-ops sign --serve-seconds 0.3 \
  --serve-threads 1024 --serve-outstanding 4096,65536 --serve-config "${sets#,}"
step crossover 25 "${B[@]}" --serve-algs ML-DSA-44 --serve-ops sign,verify --serve-seconds 0.2 \
  --serve-threads 1,4,16,64 --serve-outstanding 16,64 \
  --serve-config crossover=0,crossover=2,crossover=8,crossover=32,crossover=128
step keygen 15 "${B[@]}" --serve-algs ML-DSA-44,CTRU-Prime-761 --serve-ops keygen --serve-seconds 0.4 \
  --serve-threads 1,16,256,1024
step grid 60 ./pqgpu-bench --serve --backend gpu --serve-algs ML-DSA-44,ML-DSA-65,ML-DSA-87,CTRU-Prime-761 \
  --serve-seconds 0.4 --serve-threads 1,16,256,1024 --serve-outstanding 1024,4096,16384,65536 --gpu-batch 65536
finish

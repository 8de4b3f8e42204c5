#!/bin/bash
# The OpenSSL provider on the GPU machine, in one call: OpenSSL 3.5's `openssl` program (built
# here by scripts/openssl35.sh) with pqgpu.so, GPU backend. Correctness first (keys and
# signatures against OpenSSL's default provider on the same machine), then `openssl speed`.
# About 3-4 minutes (check up to 2 min: every openssl run starts a CUDA context, speed runs 30 + 30 + 9 + 6 + 30 s plus GPU start-up).
#
# Build host (this machine has Rust and network; the GPU machine has neither):
#   bash scripts/openssl35.sh                       # once; prints the program's path
#   cargo build --release -p pqgpu_provider
#   D=<checkout that `run` ships>/.device/provider; mkdir -p $D
#   cp ~/.cache/pqgpu/openssl-3.5/bin/openssl $D/openssl
#   cp target/release/libpqgpu_provider.so $D/pqgpu.so
#   strip $D/openssl $D/pqgpu.so; cp scripts/device-provider.sh $D/run.sh
# GPU machine: bash .device/provider/run.sh   (carry .device/provider; logs land in $OUT)
#
# `openssl speed` divides by CPU user time unless given -elapsed; pqgpu's work runs on helper
# threads, so every rate here is measured with -elapsed (wall clock).
cd "$(dirname "$0")"
D=$PWD
export PQGPU_CACHE_DIR=/tmp/pqc RUST_BACKTRACE=1
OUT=${OUT:-/tmp/provider-out}; mkdir -p "$OUT"; W=$(mktemp -d); cd "$W"
cnf() { # $1 = backend (gpu|cpu), $2 = default_properties line or empty
  cat <<CNF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
alg_section = alg_sect
[alg_sect]
$2
[provider_sect]
default = default_sect
pqgpu = pqgpu_sect
[default_sect]
activate = 1
[pqgpu_sect]
module = $D/pqgpu.so
activate = 1
backend = $1
trace = $W/trace-$1.log
[req]
distinguished_name = dn
[dn]
CNF
}
B=${PQGPU_PROVIDER_BACKEND:-gpu}   # cpu: a rehearsal on a machine without a GPU
cnf $B "default_properties = ?provider=pqgpu" > gpu.cnf
cnf $B "" > gpu-speed.cnf            # speed selects with -propquery; no trace there
sed -i '/^trace =/d' gpu-speed.cnf
printf 'openssl_conf = openssl_init\n[openssl_init]\nproviders = p\n[p]\ndefault = d\n[d]\nactivate = 1\n[req]\ndistinguished_name = dn\n[dn]\n' > def.cnf
O=$D/openssl
step() { local name=$1 t=$2; shift 2; echo "=== $name"; local s=$(date +%s)
  timeout "$t" "$@" > "$OUT/$name.log" 2>&1; local rc=$?; echo "rc=$rc ($name, $(( $(date +%s) - s )) s)"
  grep -E "ML-DSA-44 0|ops in|^OK|operations on|MISMATCH|rror" "$OUT/$name.log" | head -20; }

# 1. Correctness on the GPU: seeded keys equal the default provider's; deterministic signatures
#    equal; hedged signatures verify under the default provider; a wrong context fails.
check() {
  set -e
  S=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
  head -c 3000 /dev/urandom > msg
  for a in ML-DSA-44 ML-DSA-65 ML-DSA-87; do
    OPENSSL_CONF=gpu.cnf $O genpkey -algorithm $a -pkeyopt hexseed:$S -out k.gpu
    OPENSSL_CONF=def.cnf $O genpkey -algorithm $a -pkeyopt hexseed:$S -out k.def
    cmp k.gpu k.def || { echo "MISMATCH key $a"; exit 1; }
    for who in gpu def; do
      OPENSSL_CONF=$who.cnf $O pkeyutl -sign -rawin -inkey k.def -in msg -pkeyopt deterministic:1 \
        -pkeyopt context-string:device -out d.$who
    done
    cmp d.gpu d.def || { echo "MISMATCH signature $a"; exit 1; }
    for i in 1 2 3; do   # each openssl run starts its own CUDA context: keep the count small
      OPENSSL_CONF=gpu.cnf $O pkeyutl -sign -rawin -inkey k.def -in msg -pkeyopt context-string:device -out h
      OPENSSL_CONF=def.cnf $O pkeyutl -verify -rawin -inkey k.def -in msg -pkeyopt context-string:device -sigfile h >/dev/null
      ! OPENSSL_CONF=gpu.cnf $O pkeyutl -verify -rawin -inkey k.def -in msg -pkeyopt context-string:other -sigfile h >/dev/null 2>&1
    done
    echo "OK $a"
  done
  echo "operations on the GPU: $(grep -c " Gpu " "$W/trace-$B.log"), elsewhere: $(grep -vc " Gpu " "$W/trace-$B.log")"
}
export -f check; export O W B
step check 120 bash -c check
cp "$W/trace-$B.log" "$OUT/trace-check.log" 2>/dev/null

# 2. Throughput: pqgpu async (one process, then 4), pqgpu blocking, the default provider.
export OPENSSL_CONF=gpu-speed.cnf
step speed_pqgpu_async1000 50 $O speed -seconds 10 -elapsed -async_jobs 960 -propquery provider=pqgpu ML-DSA-44
step speed_pqgpu_async1000_multi4 50 $O speed -seconds 10 -elapsed -multi 4 -async_jobs 960 -propquery provider=pqgpu ML-DSA-44
step speed_pqgpu_blocking 20 $O speed -seconds 3 -elapsed -propquery provider=pqgpu ML-DSA-44
# Batch sizes the coalescer formed (a short run with the trace on: one line per item).
export OPENSSL_CONF=gpu.cnf; : > "$W/trace-$B.log"
step speed_pqgpu_async1000_traced 20 $O speed -seconds 2 -elapsed -async_jobs 960 -propquery provider=pqgpu ML-DSA-44
grep '^batch ' "$W/trace-$B.log" | awk '{n=substr($5,3); c[$2]++; s[$2]+=n; if(n>m[$2])m[$2]=n}
  END{for(k in c) printf "%s: %d batches, mean %.1f, largest %d\n", k, c[k], s[k]/c[k], m[k]}' | tee "$OUT/batches.txt"
export OPENSSL_CONF=gpu-speed.cnf
step speed_default_multi_nproc 50 $O speed -seconds 10 -elapsed -multi "$(nproc)" -propquery provider=default ML-DSA-44
rm -rf "$W"

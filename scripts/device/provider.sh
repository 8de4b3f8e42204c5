#!/usr/bin/env bash
# The OpenSSL provider on the GPU machine: OpenSSL 3.5's `openssl` program with pqgpu.so, GPU
# backend. Correctness first (ML-DSA keys and signatures against OpenSSL's default provider;
# CTRU-Prime KEM on the GPU against the CPU backend), then `openssl speed -async_jobs 1000`
# (one process and -multi 4) next to the default provider on the same cores, and TLS 1.3
# handshakes per second (s_time -new against s_server, with and without -async; then
# tls_bench, a multi-threaded test server whose many handshakes in flight let pqgpu batch the
# server's signatures). About 3 minutes; SECS=10 (seconds per speed figure) adds about 40 s.
# Several processes on one GPU need NVIDIA's MPS (`nvidia-cuda-mps-control -d`) for -multi 4.
#
# Staging builds OpenSSL 3.5 (scripts/openssl35.sh, cached), the provider and tls_bench (C,
# linked statically against that OpenSSL: the GPU machine has no OpenSSL 3.5 headers or
# libraries; without tls_bench the run skips its rows).
# Rehearsal without a GPU: PQGPU_PROVIDER_BACKEND=cpu SECS=1 bash target/device/provider/run.sh
# Only the tls_bench rows (about 30 s, e.g. to try other core splits or thread counts):
#   TLSB_ONLY=1 TLS_SERVER_CPUS=0-1 TLS_CLIENT_CPUS=2-15 bash target/device/provider/run.sh
#
# `openssl speed` divides by CPU user time unless given -elapsed; pqgpu's work runs on helper
# threads, so every rate here is measured with -elapsed (wall clock).
if [ "${1:-}" = stage ]; then
  set -e
  D=$2
  openssl=$(bash scripts/openssl35.sh | tail -1)
  cargo build --release -p pqgpu_provider
  cp "$openssl" "$D/openssl"
  cp "${CARGO_TARGET_DIR:-target}/release/libpqgpu_provider.so" "$D/pqgpu.so"
  bash provider/bench/build.sh "$D/tls_bench"
  strip "$D/openssl" "$D/pqgpu.so" "$D/tls_bench"
  exit 0
fi
cd "$(dirname "$0")"
D=$PWD
export PQGPU_CACHE_DIR=/tmp/pqc RUST_BACKTRACE=1
OUT=${OUT:-/tmp/provider-out}; mkdir -p "$OUT"; W=$(mktemp -d); cd "$W"
SECS=${SECS:-3}                      # seconds per speed operation (speed runs keygen, sign, verify)
JOBS=${JOBS:-1000}
TLS_SECS=${TLS_SECS:-3}              # seconds per s_time client and per tls_bench run
# tls_bench: server and client pinned to separate cores (the client needs more: each of its
# handshakes costs more CPU than the server's once pqgpu signs), thread counts.
NCPU=$(nproc); NS=$(( NCPU / 4 > 0 ? NCPU / 4 : 1 ))
TLS_SERVER_CPUS=${TLS_SERVER_CPUS:-0-$(( NS - 1 ))}
TLS_CLIENT_CPUS=${TLS_CLIENT_CPUS:-$(( NCPU > NS ? NS : 0 ))-$(( NCPU - 1 ))}
TLS_SERVER_THREADS=${TLS_SERVER_THREADS:-512}
TLS_CLIENT_THREADS=${TLS_CLIENT_THREADS:-256}
cnf() { # $1 = backend (gpu|cpu), $2 = default_properties line or empty, $3 = extra pqgpu lines
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
$3
[req]
distinguished_name = dn
[dn]
CNF
}
B=${PQGPU_PROVIDER_BACKEND:-gpu}   # cpu: a rehearsal on a machine without a GPU
# The check: every single operation on the GPU (no CPU crossover), traced.
cnf $B "default_properties = ?provider=pqgpu" "trace = $W/trace-check.log
cpu_crossover = 0" > gpu.cnf
cnf cpu "default_properties = ?provider=pqgpu" "" > cpu.cnf
cnf $B "" "" > gpu-speed.cnf        # speed selects with -propquery; no trace there
cnf $B "" "trace = $W/trace-speed.log" > gpu-traced.cnf
cnf $B "default_properties = ?provider=pqgpu" "" > gpu-tls.cnf
printf 'openssl_conf = openssl_init\n[openssl_init]\nproviders = p\n[p]\ndefault = d\n[d]\nactivate = 1\n[req]\ndistinguished_name = dn\n[dn]\n' > def.cnf
O=$D/openssl
step() { local name=$1 t=$2; shift 2; echo "=== $name"; local s=$(date +%s)
  timeout "$t" "$@" > "$OUT/$name.log" 2>&1; local rc=$?; echo "rc=$rc ($name, $(( $(date +%s) - s )) s)"
  grep -E "^ +ML-DSA|^ +CTRU|^OK|operations on|MISMATCH|FD_SETSIZE|connections|rror" "$OUT/$name.log" | head -20; }

OPENSSL_CONF=def.cnf $O req -x509 -newkey ML-DSA-44 -nodes -keyout tls.key -subj /CN=localhost -days 2 -out tls.crt >/dev/null 2>&1
if [ -z "$TLSB_ONLY" ]; then
# 1. Correctness on the GPU.
#    ML-DSA: seeded keys equal the default provider's; deterministic signatures equal; a hedged
#    signature verifies under the default provider; a wrong context fails.
#    CTRU-Prime: seeded keys, ikme encapsulations and decapsulations on the GPU equal the CPU
#    backend's; a fresh encap/decap round trip agrees; a flipped ciphertext gives another key.
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
    OPENSSL_CONF=gpu.cnf $O pkeyutl -sign -rawin -inkey k.def -in msg -pkeyopt context-string:device -out h
    OPENSSL_CONF=def.cnf $O pkeyutl -verify -rawin -inkey k.def -in msg -pkeyopt context-string:device -sigfile h >/dev/null
    OPENSSL_CONF=gpu.cnf $O pkeyutl -verify -rawin -inkey k.def -in msg -pkeyopt context-string:device -sigfile h >/dev/null
    if OPENSSL_CONF=gpu.cnf $O pkeyutl -verify -rawin -inkey k.def -in msg -pkeyopt context-string:other -sigfile h >/dev/null 2>&1; then
      echo "MISMATCH $a: wrong context verified"; exit 1
    fi
    echo "OK $a"
  done
  S64=$S$S E=1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100
  for a in CTRU-Prime-653 CTRU-Prime-761 CTRU-Prime-1277; do
    for who in gpu cpu; do
      OPENSSL_CONF=$who.cnf $O genpkey -algorithm $a -pkeyopt hexseed:$S64 -out c.$who
      OPENSSL_CONF=$who.cnf $O pkey -in c.$who -pubout -out p.$who
      OPENSSL_CONF=$who.cnf $O pkeyutl -encap -pubin -inkey p.$who -pkeyopt hexikme:$E -out ct.$who -secret ss.$who
      OPENSSL_CONF=$who.cnf $O pkeyutl -decap -inkey c.$who -in ct.$who -secret sd.$who
    done
    for f in c p ct ss sd; do cmp $f.gpu $f.cpu || { echo "MISMATCH $a $f"; exit 1; }; done
    cmp ss.gpu sd.gpu || { echo "MISMATCH $a decap"; exit 1; }
    OPENSSL_CONF=gpu.cnf $O pkeyutl -encap -pubin -inkey p.gpu -out ct2 -secret ss2
    OPENSSL_CONF=gpu.cnf $O pkeyutl -decap -inkey c.gpu -in ct2 -secret sd2
    cmp ss2 sd2 || { echo "MISMATCH $a fresh"; exit 1; }
    python3 -c "import sys;b=bytearray(open('ct2','rb').read());b[7]^=1;open('bad','wb').write(b)" 2>/dev/null ||
      { cp ct2 bad; printf '\x55' | dd of=bad bs=1 seek=7 conv=notrunc 2>/dev/null; }
    OPENSSL_CONF=gpu.cnf $O pkeyutl -decap -inkey c.gpu -in bad -secret sbad
    if cmp -s sbad sd2; then echo "MISMATCH $a tampered ct accepted"; exit 1; fi
    echo "OK $a"
  done
  echo "operations on the GPU backend: $(grep -c " Gpu " "$W/trace-check.log"), elsewhere: $(grep -vc " Gpu " "$W/trace-check.log")"
}
export -f check; export O W B
step check 100 bash -c check
cp "$W/trace-check.log" "$OUT/" 2>/dev/null

# 2. Throughput (the issue's targets: >= 300 k signs/s in one process, >= 1 M/s with -multi 4).
export OPENSSL_CONF=gpu-speed.cnf
step speed_pqgpu_async$JOBS $((SECS * 3 + 25)) $O speed -seconds $SECS -elapsed -async_jobs $JOBS -propquery provider=pqgpu ML-DSA-44
step speed_pqgpu_async${JOBS}_multi4 $((SECS * 3 + 30)) $O speed -seconds $SECS -elapsed -multi 4 -async_jobs $JOBS -propquery provider=pqgpu ML-DSA-44
# CTRU-Prime (pqgpu only: OpenSSL has no CTRU-Prime), encaps/decaps batched from async jobs.
step speed_pqgpu_ctru761_async$JOBS $((SECS * 3 + 30)) $O speed -seconds $SECS -elapsed -async_jobs $JOBS -propquery provider=pqgpu CTRU-Prime-761
# The default provider on every core of this host (its best case here).
step speed_default_multi_nproc $((SECS * 3 + 15)) $O speed -seconds $SECS -elapsed -multi "$(nproc)" -propquery provider=default ML-DSA-44
# Batch sizes the provider formed (a short run with the trace on).
export OPENSSL_CONF=gpu-traced.cnf
step speed_pqgpu_async${JOBS}_traced 25 $O speed -seconds 1 -elapsed -async_jobs $JOBS -propquery provider=pqgpu ML-DSA-44
grep '^batch ' "$W/trace-speed.log" | awk '{n=substr($5,3)+0; c[$2]++; s[$2]+=n; if(n>m[$2])m[$2]=n}
  END{for(k in c) printf "%s: %d submissions, mean %.1f, largest %d\n", k, c[k], s[k]/c[k], m[k]}' | tee "$OUT/batches.txt"

# 3. TLS 1.3 handshakes per second with an ML-DSA-44 certificate (server signs; clients use
#    the default provider). openssl s_server serves one connection at a time, so its
#    handshakes cannot be batched: these are the single-server rates, pqgpu vs default.
#    Not -www: with -async, s_server's -www and -rev loops sleep 1 s whenever a job pauses.
tls() { # $1 name, $2 server config, $3 port, $4 extra server flag
  rm -f stdin.fifo; mkfifo stdin.fifo; sleep 30 > stdin.fifo &   # an open, silent stdin
  local slp=$!
  OPENSSL_CONF=$2 $O s_server -accept $3 -cert tls.crt -key tls.key -tls1_3 -quiet $4 < stdin.fifo > "$OUT/$1-server.log" 2>&1 &
  local spid=$! cpids=() i; sleep 1
  for i in 1 2 3 4; do
    OPENSSL_CONF=def.cnf timeout 20 $O s_time -connect 127.0.0.1:$3 -new -tls1_3 -time $TLS_SECS > "$OUT/$1-client$i.log" 2>&1 &
    cpids+=($!)
  done
  wait "${cpids[@]}"
  kill $spid $slp 2>/dev/null; wait $spid $slp 2>/dev/null
  local total=$(cat "$OUT"/$1-client*.log | awk '/connections in [0-9.]+ real/{n+=$1} END{print n+0}')
  local bad=$(cat "$OUT"/$1-client*.log | grep -ci 'error\|fail')
  echo "$1: $total handshakes in $TLS_SECS s ($(( total / TLS_SECS ))/s), 4 clients; error lines: $bad"
}
# The whole host: 8 servers (ports base..base+7), 2 clients each.
tls8() { # $1 name, $2 server config, $3 base port, $4 extra server flag
  rm -f stdin8.fifo; mkfifo stdin8.fifo; sleep 30 > stdin8.fifo &
  local slp=$! spids=() cpids=() i j
  for i in 0 1 2 3 4 5 6 7; do
    OPENSSL_CONF=$2 $O s_server -accept $(( $3 + i )) -cert tls.crt -key tls.key -tls1_3 -quiet $4 < stdin8.fifo > "$OUT/$1-server$i.log" 2>&1 &
    spids+=($!)
  done
  sleep 1
  for i in 0 1 2 3 4 5 6 7; do for j in 1 2; do
    OPENSSL_CONF=def.cnf timeout 20 $O s_time -connect 127.0.0.1:$(( $3 + i )) -new -tls1_3 -time $TLS_SECS > "$OUT/$1-client$i-$j.log" 2>&1 &
    cpids+=($!)
  done; done
  wait "${cpids[@]}"
  kill "${spids[@]}" $slp 2>/dev/null; wait "${spids[@]}" $slp 2>/dev/null
  local total=$(cat "$OUT"/$1-client*.log | awk '/connections in [0-9.]+ real/{n+=$1} END{print n+0}')
  local bad=$(cat "$OUT"/$1-client*.log | grep -ci 'error\|fail')
  echo "$1: $total handshakes in $TLS_SECS s ($(( total / TLS_SECS ))/s), 8 servers x 2 clients; error lines: $bad"
}
echo "=== tls"
tls tls_default def.cnf 44331 "" | tee -a "$OUT/tls.txt"
tls tls_pqgpu gpu-tls.cnf 44332 "" | tee -a "$OUT/tls.txt"
tls tls_pqgpu_async gpu-tls.cnf 44333 -async | tee -a "$OUT/tls.txt"
tls8 tls8_default def.cnf 44340 "" | tee -a "$OUT/tls.txt"
tls8 tls8_pqgpu_async gpu-tls.cnf 44350 -async | tee -a "$OUT/tls.txt"
fi  # TLSB_ONLY

# 4. The same handshakes through tls_bench (provider/bench/tls_bench.c): a server of
#    TLS_SERVER_THREADS threads on one listening socket, each handshake in blocking calls (or
#    SSL_MODE_ASYNC jobs woken by descriptors, _async, or by callbacks, _async_cb), so up to
#    TLS_CLIENT_THREADS server signatures are pending at once and pqgpu's dispatcher batches
#    them. Same program, same cores and the same client (default provider, verifying
#    the certificate) for both servers; the rate is the client's over TLS_SECS after 1 s of
#    warm-up. Each side prints its CPU use: a client near 100% means the client was the limit.
cnf $B "default_properties = ?provider=pqgpu" "trace = $W/trace-tls.log" > gpu-tls-traced.cnf
# Where the speed comes from: pqgpu's CPU backend alone (its vector code in the server's
# threads), and the GPU backend with no CPU crossover (every signature batch on the GPU).
cnf cpu "default_properties = ?provider=pqgpu" "" > cpu-tls.cnf
cnf $B "default_properties = ?provider=pqgpu" "cpu_crossover = 0" > gpu-tls-only.cnf
SPIN=() CPIN=()   # taskset execs the program: $! is the server's own pid
if command -v taskset >/dev/null; then SPIN=(taskset -c "$TLS_SERVER_CPUS") CPIN=(taskset -c "$TLS_CLIENT_CPUS"); fi
bench() { # $1 name, $2 server config, $3 seconds, $4 extra server flag
  OPENSSL_CONF=$2 "${SPIN[@]}" "$D/tls_bench" server --cert tls.crt --key tls.key \
    --port 0 --threads "$TLS_SERVER_THREADS" $4 > "$OUT/$1-server.log" 2>&1 &
  local spid=$! port= i
  for i in $(seq 100); do
    port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$OUT/$1-server.log" | cut -d: -f2)
    [ -n "$port" ] && break; kill -0 $spid 2>/dev/null || break; sleep 0.2
  done
  [ -n "$port" ] || { echo "$1: server did not start"; cat "$OUT/$1-server.log"; kill $spid 2>/dev/null; return; }
  OPENSSL_CONF=def.cnf timeout $(( $3 + 40 )) "${CPIN[@]}" "$D/tls_bench" client \
    --port "$port" --ca tls.crt --host localhost --threads "$TLS_CLIENT_THREADS" --warmup 1 \
    --seconds "$3" > "$OUT/$1-client.log" 2>&1
  local crc=$?
  kill -TERM $spid 2>/dev/null; wait $spid; local src=$?
  local rate=$(grep -o 'handshakes/s [0-9.]*' "$OUT/$1-client.log" | cut -d' ' -f2)
  echo "$1: ${rate:-none} handshakes/s; client: $(grep -o 'failed [0-9]*' "$OUT/$1-client.log") (rc $crc), $(grep -o 'client CPU .*' "$OUT/$1-client.log")"
  echo "  server: $(grep -o 'handshakes [0-9]* ok.*' "$OUT/$1-server.log") (rc $src)"
  grep -h 'failed \(handshake\|connect\|read\|write\|SSL\|cert\)' "$OUT/$1-server.log" "$OUT/$1-client.log" | head -3
}
if [ -x "$D/tls_bench" ]; then
  [ ${#SPIN[@]} -gt 0 ] || echo "(no taskset: server and client share every CPU)"
  echo "=== tls_bench: server on CPUs $TLS_SERVER_CPUS ($TLS_SERVER_THREADS threads), client on CPUs $TLS_CLIENT_CPUS ($TLS_CLIENT_THREADS threads), $(nproc) CPUs"
  { bench tlsb_default def.cnf "$TLS_SECS" ""
    bench tlsb_pqgpu gpu-tls.cnf "$TLS_SECS" ""
    bench tlsb_pqgpu_async gpu-tls.cnf "$TLS_SECS" --async
    bench tlsb_pqgpu_async_cb gpu-tls.cnf "$TLS_SECS" --async-callback
    bench tlsb_pqgpu_cpu_backend cpu-tls.cnf "$TLS_SECS" ""
    bench tlsb_pqgpu_gpu_only gpu-tls-only.cnf "$TLS_SECS" ""
    grep -h 'first handshake' "$OUT/tlsb_default-client.log"
    d=$(grep -o 'handshakes/s [0-9.]*' "$OUT/tlsb_default-client.log" | cut -d' ' -f2)
    for m in pqgpu pqgpu_async pqgpu_async_cb pqgpu_cpu_backend pqgpu_gpu_only; do
      p=$(grep -o 'handshakes/s [0-9.]*' "$OUT/tlsb_$m-client.log" | cut -d' ' -f2)
      awk -v p="${p:-0}" -v d="${d:-0}" -v m=$m 'BEGIN{printf "tls_bench %s / default: %.2fx\n", m, (d > 0 ? p / d : 0)}'
    done
    # The batches the dispatcher formed from the server's signatures (a short traced run).
    bench tlsb_pqgpu_traced gpu-tls-traced.cnf 1 ""
    # Batches under the CPU crossover (by default the server's cores) run on the CPU.
    x=$("${SPIN[@]}" nproc)
    grep '^batch sign' "$W/trace-tls.log" | awk -v x="$x" '{n=substr($5,3)+0; c++; s+=n; if(n>m)m=n; if(n<x)u+=n}
      END{if(c) printf "tls_bench traced: %d sign batches, mean %.1f, largest %d; %d of %d signatures in batches under the crossover (%d: run on the CPU)\n", c, s/c, m, u, s, x}'
  } | tee -a "$OUT/tls.txt"
else
  echo "=== tls_bench: $D/tls_bench not built (see the header): skipped"
fi
rm -rf "$W"

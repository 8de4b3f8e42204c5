#!/bin/bash
# What pqgpu's key exchange buys a TLS 1.3 server: the server's CPU time per full handshake
# (ML-DSA-44 certificate, group X25519MLKEM768, then MLKEM768) with three server
# configurations on the same cores, each under a client load that keeps the server busy:
#   default   OpenSSL's default provider only;
#   sig       pqgpu preferred with `ml_kem = no` (pqgpu signs, OpenSSL does the key exchange);
#   sig+kex   pqgpu preferred (pqgpu signs and encapsulates).
# The server runs on few cores (TLS_SERVER_CPUS, default 0-1) and the client on the rest; the
# client uses pqgpu's CPU backend (cheaper handshakes than OpenSSL's own code), so it can keep
# the server saturated: the server line's "% of N CPUs" near 100 says it was. tls_bench's
# server prints "ms CPU per handshake" (its process's CPU time over handshakes completed).
#
# Staging (scripts/device/stage.sh provider-tls-kex) builds OpenSSL 3.5 (scripts/openssl35.sh,
# cached), the provider and tls_bench into target/device/provider-tls-kex.
# GPU machine: bash target/device/provider-tls-kex/run.sh   (logs and kex.txt land in $OUT)
# Rehearsal without a GPU: BACKEND=cpu TLS_SECS=2 bash target/device/provider-tls-kex/run.sh
# Success: kex.txt has, per group, three "server ... ms CPU per handshake" lines with no
# failed handshake, and the server's CPU share near 100% of its cores.
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
export PQGPU_CACHE_DIR=/tmp/pqc
OUT=${OUT:-/tmp/kex-out}; mkdir -p "$OUT"; W=$(mktemp -d); cd "$W"
B=${BACKEND:-gpu}
TLS_SECS=${TLS_SECS:-5}
NCPU=$(nproc)
TLS_SERVER_CPUS=${TLS_SERVER_CPUS:-0-1}
TLS_CLIENT_CPUS=${TLS_CLIENT_CPUS:-2-$(( NCPU - 1 ))}
TLS_SERVER_THREADS=${TLS_SERVER_THREADS:-512}
TLS_CLIENT_THREADS=${TLS_CLIENT_THREADS:-512}
cnf() { # $1 = backend, $2 = extra pqgpu lines; pqgpu preferred
  printf 'openssl_conf = openssl_init\n[openssl_init]\nproviders = p\nalg_section = a\n[a]\ndefault_properties = ?provider=pqgpu\n[p]\ndefault = d\npqgpu = q\n[d]\nactivate = 1\n[q]\nmodule = %s/pqgpu.so\nactivate = 1\nbackend = %s\n%s\n[req]\ndistinguished_name = dn\n[dn]\n' "$D" "$1" "$2"
}
printf 'openssl_conf = openssl_init\n[openssl_init]\nproviders = p\n[p]\ndefault = d\n[d]\nactivate = 1\n[req]\ndistinguished_name = dn\n[dn]\n' > default.cnf
cnf "$B" "ml_kem = no" > sig.cnf
cnf "$B" "" > sigkex.cnf
cnf cpu "" > client.cnf
OPENSSL_CONF=default.cnf "$D/openssl" req -x509 -newkey ML-DSA-44 -nodes -keyout tls.key \
  -subj /CN=localhost -days 2 -out tls.crt >/dev/null 2>&1 || { echo "no certificate"; exit 1; }
SPIN=(taskset -c "$TLS_SERVER_CPUS") CPIN=(taskset -c "$TLS_CLIENT_CPUS")
run() { # $1 name, $2 server config, $3 group
  OPENSSL_CONF=$2 "${SPIN[@]}" "$D/tls_bench" server --cert tls.crt --key tls.key --port 0 \
    --threads "$TLS_SERVER_THREADS" --groups "$3" > "$OUT/$1-server.log" 2>&1 &
  local spid=$! port= i
  for i in $(seq 100); do
    # The whole number (up to the comma), never a line still being written.
    port=$(grep -so 'listening on 127.0.0.1:[0-9]*,' "$OUT/$1-server.log" | cut -d: -f2 | tr -d ,)
    [ -n "$port" ] && break; kill -0 $spid 2>/dev/null || break; sleep 0.2
  done
  [ -n "$port" ] || { echo "$1: server did not start"; cat "$OUT/$1-server.log"; kill $spid; return; }
  OPENSSL_CONF=client.cnf timeout $(( TLS_SECS + 40 )) "${CPIN[@]}" "$D/tls_bench" client \
    --port "$port" --ca tls.crt --host localhost --threads "$TLS_CLIENT_THREADS" --warmup 1 \
    --seconds "$TLS_SECS" --groups "$3" > "$OUT/$1-client.log" 2>&1
  kill -TERM $spid 2>/dev/null; wait $spid
  printf '%-28s %s handshakes/s; server: %s\n' "$1" \
    "$(grep -o 'handshakes/s [0-9.]*' "$OUT/$1-client.log" | cut -d' ' -f2)" \
    "$(grep -o 'handshakes [0-9]* ok.*' "$OUT/$1-server.log")"
  grep -h 'first handshake' "$OUT/$1-client.log"
}
{ echo "=== server on CPUs $TLS_SERVER_CPUS ($TLS_SERVER_THREADS threads, backend $B), client on CPUs $TLS_CLIENT_CPUS ($TLS_CLIENT_THREADS threads, pqgpu CPU backend), ${TLS_SECS} s each"
  for g in X25519MLKEM768 MLKEM768; do
    for c in default sig sigkex; do run "$g-$c" "$c.cnf" "$g"; done
  done
} | tee "$OUT/kex.txt"
rm -rf "$W"

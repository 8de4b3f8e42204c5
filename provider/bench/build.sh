#!/usr/bin/env bash
# Builds tls_bench (the multi-threaded TLS 1.3 test server and client, tls_bench.c), or another
# program of this folder (prefork.c, the pre-fork server), against the static OpenSSL 3.5 that
# scripts/openssl35.sh installs (headers and libssl.a/libcrypto.a in its cache).
# -Wl,--export-dynamic: pqgpu.so links no libcrypto and finds the core's ASYNC_* functions in
# the program when it loads. Usage: bash provider/bench/build.sh [OUTPUT [SOURCE.c]] (default
# ./tls_bench from tls_bench.c). Prints the program's path.
set -euo pipefail
cache="${PQGPU_OPENSSL_CACHE:-$HOME/.cache/pqgpu/openssl-3.5}"
out="${1:-tls_bench}"
src="${2:-tls_bench.c}"
for f in include/openssl/ssl.h lib/libssl.a lib/libcrypto.a; do
  [ -f "$cache/$f" ] || { echo "missing $cache/$f: run scripts/openssl35.sh" >&2; exit 1; }
done
"${CC:-cc}" -O2 -std=c11 -Wall -Wextra -I"$cache/include" "$(dirname "$0")/$src" \
  -o "$out" "$cache/lib/libssl.a" "$cache/lib/libcrypto.a" -Wl,--export-dynamic -lpthread -ldl
echo "$out"

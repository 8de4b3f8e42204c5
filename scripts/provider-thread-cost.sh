#!/usr/bin/env bash
# OpenSSL's own thread per signature under pqgpu.so: runs
#   openssl speed -mr -seconds S -elapsed -async_jobs JOBS -propquery provider=pqgpu ML-DSA-44
# with OpenSSL's main thread on MAIN_CPU and every other thread (pqgpu's dispatcher and helpers)
# on OTHER_CPUS, and counts the main thread alone (`perf stat --per-thread`) over WINDOW
# seconds in the middle of the signing phase (which starts after the S-second keygen phase).
# Prints signatures/s (whole phase), the main thread's task-clock per signature, and its
# select/read/getrandom calls per signature.
#
# Usage: scripts/provider-thread-cost.sh [MODULE.so]   (default: the release build)
# Env: BACKEND (cpu|gpu|auto, default cpu), S (4), JOBS (1000), MAIN_CPU (1), OTHER_CPUS (0),
#      OPENSSL (the OpenSSL 3.5 program, default scripts/openssl35.sh's cache), KEEP=1 keeps
#      the scratch directory. Needs perf and taskset; syscall counts need tracepoint access.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
so=${1:-${CARGO_TARGET_DIR:-$root/target}/release/libpqgpu_provider.so}
openssl=${OPENSSL:-${PQGPU_OPENSSL_CACHE:-$HOME/.cache/pqgpu/openssl-3.5}/bin/openssl}
S=${S:-4}; JOBS=${JOBS:-1000}; MAIN_CPU=${MAIN_CPU:-1}; OTHER_CPUS=${OTHER_CPUS:-0}
window=$(awk -v s="$S" 'BEGIN { w = s / 2; printf "%.2f", w }')
d=$(mktemp -d /tmp/pqgpu-thread-cost.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$d"' EXIT
cp "$so" "$d/pqgpu.so"
cat >"$d/pq.cnf" <<CNF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
default = default_sect
pqgpu = pqgpu_sect
[default_sect]
activate = 1
[pqgpu_sect]
module = $d/pqgpu.so
activate = 1
backend = ${BACKEND:-cpu}
CNF
OPENSSL_CONF=$d/pq.cnf taskset -c "$MAIN_CPU" "$openssl" speed -mr -seconds "$S" -elapsed \
  -async_jobs "$JOBS" -propquery provider=pqgpu ML-DSA-44 >"$d/out.txt" 2>&1 &
pid=$!
# The signing phase starts about S seconds in (after keygen); count from a quarter into it.
(sleep "$(awk -v s="$S" 'BEGIN { print s * 1.25 }')"
 perf stat --per-thread -e task-clock,syscalls:sys_enter_pselect6,syscalls:sys_enter_read,syscalls:sys_enter_getrandom \
   -p "$pid" -o "$d/stat.txt" -- sleep "$window" 2>/dev/null || true) &
# New threads inherit the main thread's CPU: move them as they appear.
while kill -0 "$pid" 2>/dev/null; do
  for t in /proc/"$pid"/task/*; do
    t=${t##*/}
    [ "$t" = "$pid" ] || taskset -pc "$OTHER_CPUS" "$t" >/dev/null 2>&1 || true
  done
  sleep 0.1
done
wait
line=$(grep '^+R19' "$d/out.txt") || { cat "$d/out.txt" >&2; exit 1; }
rate=$(echo "$line" | awk -F: '{ printf "%.1f", $2 / $4 }')
awk -v r="$rate" -v w="$window" -v main="openssl-$pid" '
  $1 == main && $3 == "msec" { v = $2; gsub(",", "", v); tc = v }
  $1 == main && $3 != "msec" { v = $2; gsub(",", "", v); sub("syscalls:sys_enter_", "", $3); n[$3] = v }
  END {
    printf "sign/s %.0f  OpenSSL main thread: %.2f us/sig", r, tc / (w * r) * 1000
    for (k in n) printf "  %s %.3f/sig", k, n[k] / (w * r)
    printf "\n"
  }' "$d/stat.txt"

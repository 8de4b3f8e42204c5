#!/usr/bin/env bash
# The PKCS#11 module on the GPU machine: pkcs11/bench/p11_bench (256 threads, each its own
# session, signing with one ML-DSA-44 key) on the GPU backend and, for comparison, on the
# host's CPU backend; then the client suites (python-pkcs11, PyKCS11, storage) on the GPU
# backend where the staged Python packages import there.
#
# Here:   scripts/device/pkcs11.sh stage
#         (builds libpqgpu_pkcs11.so and p11_bench, copies them, the client tests and the
#         Python packages of $PQGPU_PKCS11_VENV into target/device/pkcs11, with this script
#         as run.sh)
# There:  bash target/device/pkcs11/run.sh          (carry target/device/pkcs11)
#         RUNS (default 3), SECS (default 10), THREADS (default 256) adjust the bench;
#         P11_OPTS adds serving options to its configuration ("max_in_flight = 8;...").
# Results: one "ML-DSA-44 C_SignInit+C_Sign threads=... rate=.../s p50=... p99=..." line per
# run in $OUT/bench-*.log; the suites' pytest summaries in $OUT/suite-*.log.
set -u

if [ "${1:-}" = stage ]; then
  set -e
  cd "$(dirname "$0")/../.."
  dest=target/device/pkcs11
  rm -rf "$dest"
  mkdir -p "$dest/tests"
  cargo build --release -p pqgpu_pkcs11
  cc -O2 -pthread -o "$dest/p11_bench" pkcs11/bench/p11_bench.c -ldl
  cp target/release/libpqgpu_pkcs11.so "$dest/"
  strip "$dest/libpqgpu_pkcs11.so" "$dest/p11_bench"
  cp pkcs11/tests/*.py "$dest/tests/"
  venv="${PQGPU_PKCS11_VENV:-$HOME/.cache/pqgpu/pkcs11-venv}"
  site=$(ls -d "$venv"/lib/python3*/site-packages 2>/dev/null | head -1)
  if [ -n "$site" ]; then
    mkdir -p "$dest/site-packages"
    # Everything the clients and pytest import (not pip or setuptools).
    for p in "$site"/*; do
      case "$(basename "$p")" in pip | pip-* | setuptools | setuptools-* | pkg_resources | _distutils_hack | distutils-precedence.pth) ;;
        *) cp -r "$p" "$dest/site-packages/" ;;
      esac
    done
    basename "$(dirname "$site")" > "$dest/site-packages/PYTHON"
  fi
  cp "$0" "$dest/run.sh"
  git rev-parse HEAD > "$dest/build.txt"
  du -sh "$dest"
  exit 0
fi

cd "$(dirname "$0")" || exit 1
OUT=${OUT:-/tmp/pqgpu-device}
mkdir -p "$OUT"
export PQGPU_CACHE_DIR=${PQGPU_CACHE_DIR:-/tmp/pqgpu-kernels}
RUNS=${RUNS:-3} SECS=${SECS:-10} THREADS=${THREADS:-256}
fails=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
echo "cpu: $(nproc) cores; build $(cat build.txt 2>/dev/null)"

bench() { # NAME BACKEND THREADS
  local d
  d=$(mktemp -d)
  printf 'token_dir = %s/token\nbackend = %s\n' "$d" "$2" > "$d/pkcs11.conf"
  # Serving options to try, e.g. P11_OPTS="max_in_flight = 8;max_wait_us = 200".
  [ -n "${P11_OPTS:-}" ] && tr ';' '\n' <<< "$P11_OPTS" >> "$d/pkcs11.conf"
  echo "=== $1"
  PQGPU_PKCS11_CONF=$d/pkcs11.conf timeout 300 ./p11_bench "$PWD/libpqgpu_pkcs11.so" "$3" "$SECS" \
    > "$OUT/$1.log" 2>&1
  local rc=$?
  echo "rc=$rc"; [ $rc = 0 ] || fails=$((fails + 1))
  grep -E "rate=|failed|unavailable" "$OUT/$1.log"
  rm -rf "$d"
}

for i in $(seq 1 "$RUNS"); do bench "bench-gpu-$THREADS-$i" gpu "$THREADS"; done
bench "bench-gpu-1024" gpu 1024
bench "bench-cpu-$THREADS" cpu "$THREADS"

# The client suites on the GPU backend, with the staged packages, where this Python takes them.
if [ -d site-packages ] && PYTHONPATH=$PWD/site-packages python3 -c "import pkcs11, PyKCS11, pytest" 2>/dev/null; then
  for t in test_python_pkcs11 test_pykcs11 test_store; do
    echo "=== suite-$t (backend ${SUITE_BACKEND:-gpu})"
    PYTHONPATH=$PWD/site-packages PQGPU_PKCS11_BACKEND=${SUITE_BACKEND:-gpu} PQGPU_PKCS11_MODULE=$PWD/libpqgpu_pkcs11.so \
      timeout 300 python3 -m pytest -q -rs -p no:cacheprovider "tests/$t.py" > "$OUT/suite-$t.log" 2>&1
    rc=$?
    echo "rc=$rc"; [ $rc = 0 ] || fails=$((fails + 1))
    tail -1 "$OUT/suite-$t.log"
  done
else
  echo "SKIPPED: client suites (the staged Python packages, built for $(cat site-packages/PYTHON 2>/dev/null || echo none), do not import here)"
fi
echo "failed steps: $fails"
[ "$fails" = 0 ]

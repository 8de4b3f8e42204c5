#!/bin/sh
# The C side's whole test: builds the release library, installs it into a temporary prefix
# (scripts/install.sh), builds the C examples against that installed copy with CMake
# (find_package(pqgpu)), runs them with CTest, each also under valgrind memcheck and built
# with AddressSanitizer + UndefinedBehaviorSanitizer (PQGPU_SANITIZE=OFF skips those), and
# compiles a pkg-config one-liner against the same prefix (shared and static).
#
# Usage: examples-c/run-ctest.sh
# Environment:
#   PQGPU_VECTORS_DIR  the shared/vectors directory (default: ../shared/vectors beside the repo)
#   CI=true            a missing valgrind is an error (locally it only skips those tests)
#   KEEP=1             keep the temporary prefix and build directory
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
vectors=${PQGPU_VECTORS_DIR:-$root/../shared/vectors}
vectors=$(cd "$vectors" && pwd) || { echo "error: vectors not found at $vectors" >&2; exit 1; }
start=$(date +%s)

for tool in cmake cc pkg-config; do
    command -v "$tool" >/dev/null || { echo "error: $tool not found (apt-get install -y cmake pkg-config)" >&2; exit 1; }
done
if command -v valgrind >/dev/null; then
    valgrind=ON
elif [ "${CI:-}" = "true" ]; then
    echo "error: valgrind not found; CI runs the examples under valgrind (apt-get install -y valgrind)" >&2
    exit 1
else
    echo "warning: valgrind not found: the valgrind tests are SKIPPED (install valgrind to run them)" >&2
    valgrind=OFF
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pqgpu-ctest.XXXXXX")
if [ "${KEEP:-}" = "1" ]; then
    echo "keeping $work"
else
    trap 'rm -rf "$work"' EXIT
fi
prefix=$work/prefix

echo "== cargo build --release"
(cd "$root" && cargo build --release --lib)

echo "== install into $prefix"
"$root/scripts/install.sh" "$prefix"

echo "== pkg-config smoke test"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
cat > "$work/smoke.c" <<'SMOKE'
#include <pqgpu.h>
#include <stdio.h>
int main(void) {
  printf("pkg-config smoke: pqgpu %s, ML-DSA-44 pk %lu bytes\n", pqg_version(),
         (unsigned long)pqg_public_key_len(PQG_ML_DSA_44));
  return pqg_public_key_len(PQG_ML_DSA_44) == PQG_ML_DSA_44_PUBLIC_KEY_BYTES ? 0 : 1;
}
SMOKE
# No -Wl,-rpath and no LD_LIBRARY_PATH here: the run path comes from pqgpu.pc, so the program
# finds libpqgpu.so.0 in the temporary prefix by itself.
# shellcheck disable=SC2046 # word splitting of the flags is intended
cc -std=c99 -Wall -Wextra -Werror "$work/smoke.c" -o "$work/smoke" $(pkg-config --cflags --libs pqgpu)
env -u LD_LIBRARY_PATH "$work/smoke"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror "$work/smoke.c" -o "$work/smoke-static" \
    $(pkg-config --cflags pqgpu) "$prefix/lib/libpqgpu.a" $(pkg-config --static --libs-only-l pqgpu | sed 's/-lpqgpu//')
"$work/smoke-static"

echo "== configure and build the examples against the installed copy"
cmake -S "$root/examples-c" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DPQGPU_VECTORS_DIR="$vectors" -DPQGPU_VALGRIND=$valgrind -DPQGPU_SANITIZE=${PQGPU_SANITIZE:-ON} \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$work/build" -j 2

echo "== ctest"
cd "$work/build"
ctest --output-on-failure -j 2

echo "run-ctest.sh: passed in $(( $(date +%s) - start )) s (valgrind tests: $valgrind)"

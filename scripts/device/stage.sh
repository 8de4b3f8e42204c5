#!/usr/bin/env bash
# Stages one run of scripts/device/ for the GPU machine (which has no Rust and no network):
# builds here what the run needs, copies the binaries (stripped), the vectors and round-3 KAT
# files it reads, common.sh and the run itself (as run.sh) into target/device/RUN, which git
# ignores, and says what to run there.
#
# Usage: scripts/device/stage.sh RUN        (RUN: gpu-tests, bench, serve, provider, cpu,
#                                            profile, stress or fuzz)
# What a run needs is its "# stage:" line: bins, tests and examples to build (with `features`),
# vectors (folders of the shared vectors), kat=1 (tests/data/dilithium-r3). A run with more
# to stage (OpenSSL, the fuzz targets, the C references) does it itself when called as
# `RUN.sh stage DIR`.
set -euo pipefail
cd "$(dirname "$0")/../.."
run=${1:?usage: scripts/device/stage.sh RUN (gpu-tests, bench, serve, provider, cpu, profile, stress, fuzz)}
src=scripts/device/$run.sh
[ -f "$src" ] || { echo "no such run: $src" >&2; exit 1; }
bins="" tests="" examples="" vectors="" kat=0 features=""
eval "$(sed -n 's/^# stage: //p' "$src")"
D=target/device/$run
rm -rf "$D"
mkdir -p "$D"
feat=()
[ -z "$features" ] || feat=(--features "$features")

# copy_built JSON-LINES NAMES: strips each named artifact that cargo reported into $D.
copy_built() {
  python3 -c '
import json, sys
want = set(sys.argv[1].split())
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in want:
        print(m["target"]["name"], m["executable"])' "$1" |
    while read -r name exe; do strip -o "$D/$name" "$exe"; done
}
if [ -n "$bins$examples" ]; then
  args=()
  for b in $bins; do args+=(--bin "$b"); done
  for e in $examples; do args+=(--example "$e"); done
  cargo build --release "${feat[@]}" "${args[@]}" --message-format=json-render-diagnostics |
    copy_built "$bins $examples"
fi
if [ -n "$tests" ]; then
  args=()
  for t in $tests; do args+=(--test "$t"); done
  cargo test --release --no-run "${feat[@]}" "${args[@]}" --message-format=json-render-diagnostics |
    copy_built "$tests"
fi
for name in $bins $examples $tests; do
  [ -x "$D/$name" ] || { echo "stage: $name was not built" >&2; exit 1; }
done
vdir=${PQGPU_VECTORS_DIR:-../shared/vectors}
if [ -n "$vectors" ]; then
  mkdir -p "$D/vectors"
  for v in $vectors; do cp -r "$vdir/$v" "$D/vectors/"; done
fi
if [ "$kat" = 1 ]; then
  mkdir -p "$D/kat"
  cp tests/data/dilithium-r3/*.rsp.gz "$D/kat/"
fi
if grep -q '^if \[ "${1:-}" = stage \]' "$src"; then bash "$src" stage "$D"; fi
cp "$src" "$D/run.sh"
cp scripts/device/common.sh "$D/"
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src kernels bench provider || echo ' with local changes')${features:+, features $features}" > "$D/build.txt"
size=$(du -sm "$D" | cut -f1)
echo "staged $D ($size MiB) from $(cat "$D/build.txt")"
if [ "$size" -gt 60 ]; then echo "stage: $D is over 60 MiB, too large to carry" >&2; exit 1; fi
echo "GPU machine: bash $D/run.sh   (carry $D; results land in \$OUT)"

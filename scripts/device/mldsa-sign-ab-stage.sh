#!/bin/bash
# Builds and stages the ML-DSA signing A/B run (scripts/device/mldsa-sign-ab.sh) on the build
# host: `bash scripts/device/mldsa-sign-ab-stage.sh OLD` from the checkout with the change,
# OLD being the revision to compare against (a commit or branch). OLD is built from a
# temporary worktree into this checkout's target directory (only pqgpu and the benchmark
# rebuild), its binaries copied out, then this checkout is built. Result: .device/sign-ab
# (stripped binaries, vectors, run.sh; about 25 MB), to carry to the GPU machine.
set -euo pipefail
OLD=${1:?usage: mldsa-sign-ab-stage.sh OLD-REVISION}
cd "$(git rev-parse --show-toplevel)"
ROOT=$PWD
D=$ROOT/.device/sign-ab
VEC=${PQGPU_VECTORS_DIR:-$ROOT/../shared/vectors}
rm -rf "$D"; mkdir -p "$D/old" "$D/new" "$D/vectors"
build() { # $1: source tree, $2: destination, $3: also the GPU test suites
  (cd "$1" && CARGO_TARGET_DIR=$ROOT/target cargo build --release -p pqgpu-bench \
    && CARGO_TARGET_DIR=$ROOT/target cargo build --release --example gpu_kernels)
  cp "$ROOT/target/release/pqgpu-bench" "$ROOT/target/release/examples/gpu_kernels" "$2/"
  if [ "$3" = tests ]; then
    for t in gpu_mldsa gpu_dilithium; do
      exe=$(cd "$1" && CARGO_TARGET_DIR=$ROOT/target cargo test --release --no-run --test $t \
        --message-format=json 2>/dev/null | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
      cp "$exe" "$2/$t"
    done
  fi
}
TMP=$(mktemp -d)
git worktree add --detach "$TMP/old" "$OLD"
build "$TMP/old" "$D/old" no
git worktree remove --force "$TMP/old"; rmdir "$TMP"
build "$ROOT" "$D/new" tests
strip "$D"/old/* "$D"/new/*
cp -r "$VEC/acvp" "$D/vectors/"
cp tests/data/dilithium-r3/*.rsp.gz "$D/"
cp scripts/device/mldsa-sign-ab.sh "$D/run.sh"
du -sh "$D"

#!/bin/bash
# Builds and stages the ML-DSA signing A/B run (scripts/device/mldsa-sign-ab.sh) on the build
# host: `bash scripts/device/mldsa-sign-ab-stage.sh OLD` from the checkout with the change,
# OLD being the revision to compare against (a commit or branch). Result: target/device/sign-ab
# (stripped binaries, ML-DSA vectors, run.sh; about 30 MB), to carry to the GPU machine.
#
# When OLD differs from HEAD only in the signing files (kernels/, src/gpu/mldsa/,
# src/gpu/config.rs, src/gpu/emu.rs; scripts, tools and documents aside) and HEAD deletes
# none of them, the old build is this checkout with OLD's versions of those put in place for
# one build and restored after (an incremental rebuild of pqgpu; files only HEAD has stay,
# unused by OLD's bench and example); otherwise OLD is built from a temporary worktree into
# this checkout's target directory (a full build of pqgpu).
set -euo pipefail
OLD=${1:?usage: mldsa-sign-ab-stage.sh OLD-REVISION}
cd "$(git rev-parse --show-toplevel)"
ROOT=$PWD
D=$ROOT/target/device/sign-ab
# The vectors beside the main checkout (../shared/vectors, as the tests find them), also
# from a linked worktree.
VEC=${PQGPU_VECTORS_DIR:-$(git rev-parse --path-format=absolute --git-common-dir)/../../shared/vectors}
rm -rf "$D"; mkdir -p "$D/old" "$D/new" "$D/vectors/acvp"
build() { # $1: source tree, $2: destination, $3: "tests" to take the GPU suites too
  (cd "$1" && CARGO_TARGET_DIR=$ROOT/target cargo build --release -p pqgpu-bench \
    && CARGO_TARGET_DIR=$ROOT/target cargo build --release -p pqgpu --example gpu_kernels)
  cp "$ROOT/target/release/pqgpu-bench" "$ROOT/target/release/examples/gpu_kernels" "$2/"
  if [ "$3" = tests ]; then
    for t in gpu_mldsa gpu_dilithium; do
      exe=$(cd "$1" && CARGO_TARGET_DIR=$ROOT/target cargo test --release -p pqgpu --no-run \
        --test $t --message-format=json | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
      cp "$exe" "$2/$t"
    done
  fi
}
SWAP=(kernels src/gpu/mldsa src/gpu/config.rs src/gpu/emu.rs)
if git diff --quiet "$OLD" HEAD -- . ':!kernels' ':!src/gpu/mldsa' ':!src/gpu/config.rs' ':!src/gpu/emu.rs' \
     ':!scripts' ':!tools' ':!*.md' \
   && git diff --quiet --diff-filter=D "$OLD" HEAD -- "${SWAP[@]}"; then
  git diff --quiet HEAD -- "${SWAP[@]}" || { echo "${SWAP[*]} have uncommitted changes: commit them first" >&2; exit 1; }
  trap 'git checkout -q HEAD -- "${SWAP[@]}"' EXIT
  git checkout -q "$OLD" -- "${SWAP[@]}"
  build "$ROOT" "$D/old" no
  git checkout -q HEAD -- "${SWAP[@]}"
  trap - EXIT
else
  TMP=$(mktemp -d)
  git worktree add --detach "$TMP/old" "$OLD"
  build "$TMP/old" "$D/old" no
  git worktree remove --force "$TMP/old"; rmdir "$TMP"
fi
build "$ROOT" "$D/new" tests
strip "$D"/old/* "$D"/new/*
cp -r "$VEC"/acvp/ML-DSA-* "$VEC/acvp/v1.1.0.35-hotfix" "$D/vectors/acvp/"
cp tests/data/dilithium-r3/*.rsp.gz "$D/"
cp scripts/device/mldsa-sign-ab.sh "$D/run.sh"
du -sh "$D"

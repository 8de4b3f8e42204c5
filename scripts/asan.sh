#!/bin/bash
# Rust-side AddressSanitizer (with LeakSanitizer, on by default with it on Linux): the C-ABI,
# robustness and stress tests on the CPU backend, with the library and the tests instrumented
# (the standard library is not: no -Zbuild-std). A memory error or a leak fails the test.
#
# -Zsanitizer is unstable: it uses nightly when installed, else the stable compiler with
# RUSTC_BOOTSTRAP=1 (stable's standard library ships the same ASan runtime), else it skips with
# the reason. Its own target dir (target/asan), thin LTO off (build time), line tables on.
#
# Usage: scripts/asan.sh [extra cargo test args]     (PQGPU_ASAN=0 in scripts/test.sh skips it)
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
has_asan_rt() { ls "$(rustc "$@" --print sysroot)/lib/rustlib/$host/lib/" 2>/dev/null | grep -q 'rt\.asan\.a$'; }
if rustup toolchain list 2>/dev/null | grep -q '^nightly' && has_asan_rt +nightly; then
  tc=(+nightly) how=nightly
elif has_asan_rt; then
  tc=() how="stable $(rustc -V | cut -d' ' -f2) with RUSTC_BOOTSTRAP=1"
  export RUSTC_BOOTSTRAP=1
else
  echo "SKIPPED: asan: no nightly toolchain and no ASan runtime in the stable toolchain's std"
  exit 0
fi
echo "asan: $how"
export RUSTFLAGS="-Zsanitizer=address" RUSTDOCFLAGS="-Zsanitizer=address"
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_DEBUG=line-tables-only
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export PQGPU_BACKEND=cpu
# --target keeps the sanitizer off build scripts and proc macros.
cargo "${tc[@]}" test --release --target "$host" --target-dir target/asan \
  --test ffi --test c_abi_batches --test dilithium_ffi --test robustness --test stress "$@"

#!/usr/bin/env bash
# pqgpu's one test command: formatting and clippy (warnings are errors), every Rust test (ACVP
# and CTRU-Prime vectors, differential, negative, FFI, header) and the C examples under CTest,
# also under valgrind.
# GPU tests skip with a printed reason where no GPU is usable.
# Needs: a Rust toolchain, a C and a C++ compiler (the C++ one runs the kernels' per-thread code
# on the CPU), cmake, valgrind and pkg-config (installed with apt-get when missing and running
# as root). Vectors: $PQGPU_VECTORS_DIR or ../shared/vectors.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for tool in cmake valgrind pkg-config cc c++; do command -v "$tool" >/dev/null || need+=("$tool"); done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq cmake valgrind pkg-config gcc g++ >/dev/null
  else
    echo "missing tools: ${need[*]} (install cmake, valgrind, pkg-config and C and C++ compilers)" >&2
    exit 1
  fi
fi

# Style and lints first: they fail before the long legs. Clippy runs in the release profile the
# tests use, so the build scripts (cudarc's, the header's) build and run once for both.
cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy
echo "== cargo fmt --all --check"
cargo fmt --all --check
echo "== cargo clippy --release --workspace --all-targets -- -D warnings"
cargo clippy --release --workspace --all-targets -- -D warnings

# NVIDIA's runtime compiler (from PyPI) lets the kernels' compile tests run without a GPU:
# every kernel of every set compiled for sm_90. Without it they skip, saying so.
if nvrtc_lib=$(bash scripts/nvrtc.sh | tail -1) && [ -n "$nvrtc_lib" ]; then
  export LD_LIBRARY_PATH="$nvrtc_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  echo "warning: libnvrtc could not be fetched: the kernels' compile tests will skip" >&2
fi

echo "== cargo test --release"
# --show-output: the GPU tests print why they skip where no GPU is usable.
cargo test --release --all-targets -- --show-output

echo "== OpenSSL 3.5 for the provider tests: program, headers, static libraries (built once per machine, cached)"
PQGPU_OPENSSL=$(bash scripts/openssl35.sh | tail -1)
export PQGPU_OPENSSL
echo "== cargo test -p pqgpu_provider (pqgpu.so under the openssl program and under tls_bench)"
cargo test --release -p pqgpu_provider -- --show-output

echo "== PKCS#11 module (pkcs11/tests/run.sh: python-pkcs11, PyKCS11, OpenSSL 3.5 against libpqgpu_pkcs11.so)"
bash pkcs11/tests/run.sh

# The same ML-DSA, CTRU-Prime and SLH-DSA vectors on the portable CPU code (the run above used
# the vector paths where the CPU has them; tests/cpu_simd.rs compares both in one process).
echo "== ACVP, CTRU-Prime and differential tests again with PQGPU_CPU_SIMD=off"
PQGPU_CPU_SIMD=off cargo test --release --test acvp --test ctru_vectors --test mldsa_differential \
  --test slhdsa_acvp --test slhdsa_differential

echo "== constant time of the CPU kernels under valgrind memcheck"
scripts/ct-memcheck.sh

# Fuzz smoke: every target of fuzz/ for a few seconds (libFuzzer on stable; see FUZZING.md).
# Its instrumented build is the cost (a few minutes); PQGPU_FUZZ_SMOKE=0 skips it.
if [ "${PQGPU_FUZZ_SMOKE:-1}" != "0" ] && [ -x scripts/fuzz.sh ]; then
  echo "== fuzz smoke (scripts/fuzz.sh, 3 s per target)"
  SECS=3 scripts/fuzz.sh
fi

# Rust-side AddressSanitizer (+ LeakSanitizer) over the C-ABI, robustness and stress tests on the
# CPU backend (scripts/asan.sh: nightly, or stable with RUSTC_BOOTSTRAP=1; skips with the reason
# when neither can). About 2-3 minutes, mostly its instrumented build; PQGPU_ASAN=0 skips it.
if [ "${PQGPU_ASAN:-1}" != "0" ] && [ -x scripts/asan.sh ]; then
  echo "== Rust tests under AddressSanitizer (scripts/asan.sh)"
  scripts/asan.sh
fi

if [ -x examples-c/run-ctest.sh ]; then
  echo "== C examples under CTest (installed copy, valgrind)"
  examples-c/run-ctest.sh
fi

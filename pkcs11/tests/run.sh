#!/usr/bin/env bash
# The PKCS#11 module's tests: its Rust unit tests, then clients no one here wrote driving
# libpqgpu_pkcs11.so on the CPU backend: python-pkcs11 0.10 (end to end, the 3.2 interface),
# PyKCS11 (the 2.x function list; return codes for bad input; SLH-DSA, which python-pkcs11
# 0.10 lacks), OpenSSL 3.5's default provider
# checking the token's public keys and signatures (PQGPU_OPENSSL, as scripts/test.sh exports
# it; those tests skip with the reason when it is unset), and storage across processes.
# The Python packages come from PyPI into a virtual environment kept between runs
# ($PQGPU_PKCS11_VENV, default ~/.cache/pqgpu/pkcs11-venv).
set -euo pipefail
cd "$(dirname "$0")/../.."

venv="${PQGPU_PKCS11_VENV:-$HOME/.cache/pqgpu/pkcs11-venv}"
if ! "$venv/bin/python" -c "import pkcs11, PyKCS11, pytest" 2>/dev/null; then
  echo "== Python clients into $venv (python-pkcs11 0.10, PyKCS11, pytest)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "python-pkcs11==0.10.*" "PyKCS11==1.5.*" "pytest==8.*"
fi

cargo test --release -p pqgpu_pkcs11
cargo build --release -p pqgpu_pkcs11
export PQGPU_PKCS11_MODULE="$PWD/target/release/libpqgpu_pkcs11.so"
# One process per client: the module's state is per process, as in any application.
for t in test_python_pkcs11 test_pykcs11 test_pykcs11_slhdsa test_store; do
  "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "pkcs11/tests/$t.py"
done

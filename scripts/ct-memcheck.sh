#!/usr/bin/env bash
# Constant-time check of the CPU kernels (portable and vector) with valgrind memcheck: secrets
# are marked undefined (src/simd/ct_check.rs), so any branch or memory index on them is an error.
# A control run that branches on a secret on purpose must fail, the real run must pass.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(cargo test --release -p pqgpu --lib --no-run --message-format=json 2>/dev/null |
  python3 -c 'import sys, json
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"] and "rlib" in m["target"]["kind"]:
        print(m["executable"])')
if PQGPU_CT_CONTROL=1 valgrind -q --error-exitcode=1 "$bin" ct_check --test-threads=1 >/dev/null 2>&1; then
  echo "ct-memcheck: the control run was not flagged: the check is blind" >&2
  exit 1
fi
valgrind -q --error-exitcode=1 "$bin" ct_check --test-threads=1
echo "ct-memcheck: no secret-dependent branch or index in the checked kernels"

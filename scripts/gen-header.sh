#!/bin/sh
# Regenerates the committed C header include/pqgpu.h from src/ffi (via build.rs + cbindgen).
# Run after changing anything in src/ffi or cbindgen.toml; tests/header.rs fails while the
# committed header is stale.
set -eu
cd "$(dirname "$0")/.."
PQG_UPDATE_HEADER=1 cargo build --lib
echo "wrote include/pqgpu.h"

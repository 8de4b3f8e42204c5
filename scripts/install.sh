#!/bin/sh
# Installs the C library built by `cargo build --release` into PREFIX:
#
#   PREFIX/lib/libpqgpu.so.X.Y.Z, libpqgpu.so.X (SONAME) -> .X.Y.Z, libpqgpu.so -> .so.X
#   PREFIX/lib/libpqgpu.a
#   PREFIX/include/pqgpu.h
#   PREFIX/lib/pkgconfig/pqgpu.pc
#   PREFIX/lib/cmake/pqgpu/pqgpuConfig.cmake, pqgpuConfigVersion.cmake  (target pqgpu::pqgpu)
#
# Usage: cargo build --release && scripts/install.sh PREFIX
# PQGPU_LIB_DIR overrides where the built libraries are taken from (default target/release).
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX   (after cargo build --release)" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$1
built=${PQGPU_LIB_DIR:-$root/target/release}

version=$(sed -n 's/^version *= *"\([0-9.]*\)".*/\1/p' "$root/Cargo.toml" | head -n 1)
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}

for f in libpqgpu.so libpqgpu.a; do
    if [ ! -f "$built/$f" ]; then
        echo "error: $built/$f not found; run cargo build --release first" >&2
        exit 1
    fi
done

libdir=$prefix/lib
install -d "$libdir" "$prefix/include" "$libdir/pkgconfig" "$libdir/cmake/pqgpu"

install -m 755 "$built/libpqgpu.so" "$libdir/libpqgpu.so.$version"
ln -sf "libpqgpu.so.$version" "$libdir/libpqgpu.so.$major"
ln -sf "libpqgpu.so.$major" "$libdir/libpqgpu.so"
install -m 644 "$built/libpqgpu.a" "$libdir/libpqgpu.a"
install -m 644 "$root/include/pqgpu.h" "$prefix/include/pqgpu.h"

fill() {
    sed -e "s/@VERSION@/$version/g" -e "s/@MAJOR@/$major/g" -e "s/@MINOR@/$minor/g" "$1" > "$2"
    chmod 644 "$2"
}
fill "$root/packaging/pqgpu.pc.in" "$libdir/pkgconfig/pqgpu.pc"
fill "$root/packaging/pqgpuConfig.cmake.in" "$libdir/cmake/pqgpu/pqgpuConfig.cmake"
fill "$root/packaging/pqgpuConfigVersion.cmake.in" "$libdir/cmake/pqgpu/pqgpuConfigVersion.cmake"

echo "installed pqgpu $version into $prefix"

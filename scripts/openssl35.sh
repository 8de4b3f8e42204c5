#!/usr/bin/env bash
# Builds an OpenSSL 3.5 command-line program for the provider tests (Debian 12 ships 3.0, which
# has no ML-DSA). Sources: the `openssl-src` crate (300.5.x carries OpenSSL 3.5), fetched with cargo.
# The program is static and exports libcrypto's symbols (-Wl,--export-dynamic) so that a provider
# module that links no libcrypto can load into it and find ASYNC_* at load time.
# Installed into ${PQGPU_OPENSSL_CACHE:-$HOME/.cache/pqgpu/openssl-3.5}/bin/openssl, with what a C
# program needs to link the same OpenSSL statically (provider/bench/tls_bench.c): the headers in
# include/openssl (the generated ones too) and lib/libssl.a, lib/libcrypto.a. Skipped when all of
# them are already there. About 4 minutes on 2 cores. Prints the program's path on the last line.
set -euo pipefail

crate_version="300.5.5"
cache="${PQGPU_OPENSSL_CACHE:-$HOME/.cache/pqgpu/openssl-3.5}"
bin="$cache/bin/openssl"

if [ -x "$bin" ] && "$bin" version 2>/dev/null | grep -q '^OpenSSL 3\.5' &&
  [ -f "$cache/include/openssl/opensslv.h" ] && [ -f "$cache/include/openssl/configuration.h" ] &&
  [ -f "$cache/lib/libssl.a" ] && [ -f "$cache/lib/libcrypto.a" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
work="$cache/work"
rm -rf "$work"
mkdir -p "$work/fetch/src"

# A throwaway crate whose only dependency is openssl-src: `cargo fetch` puts the sources into the
# registry, `cargo metadata` says where.
cat >"$work/fetch/Cargo.toml" <<TOML
[package]
name = "pqgpu-fetch-openssl-src"
version = "0.0.0"
edition = "2021"
publish = false
[dependencies]
openssl-src = "=$crate_version"
[workspace]
TOML
: >"$work/fetch/src/lib.rs"
(cd "$work/fetch" && cargo fetch --quiet)
manifest=$(cd "$work/fetch" && cargo metadata --format-version 1 --quiet |
  grep -o '"manifest_path":"[^"]*/openssl-src-[^"]*/Cargo.toml"' | head -1 | cut -d'"' -f4)
src="$(dirname "$manifest")/openssl"
[ -f "$src/Configure" ] || { echo "openssl-src sources not found at $src" >&2; exit 1; }

echo "== building OpenSSL from $src (about 4 minutes on 2 cores)" >&2
cp -r "$src" "$work/openssl"
cd "$work/openssl"
# The crate omits files a shared build needs: static only. no-module: the default provider is
# built in; external provider modules still load through DSO.
./Configure no-shared no-module no-legacy no-tests no-docs \
  --prefix="$cache" --openssldir="$cache/ssl" -Wl,--export-dynamic >"$work/configure.log" 2>&1 ||
  { tail -30 "$work/configure.log" >&2; exit 1; }
jobs="${PQGPU_OPENSSL_JOBS:-$(nproc)}"
make -j"$jobs" build_programs >"$work/make.log" 2>&1 || { tail -40 "$work/make.log" >&2; exit 1; }

mkdir -p "$cache/bin" "$cache/ssl" "$cache/lib"
# Headers and static libraries for C programs (an in-tree build: the generated headers, e.g.
# opensslv.h and configuration.h, sit next to the others). Replaced whole, never mixed.
rm -rf "$cache/include.tmp"
mkdir -p "$cache/include.tmp/openssl"
cp include/openssl/*.h "$cache/include.tmp/openssl/"
rm -rf "$cache/include"
mv "$cache/include.tmp" "$cache/include"
for l in libssl.a libcrypto.a; do install -m 644 "$l" "$cache/lib/$l.tmp" && mv "$cache/lib/$l.tmp" "$cache/lib/$l"; done
install -m 755 apps/openssl "$cache/bin/openssl.tmp"
# An empty configuration file so the program does not warn about a missing one.
[ -f "$cache/ssl/openssl.cnf" ] || : >"$cache/ssl/openssl.cnf"
mv "$cache/bin/openssl.tmp" "$bin"
cd "$cache"
rm -rf "$work"
"$bin" version >&2
echo "$bin"

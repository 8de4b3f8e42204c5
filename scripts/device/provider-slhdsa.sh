#!/usr/bin/env bash
# SLH-DSA through the OpenSSL provider on the GPU machine: OpenSSL 3.5's `openssl` program with
# pqgpu.so on the GPU backend (no CPU crossover, traced), against OpenSSL's default provider.
# 1. Every set: seeded keys equal the default provider's; deterministic signatures (with a
#    context string) equal byte for byte; a hedged pqgpu signature verifies under the default
#    provider and a default-provider signature under pqgpu; a wrong context and a changed
#    signature are refused; the trace shows that the GPU backend ran them.
# 2. A self-signed SLH-DSA-SHA2-128f certificate and a CMS signature by pqgpu on the GPU,
#    verified by the default provider.
# 3. `openssl speed -async_jobs $JOBS` for SLH-DSA-SHA2-128f and -128s through pqgpu, and the
#    default provider on every core (-multi nproc) beside it; the batch sizes pqgpu formed.
# About 2-3 minutes (SECS=3 seconds per speed figure).
#
# Staging (here): scripts/device/stage.sh provider-slhdsa (OpenSSL 3.5 via scripts/openssl35.sh,
# cached; the provider). Rehearsal without a GPU: PQGPU_PROVIDER_BACKEND=cpu SECS=1 bash
# target/device/provider-slhdsa/run.sh
if [ "${1:-}" = stage ]; then
  set -e
  D=$2
  openssl=$(bash scripts/openssl35.sh | tail -1)
  cargo build --release -p pqgpu_provider
  cp "$openssl" "$D/openssl"
  cp "${CARGO_TARGET_DIR:-target}/release/libpqgpu_provider.so" "$D/pqgpu.so"
  strip "$D/openssl" "$D/pqgpu.so"
  exit 0
fi
source "$(dirname "$0")/common.sh"
D=$PWD
SHOW="^OK|MISMATCH|operations on|^ +SLH-DSA|rror"
SECS=${SECS:-3}
JOBS=${JOBS:-1000}
B=${PQGPU_PROVIDER_BACKEND:-gpu}
W=$(mktemp -d)
cnf() { # $1 = backend, $2 = default_properties line or empty, $3 = extra pqgpu lines
  printf '%s\n' "openssl_conf = openssl_init" "[openssl_init]" "providers = provider_sect" \
    "alg_section = alg_sect" "[alg_sect]" "$2" "[provider_sect]" "default = default_sect" \
    "pqgpu = pqgpu_sect" "[default_sect]" "activate = 1" "[pqgpu_sect]" "module = $D/pqgpu.so" \
    "activate = 1" "backend = $1" "$3" "[req]" "distinguished_name = dn" "[dn]"
}
cnf "$B" "default_properties = ?provider=pqgpu" "trace = $W/trace-check.log
cpu_crossover = 0" > "$W/gpu.cnf"
cnf "$B" "" "" > "$W/gpu-speed.cnf"
cnf "$B" "" "trace = $W/trace-speed.log" > "$W/gpu-traced.cnf"
printf 'openssl_conf = openssl_init\n[openssl_init]\nproviders = p\n[p]\ndefault = d\n[d]\nactivate = 1\n[req]\ndistinguished_name = dn\n[dn]\n' > "$W/def.cnf"
export O=$D/openssl W
machine

check() {
  set -e
  cd "$W"
  head -c 2000 /dev/urandom > msg
  for a in SLH-DSA-SHA2-128s SLH-DSA-SHA2-128f SLH-DSA-SHA2-192s SLH-DSA-SHA2-192f \
    SLH-DSA-SHA2-256s SLH-DSA-SHA2-256f SLH-DSA-SHAKE-128s SLH-DSA-SHAKE-128f \
    SLH-DSA-SHAKE-192s SLH-DSA-SHAKE-192f SLH-DSA-SHAKE-256s SLH-DSA-SHAKE-256f; do
    case $a in *128?) n=16 ;; *192?) n=24 ;; *) n=32 ;; esac
    S=$(head -c $((3 * n)) /dev/urandom | od -An -tx1 | tr -d ' \n')
    OPENSSL_CONF=gpu.cnf $O genpkey -algorithm $a -pkeyopt hexseed:$S -out k.gpu
    OPENSSL_CONF=def.cnf $O genpkey -algorithm $a -pkeyopt hexseed:$S -out k.def
    cmp k.gpu k.def || { echo "MISMATCH key $a"; exit 1; }
    OPENSSL_CONF=def.cnf $O pkey -in k.def -pubout -out p.def
    for who in gpu def; do
      OPENSSL_CONF=$who.cnf $O pkeyutl -sign -rawin -inkey k.def -in msg -pkeyopt deterministic:1 \
        -pkeyopt context-string:device -out d.$who
    done
    cmp d.gpu d.def || { echo "MISMATCH deterministic signature $a"; exit 1; }
    OPENSSL_CONF=gpu.cnf $O pkeyutl -sign -rawin -inkey k.gpu -in msg -pkeyopt context-string:device -out h.gpu
    OPENSSL_CONF=def.cnf $O pkeyutl -verify -rawin -pubin -inkey p.def -in msg \
      -pkeyopt context-string:device -sigfile h.gpu > /dev/null
    OPENSSL_CONF=def.cnf $O pkeyutl -sign -rawin -inkey k.def -in msg -pkeyopt context-string:device -out h.def
    OPENSSL_CONF=gpu.cnf $O pkeyutl -verify -rawin -pubin -inkey p.def -in msg \
      -pkeyopt context-string:device -sigfile h.def > /dev/null
    if OPENSSL_CONF=gpu.cnf $O pkeyutl -verify -rawin -pubin -inkey p.def -in msg \
      -pkeyopt context-string:other -sigfile h.def > /dev/null 2>&1; then
      echo "MISMATCH $a: wrong context verified"; exit 1
    fi
    cp h.def bad
    printf '\x55' | dd of=bad bs=1 seek=40 conv=notrunc 2> /dev/null
    if OPENSSL_CONF=gpu.cnf $O pkeyutl -verify -rawin -pubin -inkey p.def -in msg \
      -pkeyopt context-string:device -sigfile bad > /dev/null 2>&1; then
      echo "MISMATCH $a: changed signature verified"; exit 1
    fi
    echo "OK $a"
  done
  OPENSSL_CONF=gpu.cnf $O req -x509 -newkey SLH-DSA-SHA2-128f -keyout ca.key -noenc \
    -subj /CN=device -days 2 -addext keyUsage=critical,digitalSignature,keyCertSign \
    -addext extendedKeyUsage=emailProtection -out ca.pem
  OPENSSL_CONF=def.cnf $O verify -check_ss_sig -CAfile ca.pem ca.pem
  OPENSSL_CONF=gpu.cnf $O cms -sign -md sha256 -binary -in msg -signer ca.pem -inkey ca.key \
    -outform DER -out msg.p7s
  OPENSSL_CONF=def.cnf $O cms -verify -binary -inform DER -in msg.p7s -content msg \
    -CAfile ca.pem -out /dev/null
  echo "OK certificate and CMS"
  echo "operations on the GPU backend: $(grep -c ' Gpu ' trace-check.log)," \
    "elsewhere: $(grep -vc ' Gpu ' trace-check.log)"
  grep -v ' Gpu ' trace-check.log | grep -v '^keygen' | head -5
}
export -f check
step check 300 bash -c check
cp "$W/trace-check.log" "$OUT/slhdsa-trace-check.log" 2> /dev/null

export OPENSSL_CONF=$W/gpu-speed.cnf
for a in SLH-DSA-SHA2-128f SLH-DSA-SHA2-128s; do
  step "speed_pqgpu_${a}_async$JOBS" $((SECS * 3 + 60)) \
    "$O" speed -seconds "$SECS" -elapsed -async_jobs "$JOBS" -propquery provider=pqgpu "$a"
  step "speed_default_${a}_multi_nproc" $((SECS * 3 + 60)) \
    "$O" speed -seconds "$SECS" -elapsed -multi "$(nproc)" -propquery provider=default "$a"
done
export OPENSSL_CONF=$W/gpu-traced.cnf
step speed_pqgpu_SLH-DSA-SHA2-128f_traced 60 \
  "$O" speed -seconds 1 -elapsed -async_jobs "$JOBS" -propquery provider=pqgpu SLH-DSA-SHA2-128f
grep '^batch ' "$W/trace-speed.log" | awk '{n=substr($5,3)+0; c[$2]++; s[$2]+=n; if(n>m[$2])m[$2]=n}
  END{for(k in c) printf "%s: %d batches, mean %.1f, largest %d\n", k, c[k], s[k]/c[k], m[k]}' |
  tee "$OUT/slhdsa-batches.txt"
rm -rf "$W"
finish

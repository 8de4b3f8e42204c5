#!/usr/bin/env bash
# Pre-fork servers and several server processes on one GPU, on the GPU machine, in one call
# of about 4-5 minutes:
#  1. tests/fork_gpu.rs with a real GPU: the master signs on a GPU context, its forked child's
#     AUTO context runs on the CPU and names the parent's CUDA state, GPU is NO_DEVICE.
#  2. The pre-fork table: provider/bench/prefork.c (master loads pqgpu.so's configuration and an
#     ML-DSA-44 key, forks 4 workers, each signs 200 messages with EVP_DigestSign and verifies
#     them through pqgpu and through OpenSSL's default provider), cpu_crossover = 0, for
#     backend = auto and gpu, the master loading only or also signing once before the fork.
#  3. `openssl speed -multi 16 -async_jobs 64 ML-DSA-44` through pqgpu.so without and with
#     MPS, next to one process (-multi 1) with 64 and with 1024 (= 16 x 64) jobs in flight,
#     and OpenSSL's default provider on every core.
#
# Here:   bash scripts/device/prefork.sh stage
#         (builds OpenSSL 3.5 with scripts/openssl35.sh if not cached, pqgpu.so, prefork and the
#         fork_gpu test binary; copies them with this script as run.sh to target/device/prefork)
# There:  bash target/device/prefork/run.sh       (carry target/device/prefork)
#         SECS (default 5: seconds per speed operation; speed runs keygen, sign and verify),
#         SIGNS (default 200), WORKERS (default 4) adjust it; PQGPU_PROVIDER_BACKEND=cpu
#         rehearses without a GPU (speed rows on the CPU backend, no MPS).
# Results in $OUT: fork_gpu.log; table-<backend>-<master signs>.log (the program's lines, the
# trace's per-backend counts, stderr under PQGPU_LOG=1); speed-*.log; summary.txt (the table
# and the speed rows, as printed).
set -u

if [ "${1:-}" = stage ]; then
  set -e
  cd "$(dirname "$0")/../.."
  dest=target/device/prefork
  rm -rf "$dest"
  mkdir -p "$dest"
  openssl=$(bash scripts/openssl35.sh | tail -1)
  cargo build --release -p pqgpu_provider
  bin=$(cargo test --release --test fork_gpu --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*fork_gpu[^"]*\)".*/\1/p' | tail -1)
  cp "$openssl" "$dest/openssl"
  cp target/release/libpqgpu_provider.so "$dest/pqgpu.so"
  cp "$bin" "$dest/fork_gpu"
  PQGPU_OPENSSL_CACHE=$(dirname "$(dirname "$openssl")") bash provider/bench/build.sh "$dest/prefork" prefork.c
  strip "$dest/openssl" "$dest/pqgpu.so" "$dest/prefork" "$dest/fork_gpu"
  cp "$0" "$dest/run.sh"
  git rev-parse HEAD > "$dest/build.txt"
  du -sh "$dest"
  exit 0
fi

cd "$(dirname "$0")" || exit 1
D=$PWD
OUT=${OUT:-/tmp/pqgpu-device}
mkdir -p "$OUT"
W=$(mktemp -d)
export PQGPU_CACHE_DIR=${PQGPU_CACHE_DIR:-/tmp/pqgpu-kernels}
SECS=${SECS:-5} SIGNS=${SIGNS:-200} WORKERS=${WORKERS:-4}
B=${PQGPU_PROVIDER_BACKEND:-}
S=$OUT/summary.txt
: > "$S"
say() { echo "$*" | tee -a "$S"; }
fails=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /' | tee -a "$S"
say "cpu: $(nproc) cores; build $(cat build.txt 2>/dev/null)"

cnf() { # BACKEND TRACE-FILE (or empty) EXTRA-LINE: pqgpu.so loaded and preferred
  cat <<CNF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
alg_section = alg_sect
[alg_sect]
default_properties = ?provider=pqgpu
[provider_sect]
default = default_sect
pqgpu = pqgpu_sect
[default_sect]
activate = 1
[pqgpu_sect]
module = $D/pqgpu.so
activate = 1
backend = $1
${2:+trace = $2}
$3
CNF
}
printf 'openssl_conf = openssl_init\n[openssl_init]\nproviders = p\n[p]\ndefault = d\n[d]\nactivate = 1\n' > "$W/def.cnf"

# 1. The Rust-level fork test with a real GPU (it prints the master's GPU context).
say "=== fork_gpu (C ABI: GPU work in the master, then fork)"
( cd "$W" && timeout 120 "$D/fork_gpu" --nocapture ) > "$OUT/fork_gpu.log" 2>&1
rc=$?
[ $rc = 0 ] || fails=$((fails + 1))
grep -E "GPU work in the master|no GPU|SKIPPED|test result" "$OUT/fork_gpu.log" | sed 's/^/  /' | tee -a "$S"
say "  rc=$rc"

# 2. The pre-fork table.
OPENSSL_CONF=$W/def.cnf timeout 30 "$D/openssl" genpkey -algorithm ML-DSA-44 -out "$W/key.pem"
say "=== pre-fork table: $WORKERS workers x $SIGNS signatures, cpu_crossover = 0"
say "cell | master before fork | worker signatures on GPU / CPU / failed | reason shown"
for backend in auto gpu; do
  for ms in 0 1; do
    name=table-${B:-$backend}-$ms
    trace=$W/$name.trace
    cnf "${B:-$backend}" "$trace" "cpu_crossover = 0" > "$W/$name.cnf"
    ( cd "$W" && OPENSSL_CONF=$W/$name.cnf PQGPU_LOG=1 timeout 180 "$D/prefork" --key key.pem \
        --workers "$WORKERS" --signs "$SIGNS" --master-signs "$ms" ) > "$OUT/$name.log" 2> "$OUT/$name.stderr"
    rc=$?
    [ $rc = 0 ] || fails=$((fails + 1))
    # Worker signatures by backend, from the workers' own lines (pqgpu-backend after signing).
    gpu=$(awk '/^worker i=/ && / backend=gpu / {split($5,a,"[=/]"); s+=a[2]} END {print s+0}' "$OUT/$name.log")
    cpu=$(awk '/^worker i=/ && / backend=cpu / {split($5,a,"[=/]"); s+=a[2]} END {print s+0}' "$OUT/$name.log")
    failed=$(awk '/^worker i=/ {split($5,a,"[=/]"); f+=a[3]-a[2]} END {print f+0}' "$OUT/$name.log")
    why=$(grep -m1 -oE 'error="[^"]+"' "$OUT/$name.log" || grep -m1 -oE 'gpu_unusable="[^"]+"' "$OUT/$name.log")
    master=$([ "$ms" = 0 ] && echo "loads config and key only" || echo "also signs once")
    say "backend = ${B:-$backend} | $master | $gpu / $cpu / $failed | ${why:-none} (rc=$rc)"
    { echo "--- trace: lines by operation and backend"
      sed 's/ n=.*//' "$trace" 2>/dev/null | sort | uniq -c
      echo "--- stderr (PQGPU_LOG=1)"; sort "$OUT/$name.stderr" | uniq -c; } >> "$OUT/$name.log"
    grep -E "^master phase" "$OUT/$name.log" | sed 's/^/  /' | tee -a "$S"
  done
done

# 3. Several server processes on one GPU: openssl speed through pqgpu.so.
cnf "${B:-gpu}" "" "" | sed '/default_properties/d' > "$W/speed.cnf"
speed() { # NAME PROVIDER MULTI JOBS
  local name=speed-$1
  ( cd "$W" && OPENSSL_CONF=$W/speed.cnf timeout $((SECS * 3 + 60)) "$D/openssl" speed -seconds "$SECS" -elapsed \
      -multi "$3" ${4:+-async_jobs $4} -propquery "provider=$2" ML-DSA-44 ) > "$OUT/$name.log" 2>&1
  local rc=$?
  [ $rc = 0 ] || fails=$((fails + 1))
  # The last ML-DSA-44 row is the total (-multi sums its processes): keygen/s sign/s verify/s.
  say "$name (-multi $3${4:+ -async_jobs $4}, $2): $(grep -E '^ *ML-DSA-44' "$OUT/$name.log" | tail -1 |
    awk '{print "keygen/s", $(NF-2), "sign/s", $(NF-1), "verify/s", $NF}') rc=$rc"
}
say "=== openssl speed ML-DSA-44, -seconds $SECS -elapsed (keygen runs on the CPU in pqgpu.so)"
speed multi16-jobs64 pqgpu 16 64
speed multi1-jobs64 pqgpu 1 64
speed multi1-jobs1024 pqgpu 1 1024
speed default-multi$(nproc) default "$(nproc)" ""
if [ -z "$B" ] && command -v nvidia-cuda-mps-control > /dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=$W/mps-pipe CUDA_MPS_LOG_DIRECTORY=$W/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then
    trap 'echo quit | nvidia-cuda-mps-control' EXIT
    say "MPS started"
    speed mps-multi16-jobs64 pqgpu 16 64
    speed mps-multi1-jobs1024 pqgpu 1 1024
    echo quit | nvidia-cuda-mps-control && trap - EXIT && say "MPS stopped"
    cp -r "$CUDA_MPS_LOG_DIRECTORY" "$OUT/mps-log" 2> /dev/null
  else
    say "SKIPPED: MPS rows (nvidia-cuda-mps-control -d failed)"
  fi
else
  say "SKIPPED: MPS rows (${B:+rehearsal on $B; }no nvidia-cuda-mps-control or no GPU)"
fi
say "failed steps: $fails"
rm -rf "$W"
[ "$fails" = 0 ]

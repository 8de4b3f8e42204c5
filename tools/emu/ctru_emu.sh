#!/bin/sh
# Builds the CTRU-Prime kernel emulator per parameter set and runs the first CASES KAT cases
# through it: ENGINE=0 (CUDA-core product) or 1 (Tensor-Core product, mma emulated). Then
# batch keygen through the product-tree inversion for each chunk size in TREE (keys cycle
# through all KAT cases; TREE= skips it).
set -e
cd "$(dirname "$0")/../.."
. tools/emu/params.sh
cd tools/emu
V=${PQGPU_VECTORS_DIR:-../../../shared/vectors}/ctru-prime
CASES=${CASES:-3}
TREE=${TREE-1,2,3,5,8,13,100}
for n in 653 761 1277; do
  set -- $n
  eval D=\$C$n
  g++ -std=c++20 -O2 -pthread -w $D ctru_emu.cpp -o /tmp/ctru_emu_$1
  python3 -c "
import sys
t=open('$V/ctru-prime-$1.rsp').read()
for b in t.split('\n\n'):
    d=dict(l.split(' = ',1) for l in b.strip().splitlines() if ' = ' in l and not l.startswith('#'))
    if 'pk' not in d: continue
    ex=[d['ct_tampered'], d['ss_reject_intended']] if 'ct_tampered' in d else []
    print(d['kg_rand0']+d['kg_rand1'], d['enc_rand0'], d['pk'], d['sk'], d['ct'], d['ss'], d['ss_dec'], *ex)
" > /tmp/ctru_emu_$1.all
  head -n "$CASES" /tmp/ctru_emu_$1.all > /tmp/ctru_emu_$1.in
  echo "CTRU-Prime-$1 engine ${ENGINE:-0}:"
  /tmp/ctru_emu_$1 ${ENGINE:-0} < /tmp/ctru_emu_$1.in
  if [ -n "$TREE" ]; then
    echo "CTRU-Prime-$1 batch keygen (product tree), chunks of $TREE keys:"
    /tmp/ctru_emu_$1 tree "$TREE" < /tmp/ctru_emu_$1.all
  fi
done

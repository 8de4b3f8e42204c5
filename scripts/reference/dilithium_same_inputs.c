/* pq-crystals ML-DSA (never committed here) on exactly the inputs of pqgpu's examples/cpu_ops in its
 * xN mode, so that both sign with the same number of attempts: keygen seeds xi = [7;32] with
 * xi[0] = 8, 9, ...; signing under the key of xi = [7;32], deterministic (rnd = 0), pure, empty
 * context, 32-byte messages [0;32] with m[0] = 1, 2, ... (the first a warm-up). It supplies
 * randombytes itself (the seed), so link it without the reference's randombytes.c:
 *   cc -O3 -mavx2 -mpopcnt -march=native -mtune=native -w -DDILITHIUM_MODE=2 -I$D \
 *     dilithium_same_inputs.c $D/{sign,packing,polyvec,poly,consts,rejsample,rounding,fips202,\
 *     fips202x4,symmetric-shake}.c $D/{ntt,invntt,pointwise,shuffle,f1600x4}.S -o det_2
 * (D = dilithium/avx2). Usage: det_2 N keygen|sign|verify: one warm-up, then N operations
 * (verify: N verifications of the signature of m = [0;32], as cpu_ops' verify); prints a
 * hash of the last signature and its first bytes (compare with pqgpu's for the same message).
 * CPU time per operation: perf stat -e task-clock of `det_2 N op` minus that of `det_2 0 op`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api.h"
#include "params.h"
#include "sign.h"

static uint8_t xi[32];
void randombytes(uint8_t *out, size_t outlen) { memcpy(out, xi, outlen); }

int main(int argc, char **argv) {
  long n = atol(argv[1]);
  static uint8_t pk[CRYPTO_PUBLICKEYBYTES], sk[CRYPTO_SECRETKEYBYTES], sig[CRYPTO_BYTES];
  uint8_t m[32] = {0}, pre[2] = {0, 0}, rnd[32] = {0};
  size_t siglen;
  memset(xi, 7, 32);
  if (!strcmp(argv[2], "keygen")) {
    for (long i = 0; i <= n; i++) { xi[0] = (uint8_t)(8 + i); crypto_sign_keypair(pk, sk); }
  } else if (!strcmp(argv[2], "verify")) {
    crypto_sign_keypair(pk, sk);
    crypto_sign_signature_internal(sig, &siglen, m, 32, pre, 2, rnd, sk);
    for (long i = 0; i <= n; i++)
      if (crypto_sign_verify_internal(sig, siglen, m, 32, pre, 2, pk)) return 1;
  } else {
    crypto_sign_keypair(pk, sk);
    for (long i = 0; i <= n; i++) {
      m[0] = (uint8_t)(1 + i);
      crypto_sign_signature_internal(sig, &siglen, m, 32, pre, 2, rnd, sk);
    }
  }
  unsigned h = 0; for (size_t i = 0; i < sizeof sig; i++) h = h * 31 + sig[i];
  printf("%08x %02x%02x%02x%02x\n", h, pk[32], pk[33], sig[0], sig[1]);
  return 0;
}

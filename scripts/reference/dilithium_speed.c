/* Times the pq-crystals ML-DSA C reference (built beside pqgpu, never committed) on one core.
 * Compiled by scripts/bench-reference.sh with -DDILITHIUM_MODE=2|3|5 against the reference's
 * ref/ sources. Prints one line per operation: "<set> <op> <ops/s>". Every signature is verified. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "api.h"
#include "params.h"
#include "sign.h"

#define ITEMS 64

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint8_t pk[ITEMS][CRYPTO_PUBLICKEYBYTES], sk[ITEMS][CRYPTO_SECRETKEYBYTES];
static uint8_t sig[ITEMS][CRYPTO_BYTES], msg[ITEMS][32];

int main(int argc, char **argv) {
  double min_seconds = argc > 1 ? atof(argv[1]) : 1.0;
  const char *name = DILITHIUM_MODE == 2 ? "ML-DSA-44" : DILITHIUM_MODE == 3 ? "ML-DSA-65" : "ML-DSA-87";
  size_t siglen;
  for (int i = 0; i < ITEMS; i++)
    for (int j = 0; j < 32; j++) msg[i][j] = (uint8_t)rand();

  long n = 0;
  double t0 = now(), t;
  do { for (int i = 0; i < ITEMS; i++, n++) crypto_sign_keypair(pk[i], sk[i]); } while ((t = now() - t0) < min_seconds);
  printf("%s keygen %.1f\n", name, n / t);

  n = 0; t0 = now();
  do { for (int i = 0; i < ITEMS; i++, n++) crypto_sign_signature(sig[i], &siglen, msg[i], 32, NULL, 0, sk[i]); }
  while ((t = now() - t0) < min_seconds);
  printf("%s sign %.1f\n", name, n / t);

  n = 0; t0 = now();
  do {
    for (int i = 0; i < ITEMS; i++, n++)
      if (crypto_sign_verify(sig[i], CRYPTO_BYTES, msg[i], 32, NULL, 0, pk[i]) != 0) { fprintf(stderr, "verify failed\n"); return 1; }
  } while ((t = now() - t0) < min_seconds);
  printf("%s verify %.1f\n", name, n / t);
  return 0;
}

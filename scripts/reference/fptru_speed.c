/* Times the CTRU-Prime (FPTRU-KEM) C reference (built beside pqgpu, never committed) on one core.
 * Compiled by scripts/bench-reference.sh with -DFPTRU_N=653|761|1277. Prints one line per
 * operation: "<set> <op> <ops/s>". Every decapsulated key is compared with the encapsulated one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kem.h"
#include "params.h"

#define ITEMS 16

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static unsigned char pk[ITEMS][FPTRU_KEM_PUBLICKEYBYTES], sk[ITEMS][FPTRU_KEM_SECRETKEYBYTES];
static unsigned char ct[ITEMS][FPTRU_KEM_CIPHERTEXTBYTES], k1[ITEMS][32], k2[ITEMS][32];

int main(int argc, char **argv) {
  double min_seconds = argc > 1 ? atof(argv[1]) : 1.0;
  long n = 0;
  double t0 = now(), t;
  do { for (int i = 0; i < ITEMS; i++, n++) crypto_kem_keygen(pk[i], sk[i]); } while ((t = now() - t0) < min_seconds);
  printf("CTRU-Prime-%d keygen %.1f\n", FPTRU_N, n / t);

  n = 0; t0 = now();
  do { for (int i = 0; i < ITEMS; i++, n++) crypto_kem_encaps(ct[i], k1[i], pk[i]); } while ((t = now() - t0) < min_seconds);
  printf("CTRU-Prime-%d encaps %.1f\n", FPTRU_N, n / t);

  n = 0; t0 = now();
  do {
    for (int i = 0; i < ITEMS; i++, n++) {
      crypto_kem_decaps(k2[i], ct[i], sk[i]);
      if (memcmp(k1[i], k2[i], 32) != 0) { fprintf(stderr, "decaps mismatch\n"); return 1; }
    }
  } while ((t = now() - t0) < min_seconds);
  printf("CTRU-Prime-%d decaps %.1f\n", FPTRU_N, n / t);
  return 0;
}

/* The KEMs through the C API (ML-KEM, FIPS 203, and CTRU-Prime), for each parameter set:
 * keygen, encaps and decaps agree;
 * seeded keygen and encaps are deterministic; a tampered ciphertext decapsulates (PQG_OK,
 * implicit rejection) to a different key; a batch of encapsulations to one shared public key
 * and the matching decapsulation batch agree item by item. For ML-KEM also FIPS 203's input
 * checks: an encapsulation key with a coefficient >= q and a decapsulation key whose H(ek) is
 * wrong are PQG_ERR_BAD_KEY, for the plain calls and for pqg_key_new.
 *
 * Usage: kem [batch]   (default 64 items per batch) */
#include "example.h"

static void one_set(pqg_context *ctx, pqg_alg alg, const char *name, size_t n) {
  const size_t pk_len = pqg_public_key_len(alg), sk_len = pqg_secret_key_len(alg);
  const size_t ct_len = pqg_ciphertext_len(alg), ss_len = pqg_shared_secret_len(alg);
  uint8_t *pk = xmalloc(pk_len), *sk = xmalloc(sk_len), *pk2 = xmalloc(pk_len);
  uint8_t *sk2 = xmalloc(sk_len), *ct = xmalloc(ct_len), *ct2 = xmalloc(ct_len);
  uint8_t *cts = xmalloc(n * ct_len), *sss = xmalloc(n * ss_len), *sss2 = xmalloc(n * ss_len);
  uint8_t ss[64], ss2[64], seed[64], coins[32];
  pqg_encaps_request *ereq = (pqg_encaps_request *)xmalloc(n * sizeof(pqg_encaps_request));
  pqg_decaps_request *dreq = (pqg_decaps_request *)xmalloc(n * sizeof(pqg_decaps_request));
  pqg_status *st = (pqg_status *)xmalloc(n * sizeof(pqg_status));
  pqg_job *job = NULL;
  size_t i, agree = 0;

  CHECK(ss_len <= sizeof ss, "shared secret fits");
  EXPECT(pqg_kem_keygen(ctx, alg, NULL, pk, pk_len, sk, sk_len), PQG_OK);
  EXPECT(pqg_kem_encaps(ctx, alg, pk, pk_len, NULL, ct, ct_len, ss, ss_len), PQG_OK);
  EXPECT(pqg_kem_decaps(ctx, alg, sk, sk_len, ct, ct_len, ss2, ss_len), PQG_OK);
  CHECK(memcmp(ss, ss2, ss_len) == 0, "decaps recovers the encapsulated key");

  ct[ct_len / 3] ^= 0x04;
  EXPECT(pqg_kem_decaps(ctx, alg, sk, sk_len, ct, ct_len, ss2, ss_len), PQG_OK);
  CHECK(memcmp(ss, ss2, ss_len) != 0, "a tampered ciphertext gives a different key");

  /* Deterministic forms. */
  memset(seed, 0x11, sizeof seed);
  memset(coins, 0x22, sizeof coins);
  EXPECT(pqg_kem_keygen(ctx, alg, seed, pk, pk_len, sk, sk_len), PQG_OK);
  EXPECT(pqg_kem_keygen(ctx, alg, seed, pk2, pk_len, sk2, sk_len), PQG_OK);
  CHECK(memcmp(pk, pk2, pk_len) == 0 && memcmp(sk, sk2, sk_len) == 0,
        "seeded keygen is deterministic");
  EXPECT(pqg_kem_encaps(ctx, alg, pk, pk_len, coins, ct, ct_len, ss, ss_len), PQG_OK);
  EXPECT(pqg_kem_encaps(ctx, alg, pk, pk_len, coins, ct2, ct_len, ss2, ss_len), PQG_OK);
  CHECK(memcmp(ct, ct2, ct_len) == 0 && memcmp(ss, ss2, ss_len) == 0,
        "encaps with coins is deterministic");

  /* A batch to one public key: every request points at the same pk. */
  for (i = 0; i < n; i++) {
    ereq[i].pk = pk;
    ereq[i].coins = NULL;
    ereq[i].ct = cts + i * ct_len;
    ereq[i].ss = sss + i * ss_len;
    dreq[i].sk = sk;
    dreq[i].ct = cts + i * ct_len;
    dreq[i].ss = sss2 + i * ss_len;
    st[i] = PQG_PENDING;
  }
  EXPECT(pqg_kem_encaps_submit(ctx, alg, ereq, n, st, &job), PQG_OK);
  EXPECT(pqg_job_wait(job, -1), PQG_OK);
  pqg_job_free(job);
  for (i = 0; i < n; i++) EXPECT(st[i], PQG_OK);
  EXPECT(pqg_kem_decaps_submit(ctx, alg, dreq, n, st, &job), PQG_OK);
  EXPECT(pqg_job_wait(job, -1), PQG_OK);
  pqg_job_free(job);
  for (i = 0; i < n; i++) {
    EXPECT(st[i], PQG_OK);
    agree += memcmp(sss + i * ss_len, sss2 + i * ss_len, ss_len) == 0;
  }
  CHECK(agree == n, "batch decaps agrees with batch encaps");
  CHECK(n < 2 || memcmp(sss, sss + ss_len, ss_len) != 0, "fresh coins per item");

  printf("%s: keygen/encaps/decaps agree, tampered ct rejected implicitly, deterministic "
         "seeds/coins, batch of %lu encapsulations to one shared pk decapsulated: %lu agree\n",
         name, (unsigned long)n, (unsigned long)agree);
  free(pk);
  free(sk);
  free(pk2);
  free(sk2);
  free(ct);
  free(ct2);
  free(cts);
  free(sss);
  free(sss2);
  free(ereq);
  free(dreq);
  free(st);
}

/* FIPS 203 §7.2 / §7.3: the ek modulus check and the dk hash check. */
static void mlkem_key_checks(pqg_context *ctx, pqg_alg alg, const char *name, size_t rank) {
  const size_t pk_len = pqg_public_key_len(alg), sk_len = pqg_secret_key_len(alg);
  const size_t ct_len = pqg_ciphertext_len(alg);
  uint8_t *ek = xmalloc(pk_len), *dk = xmalloc(sk_len), *ct = xmalloc(ct_len);
  uint8_t ss[32];
  pqg_key *key = NULL;

  EXPECT(pqg_kem_keygen(ctx, alg, NULL, ek, pk_len, dk, sk_len), PQG_OK);
  EXPECT(pqg_kem_encaps(ctx, alg, ek, pk_len, NULL, ct, ct_len, ss, sizeof ss), PQG_OK);
  ek[0] = 0x01; /* first coefficient := 3329 = q (12 bits, low byte 0x01, high nibble 0xD) */
  ek[1] = (uint8_t)((ek[1] & 0xF0) | 0x0D);
  EXPECT(pqg_kem_encaps(ctx, alg, ek, pk_len, NULL, ct, ct_len, ss, sizeof ss), PQG_ERR_BAD_KEY);
  EXPECT(pqg_key_new(alg, PQG_KEY_PUBLIC, ek, pk_len, &key), PQG_ERR_BAD_KEY);
  CHECK(key == NULL, "no handle for a bad ek");
  dk[768 * rank + 32] ^= 0x01; /* the stored H(ek) */
  EXPECT(pqg_kem_decaps(ctx, alg, dk, sk_len, ct, ct_len, ss, sizeof ss), PQG_ERR_BAD_KEY);
  EXPECT(pqg_key_new(alg, PQG_KEY_SECRET, dk, sk_len, &key), PQG_ERR_BAD_KEY);
  CHECK(key == NULL, "no handle for a bad dk");
  printf("%s: an ek with a coefficient >= q and a dk with a wrong H(ek) are PQG_ERR_BAD_KEY\n",
         name);
  free(ek);
  free(dk);
  free(ct);
}

int main(int argc, char **argv) {
  size_t n = (size_t)arg_or(argc, argv, 1, 64);
  pqg_context *ctx = new_context();
  one_set(ctx, PQG_ML_KEM_512, "ML-KEM-512", n);
  one_set(ctx, PQG_ML_KEM_768, "ML-KEM-768", n);
  one_set(ctx, PQG_ML_KEM_1024, "ML-KEM-1024", n);
  mlkem_key_checks(ctx, PQG_ML_KEM_512, "ML-KEM-512", 2);
  mlkem_key_checks(ctx, PQG_ML_KEM_768, "ML-KEM-768", 3);
  mlkem_key_checks(ctx, PQG_ML_KEM_1024, "ML-KEM-1024", 4);
  one_set(ctx, PQG_CTRU_PRIME_653, "CTRU-Prime-653", n);
  one_set(ctx, PQG_CTRU_PRIME_761, "CTRU-Prime-761", n);
  one_set(ctx, PQG_CTRU_PRIME_1277, "CTRU-Prime-1277", n);
  pqg_context_free(ctx);
  return finish("kem");
}

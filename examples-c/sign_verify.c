/* One-shot ML-DSA with stack buffers sized by the header's constants: for each parameter set,
 * keygen, sign, verify, and check that tampering with the message, the context or the
 * signature is caught; seeded keygen and rnd = 0 signing are deterministic; HashML-DSA and
 * external-mu signing round-trip.
 *
 * Usage: sign_verify [rounds]   (default 3 rounds per parameter set) */
#include "example.h"

#define MAX_PK PQG_ML_DSA_87_PUBLIC_KEY_BYTES
#define MAX_SK PQG_ML_DSA_87_SECRET_KEY_BYTES
#define MAX_SIG PQG_ML_DSA_87_SIGNATURE_BYTES

static void one_set(pqg_context *ctx, pqg_alg alg, const char *name, long rounds) {
  uint8_t pk[MAX_PK], sk[MAX_SK], sig[MAX_SIG], sig2[MAX_SIG];
  uint8_t pk2[MAX_PK], sk2[MAX_SK];
  const size_t pk_len = pqg_public_key_len(alg), sk_len = pqg_secret_key_len(alg);
  const size_t sig_len = pqg_signature_len(alg);
  const uint8_t context[] = "example context";
  uint8_t msg[64];
  uint8_t seed[32], zero_rnd[32], digest[32], mu[64];
  long r;

  memset(zero_rnd, 0, sizeof zero_rnd);
  for (r = 0; r < rounds; r++) {
    memset(msg, (int)r, sizeof msg);
    EXPECT(pqg_mldsa_keygen(ctx, alg, NULL, pk, pk_len, sk, sk_len), PQG_OK);
    EXPECT(pqg_mldsa_sign(ctx, alg, sk, sk_len, msg, sizeof msg, context, sizeof context - 1,
                          NULL, sig, sig_len),
           PQG_OK);
    EXPECT(pqg_mldsa_verify(ctx, alg, pk, pk_len, msg, sizeof msg, context, sizeof context - 1,
                            sig, sig_len),
           PQG_OK);

    /* Tampering: message, context, signature. */
    msg[5] ^= 1;
    EXPECT(pqg_mldsa_verify(ctx, alg, pk, pk_len, msg, sizeof msg, context, sizeof context - 1,
                            sig, sig_len),
           PQG_ERR_VERIFY_FAILED);
    msg[5] ^= 1;
    EXPECT(pqg_mldsa_verify(ctx, alg, pk, pk_len, msg, sizeof msg, context, 3, sig, sig_len),
           PQG_ERR_VERIFY_FAILED);
    sig[sig_len / 2] ^= 0x40;
    EXPECT(pqg_mldsa_verify(ctx, alg, pk, pk_len, msg, sizeof msg, context, sizeof context - 1,
                            sig, sig_len),
           PQG_ERR_VERIFY_FAILED);
  }

  /* Seeded keygen is deterministic; so is signing with rnd = 32 zero bytes. */
  memset(seed, 0x5a, sizeof seed);
  EXPECT(pqg_mldsa_keygen(ctx, alg, seed, pk, pk_len, sk, sk_len), PQG_OK);
  EXPECT(pqg_mldsa_keygen(ctx, alg, seed, pk2, pk_len, sk2, sk_len), PQG_OK);
  CHECK(memcmp(pk, pk2, pk_len) == 0 && memcmp(sk, sk2, sk_len) == 0,
        "seeded keygen is deterministic");
  EXPECT(pqg_mldsa_sign(ctx, alg, sk, sk_len, msg, sizeof msg, NULL, 0, zero_rnd, sig, sig_len),
         PQG_OK);
  EXPECT(pqg_mldsa_sign(ctx, alg, sk, sk_len, msg, sizeof msg, NULL, 0, zero_rnd, sig2, sig_len),
         PQG_OK);
  CHECK(memcmp(sig, sig2, sig_len) == 0, "rnd = 0 signing is deterministic");
  EXPECT(pqg_mldsa_sign(ctx, alg, sk, sk_len, msg, sizeof msg, NULL, 0, NULL, sig2, sig_len),
         PQG_OK);
  CHECK(memcmp(sig, sig2, sig_len) != 0, "hedged signing differs from deterministic");
  EXPECT(pqg_mldsa_verify(ctx, alg, pk, pk_len, msg, sizeof msg, NULL, 0, sig2, sig_len), PQG_OK);

  /* HashML-DSA over a caller-computed SHA2-256 digest (any 32 bytes serve here). */
  memset(digest, 0xd1, sizeof digest);
  EXPECT(pqg_hash_mldsa_sign(ctx, alg, PQG_HASH_SHA2_256, sk, sk_len, digest, sizeof digest,
                             context, 4, NULL, sig, sig_len),
         PQG_OK);
  EXPECT(pqg_hash_mldsa_verify(ctx, alg, PQG_HASH_SHA2_256, pk, pk_len, digest, sizeof digest,
                               context, 4, sig, sig_len),
         PQG_OK);
  EXPECT(pqg_hash_mldsa_verify(ctx, alg, PQG_HASH_SHA3_256, pk, pk_len, digest, sizeof digest,
                               context, 4, sig, sig_len),
         PQG_ERR_VERIFY_FAILED);
  /* A pure signature is not a HashML-DSA signature. */
  EXPECT(pqg_mldsa_verify(ctx, alg, pk, pk_len, digest, sizeof digest, context, 4, sig, sig_len),
         PQG_ERR_VERIFY_FAILED);

  /* External mu. */
  memset(mu, 0x3c, sizeof mu);
  EXPECT(pqg_mldsa_sign_mu(ctx, alg, sk, sk_len, mu, sizeof mu, NULL, sig, sig_len), PQG_OK);
  EXPECT(pqg_mldsa_verify_mu(ctx, alg, pk, pk_len, mu, sizeof mu, sig, sig_len), PQG_OK);
  mu[0] ^= 1;
  EXPECT(pqg_mldsa_verify_mu(ctx, alg, pk, pk_len, mu, sizeof mu, sig, sig_len),
         PQG_ERR_VERIFY_FAILED);

  printf("%s: %ld rounds of keygen/sign/verify, tampering rejected, deterministic modes, "
         "HashML-DSA and external mu ok\n",
         name, rounds);
}

int main(int argc, char **argv) {
  long rounds = arg_or(argc, argv, 1, 3);
  pqg_context *ctx = new_context();
  one_set(ctx, PQG_ML_DSA_44, "ML-DSA-44", rounds);
  one_set(ctx, PQG_ML_DSA_65, "ML-DSA-65", rounds);
  one_set(ctx, PQG_ML_DSA_87, "ML-DSA-87", rounds);
  pqg_context_free(ctx);
  return finish("sign_verify");
}

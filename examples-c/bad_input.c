/* Every kind of bad input returns its documented status, writes nothing it should not, and
 * crashes nothing: NULL pointers, wrong lengths, unknown algorithms/hashes/backends, a
 * malformed secret key, an over-long context string, garbage signatures, KEM misuse, bad
 * batch calls and bad batch items, and the job timeout semantics.
 *
 * Usage: bad_input [timeout_batch]   (items in the batch used for the timeout check) */
#include "example.h"

#define PK PQG_ML_DSA_44_PUBLIC_KEY_BYTES
#define SK PQG_ML_DSA_44_SECRET_KEY_BYTES
#define SIG PQG_ML_DSA_44_SIGNATURE_BYTES
#define CANARY 0xC5
#define A PQG_ML_DSA_44

static uint8_t pk[PK], sk[SK], sig[SIG], out[SIG + 1];

static void statuses_and_lengths(void) {
  int s;
  for (s = -200; s <= 200; s++) CHECK(pqg_status_str(s) != NULL, "status string never NULL");
  CHECK(strncmp(pqg_status_str(PQG_ERR_BAD_KEY), "PQG_ERR_BAD_KEY", 15) == 0, "status name");
  CHECK(pqg_public_key_len(0) == 0 && pqg_secret_key_len(99) == 0 &&
            pqg_signature_len(-1) == 0 && pqg_ciphertext_len(PQG_ML_DSA_44) == 0 &&
            pqg_shared_secret_len(4) == 0 && pqg_signature_len(PQG_CTRU_PRIME_653) == 0,
        "lengths of unknown or other-kind algorithms are 0");
  CHECK(pqg_version() != NULL, "version string");
}

static void contexts(void) {
  pqg_context *c = (pqg_context *)&c; /* junk that must be overwritten with NULL */
  EXPECT(pqg_context_new(PQG_BACKEND_CPU, NULL), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_context_new((pqg_backend)7, &c), PQG_ERR_INVALID_ARGUMENT);
  CHECK(c == NULL, "context out-pointer cleared on failure");
  pqg_context_free(NULL);
  CHECK(pqg_context_backend(NULL) == PQG_BACKEND_AUTO, "backend of NULL context");
  /* Demanding a GPU: a context on one, or PQG_ERR_NO_DEVICE and no context. */
  {
    pqg_status s = pqg_context_new(PQG_BACKEND_GPU, &c);
    CHECK(s == PQG_OK || s == PQG_ERR_NO_DEVICE, "GPU context: OK or NO_DEVICE");
    CHECK(s == PQG_OK ? pqg_context_backend(c) == PQG_BACKEND_GPU : c == NULL,
          "GPU context runs on the GPU, or none is made");
    printf("PQG_BACKEND_GPU: %s\n", pqg_status_str(s));
    pqg_context_free(c);
  }
}

static void keygen(pqg_context *ctx) {
  memset(out, CANARY, sizeof out);
  memset(sk, CANARY, sizeof sk);
  EXPECT(pqg_mldsa_keygen(NULL, A, NULL, out, PK, sk, SK), PQG_ERR_NULL_POINTER);
  CHECK(all_bytes(sk, SK, 0), "sk zeroed on failure");
  EXPECT(pqg_mldsa_keygen(ctx, 0, NULL, out, PK, sk, SK), PQG_ERR_INVALID_ARGUMENT);
  EXPECT(pqg_mldsa_keygen(ctx, 7, NULL, out, PK, sk, SK), PQG_ERR_INVALID_ARGUMENT);
  EXPECT(pqg_mldsa_keygen(ctx, PQG_CTRU_PRIME_653, NULL, out, PK, sk, SK),
         PQG_ERR_INVALID_ARGUMENT);
  EXPECT(pqg_mldsa_keygen(ctx, A, NULL, out, PK - 1, sk, SK), PQG_ERR_BAD_LENGTH);
  EXPECT(pqg_mldsa_keygen(ctx, A, NULL, out, PK, sk, SK - 1), PQG_ERR_BAD_LENGTH);
  EXPECT(pqg_mldsa_keygen(ctx, A, NULL, NULL, PK, sk, SK), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_mldsa_keygen(ctx, A, NULL, out, PK, NULL, SK), PQG_ERR_NULL_POINTER);
  CHECK(all_bytes(out, sizeof out, CANARY), "pk untouched on failure");
  EXPECT(pqg_mldsa_keygen(ctx, A, NULL, pk, PK, sk, SK), PQG_OK);
}

static void signing(pqg_context *ctx) {
  uint8_t bad_sk[SK], context[256];
  const uint8_t msg[] = "message";
  memset(context, 'c', sizeof context);
  memset(out, CANARY, sizeof out);
  EXPECT(pqg_mldsa_sign(NULL, A, sk, SK, msg, 7, NULL, 0, NULL, out, SIG), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_mldsa_sign(ctx, A, NULL, SK, msg, 7, NULL, 0, NULL, out, SIG), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_mldsa_sign(ctx, A, sk, SK, NULL, 7, NULL, 0, NULL, out, SIG), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_mldsa_sign(ctx, A, sk, SK, msg, 7, NULL, 3, NULL, out, SIG), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_mldsa_sign(ctx, A, sk, SK, msg, 7, NULL, 0, NULL, NULL, SIG), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_mldsa_sign(ctx, A, sk, SK - 1, msg, 7, NULL, 0, NULL, out, SIG), PQG_ERR_BAD_LENGTH);
  EXPECT(pqg_mldsa_sign(ctx, A, sk, SK, msg, 7, NULL, 0, NULL, out, SIG + 1), PQG_ERR_BAD_LENGTH);
  EXPECT(pqg_mldsa_sign(ctx, PQG_ML_DSA_65, sk, SK, msg, 7, NULL, 0, NULL, out, SIG),
         PQG_ERR_BAD_LENGTH);
  EXPECT(pqg_mldsa_sign(ctx, 42, sk, SK, msg, 7, NULL, 0, NULL, out, SIG),
         PQG_ERR_INVALID_ARGUMENT);
  EXPECT(pqg_mldsa_sign(ctx, A, sk, SK, msg, 7, context, 256, NULL, out, SIG),
         PQG_ERR_INVALID_ARGUMENT);
  /* Malformed key: the first s1 coefficient (byte 128 = 32 rho + 32 K + 64 tr) out of range. */
  memcpy(bad_sk, sk, SK);
  bad_sk[128] = 0xFF;
  EXPECT(pqg_mldsa_sign(ctx, A, bad_sk, SK, msg, 7, NULL, 0, NULL, out, SIG), PQG_ERR_BAD_KEY);
  CHECK(all_bytes(out, sizeof out, CANARY), "signature untouched by failed signing");

  /* Valid edge cases: empty message as NULL, a 255-byte context. */
  EXPECT(pqg_mldsa_sign(ctx, A, sk, SK, NULL, 0, NULL, 0, NULL, sig, SIG), PQG_OK);
  EXPECT(pqg_mldsa_verify(ctx, A, pk, PK, NULL, 0, NULL, 0, sig, SIG), PQG_OK);
  EXPECT(pqg_mldsa_sign(ctx, A, sk, SK, msg, 7, context, 255, NULL, sig, SIG), PQG_OK);
  EXPECT(pqg_mldsa_verify(ctx, A, pk, PK, msg, 7, context, 255, sig, SIG), PQG_OK);

  /* Pre-hash and mu shapes. */
  EXPECT(pqg_hash_mldsa_sign(ctx, A, (pqg_hash)0, sk, SK, out, 32, NULL, 0, NULL, out, SIG),
         PQG_ERR_INVALID_ARGUMENT);
  EXPECT(pqg_hash_mldsa_sign(ctx, A, (pqg_hash)13, sk, SK, msg, 7, NULL, 0, NULL, out, SIG),
         PQG_ERR_INVALID_ARGUMENT);
  EXPECT(pqg_hash_mldsa_sign(ctx, A, PQG_HASH_SHA2_256, sk, SK, context, 31, NULL, 0, NULL, out,
                             SIG),
         PQG_ERR_BAD_LENGTH);
  EXPECT(pqg_hash_mldsa_sign(ctx, A, PQG_HASH_SHAKE_128, sk, SK, context, 32, context, 256, NULL,
                             out, SIG),
         PQG_ERR_INVALID_ARGUMENT);
  EXPECT(pqg_mldsa_sign_mu(ctx, A, sk, SK, context, 63, NULL, out, SIG), PQG_ERR_BAD_LENGTH);
  EXPECT(pqg_mldsa_verify_mu(ctx, A, pk, PK, context, 65, sig, SIG), PQG_ERR_BAD_LENGTH);
  CHECK(all_bytes(out, sizeof out, CANARY), "signature untouched by failed signing");
}

static void verification(pqg_context *ctx) {
  uint8_t garbage[SIG];
  const uint8_t msg[] = "message";
  size_t i;
  for (i = 0; i < SIG; i++) garbage[i] = (uint8_t)(i * 131 + 7);
  EXPECT(pqg_mldsa_sign(ctx, A, sk, SK, msg, 7, NULL, 0, NULL, sig, SIG), PQG_OK);
  EXPECT(pqg_mldsa_verify(ctx, A, pk, PK, msg, 7, NULL, 0, garbage, SIG), PQG_ERR_VERIFY_FAILED);
  EXPECT(pqg_mldsa_verify(ctx, A, pk, PK, msg, 7, NULL, 0, sig, SIG - 1), PQG_ERR_VERIFY_FAILED);
  EXPECT(pqg_mldsa_verify(ctx, A, pk, PK, msg, 7, NULL, 0, sig, 0), PQG_ERR_VERIFY_FAILED);
  EXPECT(pqg_mldsa_verify(ctx, A, pk, PK - 1, msg, 7, NULL, 0, sig, SIG), PQG_ERR_BAD_LENGTH);
  EXPECT(pqg_mldsa_verify(ctx, A, pk, PK, msg, 7, NULL, 0, NULL, SIG), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_mldsa_verify(ctx, A, NULL, PK, msg, 7, NULL, 0, sig, SIG), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_mldsa_verify(ctx, PQG_CTRU_PRIME_761, pk, PK, msg, 7, NULL, 0, sig, SIG),
         PQG_ERR_INVALID_ARGUMENT);
  EXPECT(pqg_mldsa_verify(ctx, A, pk, PK, msg, 7, NULL, 0, sig, SIG), PQG_OK);
}

static void kem(pqg_context *ctx) {
  const pqg_alg K = PQG_CTRU_PRIME_653;
  uint8_t kpk[PQG_CTRU_PRIME_653_PUBLIC_KEY_BYTES], ksk[PQG_CTRU_PRIME_653_SECRET_KEY_BYTES];
  uint8_t ct[PQG_CTRU_PRIME_653_CIPHERTEXT_BYTES], ss[32];
  /* Not a KEM: there is no secret-key length to hold ksk to, so nothing is written to it. */
  memset(ksk, CANARY, sizeof ksk);
  EXPECT(pqg_kem_keygen(ctx, A, NULL, kpk, sizeof kpk, ksk, sizeof ksk), PQG_ERR_INVALID_ARGUMENT);
  CHECK(all_bytes(ksk, sizeof ksk, CANARY), "nothing written for an unknown KEM");
  /* The right sk length but a wrong pk length: the secret output is zeroed. */
  EXPECT(pqg_kem_keygen(ctx, K, NULL, kpk, sizeof kpk - 1, ksk, sizeof ksk), PQG_ERR_BAD_LENGTH);
  CHECK(all_bytes(ksk, sizeof ksk, 0), "KEM sk zeroed on failure");
  EXPECT(pqg_kem_keygen(ctx, K, NULL, kpk, sizeof kpk, ksk, sizeof ksk), PQG_OK);
  memset(ss, CANARY, sizeof ss);
  EXPECT(pqg_kem_encaps(ctx, K, kpk, sizeof kpk - 1, NULL, ct, sizeof ct, ss, 32),
         PQG_ERR_BAD_LENGTH);
  CHECK(all_bytes(ss, 32, 0), "shared secret zeroed on failure");
  EXPECT(pqg_kem_encaps(ctx, K, kpk, sizeof kpk, NULL, ct, sizeof ct, ss, 31), PQG_ERR_BAD_LENGTH);
  EXPECT(pqg_kem_encaps(ctx, K, NULL, sizeof kpk, NULL, ct, sizeof ct, ss, 32),
         PQG_ERR_NULL_POINTER);
  EXPECT(pqg_kem_encaps(ctx, K, kpk, sizeof kpk, NULL, ct, sizeof ct, ss, 32), PQG_OK);
  memset(ss, CANARY, sizeof ss);
  EXPECT(pqg_kem_decaps(ctx, K, ksk, sizeof ksk, ct, sizeof ct - 1, ss, 32), PQG_ERR_BAD_LENGTH);
  CHECK(all_bytes(ss, 32, 0), "shared secret zeroed on failure");
  EXPECT(pqg_kem_decaps(ctx, PQG_CTRU_PRIME_761, ksk, sizeof ksk, ct, sizeof ct, ss, 32),
         PQG_ERR_BAD_LENGTH);
  EXPECT(pqg_kem_decaps(ctx, PQG_ML_DSA_87, ksk, sizeof ksk, ct, sizeof ct, ss, 32),
         PQG_ERR_INVALID_ARGUMENT);
}

static void batches(pqg_context *ctx) {
  pqg_sign_request req[4];
  pqg_status st[4] = {PQG_PENDING, PQG_PENDING, PQG_PENDING, PQG_PENDING};
  uint8_t sigs[4][SIG], context[256];
  pqg_job *job = NULL;
  int i;
  memset(context, 'c', sizeof context);
  for (i = 0; i < 4; i++) {
    req[i].sk = sk;
    req[i].msg = (const uint8_t *)"m";
    req[i].msg_len = 1;
    req[i].context = NULL;
    req[i].context_len = 0;
    req[i].rnd = NULL;
    req[i].sig = sigs[i];
  }
  /* Bad call shapes fail the whole call. */
  EXPECT(pqg_mldsa_sign_submit(NULL, A, req, 4, st, &job), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_mldsa_sign_submit(ctx, A, NULL, 4, st, &job), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_mldsa_sign_submit(ctx, A, req, 4, NULL, &job), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_mldsa_sign_submit(ctx, A, req, 4, st, NULL), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_mldsa_sign_submit(ctx, 77, req, 4, st, &job), PQG_ERR_INVALID_ARGUMENT);
  CHECK(job == NULL && st[0] == PQG_PENDING, "rejected submit starts nothing");
  /* An empty job is fine. */
  EXPECT(pqg_mldsa_sign_submit(ctx, A, NULL, 0, NULL, &job), PQG_OK);
  EXPECT(pqg_job_wait(job, -1), PQG_OK);
  pqg_job_free(job);
  /* Bad items get their own status; the others complete. */
  req[1].sk = NULL;
  req[2].context = context;
  req[2].context_len = 256;
  EXPECT(pqg_mldsa_sign_submit(ctx, A, req, 4, st, &job), PQG_OK);
  EXPECT(pqg_job_wait(job, -1), PQG_OK);
  pqg_job_free(job);
  EXPECT(st[0], PQG_OK);
  EXPECT(st[1], PQG_ERR_NULL_POINTER);
  EXPECT(st[2], PQG_ERR_INVALID_ARGUMENT);
  EXPECT(st[3], PQG_OK);
  /* Jobs: NULL handling. */
  EXPECT(pqg_job_poll(NULL), PQG_ERR_NULL_POINTER);
  EXPECT(pqg_job_wait(NULL, 0), PQG_ERR_NULL_POINTER);
  pqg_job_free(NULL);
}

/* One batch of n keygens: wait(1) either times out (the job keeps running; poll says PENDING
   or OK) or finds the job done; either way wait(-1) then completes it with every status
   written. Returns what wait(1) said. */
static pqg_status timed_batch(pqg_context *ctx, pqg_alg alg, size_t n, uint8_t *pks, uint8_t *sks,
                              pqg_status *st) {
  pqg_job *job = NULL;
  pqg_status first;
  size_t i, ok = 0;
  for (i = 0; i < n; i++) st[i] = PQG_PENDING;
  EXPECT(pqg_mldsa_keygen_submit(ctx, alg, n, NULL, pks, sks, st, &job), PQG_OK);
  first = pqg_job_wait(job, 1);
  CHECK(first == PQG_ERR_TIMEOUT || first == PQG_OK, "wait(1) times out or finds the job done");
  if (first == PQG_ERR_TIMEOUT) {
    pqg_status p = pqg_job_poll(job);
    CHECK(p == PQG_PENDING || p == PQG_OK, "poll after a timeout is PENDING or OK");
  }
  EXPECT(pqg_job_wait(job, -1), PQG_OK);
  EXPECT(pqg_job_poll(job), PQG_OK);
  EXPECT(pqg_job_wait(job, 0), PQG_OK);
  pqg_job_free(job);
  for (i = 0; i < n; i++) ok += st[i] == PQG_OK;
  CHECK(ok == n, "every keygen item completed");
  return first;
}

/* A batch too big to finish within 1 ms: wait(1) times out and the job keeps running. On a
   loaded machine this thread may be stalled between the submit and the wait for longer than
   the whole batch takes, so the batch doubles (up to three times) until one wait times out. */
static void timeouts(pqg_context *ctx, size_t n) {
  const pqg_alg alg = PQG_ML_DSA_87;
  const size_t most = n * 8;
  uint8_t *pks = xmalloc(most * pqg_public_key_len(alg));
  uint8_t *sks = xmalloc(most * pqg_secret_key_len(alg));
  pqg_status *st = (pqg_status *)xmalloc(most * sizeof(pqg_status));
  pqg_job *job = NULL;
  pqg_status first;
  size_t i, ok;
  for (;;) {
    first = timed_batch(ctx, alg, n, pks, sks, st);
    if (first == PQG_ERR_TIMEOUT || n == most) break;
    n *= 2;
  }
  EXPECT(first, PQG_ERR_TIMEOUT);
  /* Freeing a running job waits for it. */
  for (i = 0; i < n; i++) st[i] = PQG_PENDING;
  EXPECT(pqg_mldsa_keygen_submit(ctx, alg, n, NULL, pks, sks, st, &job), PQG_OK);
  pqg_job_free(job);
  for (ok = 0, i = 0; i < n; i++) ok += st[i] == PQG_OK;
  CHECK(ok == n, "pqg_job_free waited for the job");
  free(pks);
  free(sks);
  free(st);
}

int main(int argc, char **argv) {
  size_t n = (size_t)arg_or(argc, argv, 1, 500);
  pqg_context *ctx = new_context();
  statuses_and_lengths();
  contexts();
  keygen(ctx);
  signing(ctx);
  verification(ctx);
  kem(ctx);
  batches(ctx);
  timeouts(ctx, n);
  pqg_context_free(ctx);
  printf("bad_input: NULLs, wrong lengths, unknown alg/hash/backend, malformed key, 256-byte "
         "context, garbage and short signatures, KEM misuse, bad batches and items, job "
         "timeouts\n");
  return finish("bad_input");
}

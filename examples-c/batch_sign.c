/* The asynchronous batch flow: generate keys in a batch, sign n messages of mixed lengths
 * (and some with a context string) in one job, keep doing other work while polling it, wait,
 * then verify every signature in a verify batch and check each item's status. Every 997th
 * signature is corrupted before verification and must be the only failures.
 *
 * Usage: batch_sign [n]   (default 10000 for ML-DSA-44; ML-DSA-65/87 get n/4 each) */
#include "example.h"

#define KEYS 8

/* Busy work standing in for what a server does while the job runs. */
static unsigned long other_work(unsigned long x) {
  int i;
  for (i = 0; i < 10000; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
  return x;
}

static void run(pqg_context *ctx, pqg_alg alg, const char *name, size_t n) {
  const size_t pk_len = pqg_public_key_len(alg), sk_len = pqg_secret_key_len(alg);
  const size_t sig_len = pqg_signature_len(alg);
  uint8_t *pks = xmalloc(KEYS * pk_len), *sks = xmalloc(KEYS * sk_len);
  uint8_t *sigs = xmalloc(n * sig_len);
  size_t *msg_len = (size_t *)xmalloc(n * sizeof(size_t));
  uint8_t **msgs = (uint8_t **)xmalloc(n * sizeof(uint8_t *));
  pqg_sign_request *sreq = (pqg_sign_request *)xmalloc(n * sizeof(pqg_sign_request));
  pqg_verify_request *vreq = (pqg_verify_request *)xmalloc(n * sizeof(pqg_verify_request));
  pqg_status *st = (pqg_status *)xmalloc(n * sizeof(pqg_status));
  pqg_status kst[KEYS];
  const uint8_t context[] = "batch";
  pqg_job *job = NULL;
  unsigned long polls = 0, work = 1;
  size_t i, ok = 0, failed = 0, expected_failures = 0;

  /* A server registers its long-lived key and signature arrays once: on a GPU context they
     then move by DMA instead of host copies (on the CPU this is accepted and does nothing). */
  EXPECT(pqg_host_register(ctx, pks, KEYS * pk_len), PQG_OK);
  EXPECT(pqg_host_register(ctx, sks, KEYS * sk_len), PQG_OK);
  EXPECT(pqg_host_register(ctx, sigs, n * sig_len), PQG_OK);

  /* Keys, as a batch job too. */
  EXPECT(pqg_mldsa_keygen_submit(ctx, alg, KEYS, NULL, pks, sks, kst, &job), PQG_OK);
  EXPECT(pqg_job_wait(job, -1), PQG_OK);
  pqg_job_free(job);
  for (i = 0; i < KEYS; i++) EXPECT(kst[i], PQG_OK);

  /* Messages of 0..2999 bytes; every third item carries a context string. */
  for (i = 0; i < n; i++) {
    size_t j;
    msg_len[i] = (i * 7919) % 3000;
    msgs[i] = msg_len[i] ? xmalloc(msg_len[i]) : NULL;
    for (j = 0; j < msg_len[i]; j++) msgs[i][j] = (uint8_t)(i + j * 31);
    sreq[i].sk = sks + (i % KEYS) * sk_len;
    sreq[i].msg = msgs[i];
    sreq[i].msg_len = msg_len[i];
    sreq[i].context = i % 3 == 0 ? context : NULL;
    sreq[i].context_len = i % 3 == 0 ? sizeof context - 1 : 0;
    sreq[i].rnd = NULL;
    sreq[i].sig = sigs + i * sig_len;
    st[i] = PQG_PENDING;
  }

  EXPECT(pqg_mldsa_sign_submit(ctx, alg, sreq, n, st, &job), PQG_OK);
  while (pqg_job_poll(job) == PQG_PENDING) {
    work = other_work(work);
    polls++;
  }
  EXPECT(pqg_job_wait(job, -1), PQG_OK);
  pqg_job_free(job);
  for (i = 0; i < n; i++) {
    if (st[i] != PQG_OK) {
      EXPECT(st[i], PQG_OK);
      break;
    }
  }

  /* Corrupt a few signatures, then verify everything in one batch. */
  for (i = 0; i < n; i++) {
    if (i % 997 == 5) {
      sigs[i * sig_len + (i % sig_len)] ^= 0x01;
      expected_failures++;
    }
    vreq[i].pk = pks + (i % KEYS) * pk_len;
    vreq[i].msg = msgs[i];
    vreq[i].msg_len = msg_len[i];
    vreq[i].context = sreq[i].context;
    vreq[i].context_len = sreq[i].context_len;
    vreq[i].sig = sigs + i * sig_len;
    vreq[i].sig_len = sig_len;
    st[i] = PQG_PENDING;
  }
  EXPECT(pqg_mldsa_verify_submit(ctx, alg, vreq, n, st, &job), PQG_OK);
  EXPECT(pqg_job_wait(job, -1), PQG_OK);
  EXPECT(pqg_job_poll(job), PQG_OK);
  pqg_job_free(job);
  for (i = 0; i < n; i++) {
    pqg_status want = i % 997 == 5 ? PQG_ERR_VERIFY_FAILED : PQG_OK;
    if (st[i] == PQG_OK) ok++;
    if (st[i] == PQG_ERR_VERIFY_FAILED) failed++;
    if (st[i] != want) {
      EXPECT(st[i], want);
      break;
    }
  }
  CHECK(ok + failed == n && failed == expected_failures, "every verify item got its status");
  printf("%s: signed %lu messages (0..2999 bytes) in one job while doing other work "
         "(%lu polls, work %lx), verified in one job: %lu valid, %lu corrupted rejected\n",
         name, (unsigned long)n, polls, work & 0xff, (unsigned long)ok, (unsigned long)failed);

  /* Unregister before freeing. */
  EXPECT(pqg_host_unregister(ctx, pks), PQG_OK);
  EXPECT(pqg_host_unregister(ctx, sks), PQG_OK);
  EXPECT(pqg_host_unregister(ctx, sigs), PQG_OK);
  for (i = 0; i < n; i++) free(msgs[i]);
  free(pks);
  free(sks);
  free(sigs);
  free(msg_len);
  free(msgs);
  free(sreq);
  free(vreq);
  free(st);
}

int main(int argc, char **argv) {
  size_t n = (size_t)arg_or(argc, argv, 1, 10000);
  pqg_context *ctx = new_context();
  run(ctx, PQG_ML_DSA_44, "ML-DSA-44", n);
  run(ctx, PQG_ML_DSA_65, "ML-DSA-65", n / 4 ? n / 4 : 1);
  run(ctx, PQG_ML_DSA_87, "ML-DSA-87", n / 4 ? n / 4 : 1);
  pqg_context_free(ctx);
  return finish("batch_sign");
}

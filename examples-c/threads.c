/* One context shared by many threads: each thread generates a key (parameter sets rotate),
 * signs and verifies messages one at a time, checks a tampered signature fails, and also
 * runs a small verify batch of its own, all concurrently.
 *
 * Usage: threads [threads] [rounds]   (default 16 threads, 4 rounds each) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#include "example.h"

#define MAX_PK PQG_ML_DSA_87_PUBLIC_KEY_BYTES
#define MAX_SK PQG_ML_DSA_87_SECRET_KEY_BYTES
#define MAX_SIG PQG_ML_DSA_87_SIGNATURE_BYTES
#define BATCH 4

typedef struct {
  pqg_context *ctx;
  int id;
  long rounds;
  int failures; /* per thread: the shared counters in example.h are not thread-safe */
} worker;

static void *run(void *arg) {
  worker *w = (worker *)arg;
  static const pqg_alg algs[3] = {PQG_ML_DSA_44, PQG_ML_DSA_65, PQG_ML_DSA_87};
  const pqg_alg alg = algs[w->id % 3];
  const size_t pk_len = pqg_public_key_len(alg), sk_len = pqg_secret_key_len(alg);
  const size_t sig_len = pqg_signature_len(alg);
  uint8_t *pk = xmalloc(MAX_PK), *sk = xmalloc(MAX_SK), *sigs = xmalloc(BATCH * MAX_SIG);
  uint8_t msg[100];
  pqg_verify_request req[BATCH];
  pqg_status st[BATCH];
  pqg_job *job = NULL;
  long r;
  int i;

  if (pqg_mldsa_keygen(w->ctx, alg, NULL, pk, pk_len, sk, sk_len) != PQG_OK) w->failures++;
  for (r = 0; r < w->rounds; r++) {
    for (i = 0; i < BATCH; i++) {
      uint8_t *sig = sigs + i * sig_len;
      memset(msg, w->id * 16 + i, sizeof msg);
      if (pqg_mldsa_sign(w->ctx, alg, sk, sk_len, msg, sizeof msg, NULL, 0, NULL, sig,
                         sig_len) != PQG_OK)
        w->failures++;
      if (pqg_mldsa_verify(w->ctx, alg, pk, pk_len, msg, sizeof msg, NULL, 0, sig, sig_len) !=
          PQG_OK)
        w->failures++;
    }
    /* The last message was signed as message BATCH-1; re-verify all four in a batch where
       only item BATCH-1 matches its message. */
    for (i = 0; i < BATCH; i++) {
      req[i].pk = pk;
      req[i].msg = msg;
      req[i].msg_len = sizeof msg;
      req[i].context = NULL;
      req[i].context_len = 0;
      req[i].sig = sigs + i * sig_len;
      req[i].sig_len = sig_len;
    }
    if (pqg_mldsa_verify_submit(w->ctx, alg, req, BATCH, st, &job) != PQG_OK ||
        pqg_job_wait(job, -1) != PQG_OK) {
      w->failures++;
    } else {
      for (i = 0; i < BATCH; i++) {
        if (st[i] != (i == BATCH - 1 ? PQG_OK : PQG_ERR_VERIFY_FAILED)) w->failures++;
      }
    }
    pqg_job_free(job);
  }
  free(pk);
  free(sk);
  free(sigs);
  return NULL;
}

int main(int argc, char **argv) {
  long nthreads = arg_or(argc, argv, 1, 16), rounds = arg_or(argc, argv, 2, 4);
  pqg_context *ctx = new_context();
  pthread_t *tids = (pthread_t *)xmalloc((size_t)nthreads * sizeof(pthread_t));
  worker *ws = (worker *)xmalloc((size_t)nthreads * sizeof(worker));
  long t;

  for (t = 0; t < nthreads; t++) {
    ws[t].ctx = ctx;
    ws[t].id = (int)t;
    ws[t].rounds = rounds;
    ws[t].failures = 0;
    CHECK(pthread_create(&tids[t], NULL, run, &ws[t]) == 0, "pthread_create");
  }
  for (t = 0; t < nthreads; t++) {
    pthread_join(tids[t], NULL);
    CHECK(ws[t].failures == 0, "a thread saw a wrong status");
    if (ws[t].failures) fprintf(stderr, "thread %ld: %d failures\n", t, ws[t].failures);
  }
  printf("%ld threads sharing one context: each %ld rounds of %d sign+verify calls and a "
         "%d-item verify batch\n",
         nthreads, rounds, BATCH, BATCH);
  pqg_context_free(ctx);
  free(tids);
  free(ws);
  return finish("threads");
}

/* Serving one request at a time: key handles, threads making blocking single calls, and an
 * event loop keeping many asynchronous single items outstanding, woken by the context's
 * eventfd (poll(2)) and counting completions with a callback.
 *
 * Usage: serve [threads] [calls per thread] [async outstanding]   (default 16 16 256) */
#define _POSIX_C_SOURCE 200809L
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "example.h"

#define ALG PQG_ML_DSA_44
#define PK_LEN PQG_ML_DSA_44_PUBLIC_KEY_BYTES
#define SK_LEN PQG_ML_DSA_44_SECRET_KEY_BYTES
#define SIG_LEN PQG_ML_DSA_44_SIGNATURE_BYTES

typedef struct {
  pqg_context *ctx;
  const pqg_key *sk, *pk;
  int id;
  long calls;
  int failures; /* per thread: the counters in example.h are not thread-safe */
} worker;

/* Blocking single calls: sign with the secret-key handle, verify with the public one. */
static void *run(void *arg) {
  worker *w = (worker *)arg;
  uint8_t sig[SIG_LEN], msg[32];
  long i;
  for (i = 0; i < w->calls; i++) {
    memset(msg, (int)(w->id * 31 + i), sizeof msg);
    if (pqg_mldsa_sign_key(w->ctx, w->sk, msg, sizeof msg, NULL, 0, NULL, sig, SIG_LEN) != PQG_OK)
      w->failures++;
    if (pqg_mldsa_verify_key(w->ctx, w->pk, msg, sizeof msg, NULL, 0, sig, SIG_LEN) != PQG_OK)
      w->failures++;
    msg[0] ^= 1;
    if (pqg_mldsa_verify_key(w->ctx, w->pk, msg, sizeof msg, NULL, 0, sig, SIG_LEN) !=
        PQG_ERR_VERIFY_FAILED)
      w->failures++;
  }
  return NULL;
}

/* One outstanding asynchronous signature. */
typedef struct {
  pqg_job *job;
  pqg_status status;
  uint8_t msg[32];
  uint8_t sig[SIG_LEN];
} slot;

/* Called from a library thread once per job, when its results are written. Only counts:
 * a callback must not wait on or free the job (see pqg_context_set_callback). */
static void on_complete(void *user, pqg_job *job) {
  (void)job;
  __atomic_fetch_add((long *)user, 1, __ATOMIC_RELAXED);
}

/* Keeps `outstanding` signatures in flight for `total` submissions, sleeping in poll() on
 * the context's eventfd between completions. */
static void event_loop(pqg_context *ctx, const pqg_key *sk, const pqg_key *pk, long outstanding,
                       long total) {
  slot *slots = (slot *)xmalloc(outstanding * sizeof(slot));
  long submitted = 0, done = 0, i;
  int fd = -1;
  EXPECT(pqg_context_event_fd(ctx, &fd), PQG_OK);
  for (i = 0; i < outstanding; i++) slots[i].job = NULL;
  while (done < total) {
    struct pollfd p;
    uint64_t count;
    /* Refill free slots. */
    for (i = 0; i < outstanding && submitted < total; i++) {
      slot *s = &slots[i];
      if (s->job != NULL) continue;
      memset(s->msg, (int)submitted, sizeof s->msg);
      EXPECT(pqg_mldsa_sign_async(ctx, sk, s->msg, sizeof s->msg, NULL, 0, NULL, s->sig, SIG_LEN,
                                  &s->status, &s->job),
             PQG_OK);
      submitted++;
    }
    /* Sleep until some job completes, then reset the counter and collect. */
    p.fd = fd;
    p.events = POLLIN;
    p.revents = 0;
    if (poll(&p, 1, 10000) <= 0) {
      CHECK(0, "no completion within 10 s");
      break;
    }
    if (read(fd, &count, sizeof count) != (ssize_t)sizeof count) CHECK(0, "eventfd read");
    for (i = 0; i < outstanding; i++) {
      slot *s = &slots[i];
      if (s->job == NULL || pqg_job_poll(s->job) != PQG_OK) continue;
      pqg_job_free(s->job);
      s->job = NULL;
      EXPECT(s->status, PQG_OK);
      EXPECT(pqg_mldsa_verify_key(ctx, pk, s->msg, sizeof s->msg, NULL, 0, s->sig, SIG_LEN), PQG_OK);
      done++;
    }
  }
  for (i = 0; i < outstanding; i++) pqg_job_free(slots[i].job); /* NULL is a no-op */
  free(slots);
}

int main(int argc, char **argv) {
  const long threads = arg_or(argc, argv, 1, 16), calls = arg_or(argc, argv, 2, 16);
  const long outstanding = arg_or(argc, argv, 3, 256);
  pqg_context *ctx = NULL;
  pqg_key *sk = NULL, *pk = NULL, *bad = NULL;
  uint8_t pkb[PK_LEN], skb[SK_LEN];
  pthread_t *tid = (pthread_t *)xmalloc(threads * sizeof(pthread_t));
  worker *w = (worker *)xmalloc(threads * sizeof(worker));
  long i, callbacks = 0;
  int64_t v = 0;

  EXPECT(pqg_context_new(PQG_BACKEND_AUTO, &ctx), PQG_OK);
  /* Options: at most 500 us of waiting for a batch to fill. */
  EXPECT(pqg_context_set_option(ctx, PQG_OPT_MAX_WAIT_US, 500), PQG_OK);
  EXPECT(pqg_context_get_option(ctx, PQG_OPT_MAX_WAIT_US, &v), PQG_OK);
  CHECK(v == 500, "option read back");
  EXPECT(pqg_context_set_option(ctx, PQG_OPT_MAX_BATCH, 0), PQG_ERR_INVALID_ARGUMENT);

  /* Handles: checked and expanded once, then shared by every call below. */
  EXPECT(pqg_mldsa_keygen(ctx, ALG, NULL, pkb, PK_LEN, skb, SK_LEN), PQG_OK);
  EXPECT(pqg_key_new(ALG, PQG_KEY_SECRET, skb, SK_LEN, &sk), PQG_OK);
  EXPECT(pqg_key_new(ALG, PQG_KEY_PUBLIC, pkb, PK_LEN, &pk), PQG_OK);
  EXPECT(pqg_key_new(ALG, PQG_KEY_PUBLIC, pkb, 7, &bad), PQG_ERR_BAD_LENGTH);
  CHECK(bad == NULL, "no handle on failure");

  for (i = 0; i < threads; i++) {
    w[i].ctx = ctx;
    w[i].sk = sk;
    w[i].pk = pk;
    w[i].id = (int)i;
    w[i].calls = calls;
    w[i].failures = 0;
    CHECK(pthread_create(&tid[i], NULL, run, &w[i]) == 0, "pthread_create");
  }
  for (i = 0; i < threads; i++) {
    pthread_join(tid[i], NULL);
    CHECK(w[i].failures == 0, "blocking calls of a thread");
  }

  EXPECT(pqg_context_set_callback(ctx, on_complete, &callbacks), PQG_OK);
  event_loop(ctx, sk, pk, outstanding, 4 * outstanding);
  CHECK(__atomic_load_n(&callbacks, __ATOMIC_RELAXED) == 4 * outstanding, "one callback per job");
  EXPECT(pqg_context_set_callback(ctx, NULL, NULL), PQG_OK);

  pqg_key_free(sk);
  pqg_key_free(pk);
  pqg_context_free(ctx);
  free(tid);
  free(w);
  return finish("serve");
}

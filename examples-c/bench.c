/* A C batch benchmark: how a C server drives pqgpu at full speed.
 *
 * For every ML-DSA, CTRU-Prime and ML-KEM parameter set (SLH-DSA when asked for): one array per output kind,
 * registered once with pqg_host_register (so a GPU moves it by DMA), requests filled once,
 * then pqg_*_submit + pqg_job_wait timed over a few repetitions, with NULL seeds, coins and
 * rnd (fresh randomness) and 32-byte messages. KEM encapsulation and decapsulation run under
 * one server key; ML-KEM's also with a key per item (rows "encaps/k", "decaps/k"). Every
 * status is checked, every signature verified and every shared secret compared, so a fast
 * wrong answer fails the run.
 *
 * Usage: bench [n [reps [pageable]]]   (defaults: 65536 items, 3 repetitions, registered;
 *        any third argument uses plain heap memory instead). PQG_BENCH_ONLY=ML-KEM (a name
 *        prefix) runs only the parameter sets whose names start with it; the SLH-DSA sets
 *        run only when named so (PQG_BENCH_ONLY=SLH-DSA, =SLH-DSA-SHA2-128f), at n/8 items
 *        (f sets) or n/128 (s sets). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c99 */
#include <time.h>

#include "example.h"

#define MSG_LEN 32

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int g_register = 1;

static void reg(pqg_context *ctx, const uint8_t *p, size_t len) {
  if (g_register) EXPECT(pqg_host_register(ctx, p, len), PQG_OK);
}

static void unreg(pqg_context *ctx, const uint8_t *p) {
  if (g_register) EXPECT(pqg_host_unregister(ctx, p), PQG_OK);
}

/* Submits (through `submit`), waits, frees; returns the seconds from submit to completion. */
#define TIMED(submit_call)                                  \
  do {                                                      \
    pqg_job *job_ = NULL;                                   \
    double t0_ = now();                                     \
    EXPECT((submit_call), PQG_OK);                          \
    EXPECT(pqg_job_wait(job_, -1), PQG_OK);                 \
    secs = now() - t0_;                                     \
    pqg_job_free(job_);                                     \
  } while (0)

static void all_ok(const pqg_status *st, size_t n, const char *what) {
  size_t i, bad = 0;
  for (i = 0; i < n; i++) bad += st[i] != PQG_OK;
  if (bad) fprintf(stderr, "%s: %lu of %lu items failed\n", what, (unsigned long)bad, (unsigned long)n);
  CHECK(bad == 0, what);
}

static void report(const char *name, const char *op, size_t n, double best) {
  printf("%-16s %-8s %8lu items  %10.0f ops/s\n", name, op, (unsigned long)n, (double)n / best);
}

static double keep_best(double best, double secs) { return best == 0 || secs < best ? secs : best; }

/* slh: the SLH-DSA submit functions (same requests, n-byte rnd) instead of ML-DSA's. */
static void sig(pqg_context *ctx, pqg_alg alg, const char *name, size_t n, int reps, int slh) {
  const size_t pkl = pqg_public_key_len(alg), skl = pqg_secret_key_len(alg);
  const size_t sgl = pqg_signature_len(alg);
  uint8_t *pks = xmalloc(n * pkl), *sks = xmalloc(n * skl), *sigs = xmalloc(n * sgl);
  uint8_t *msgs = xmalloc(n * MSG_LEN);
  pqg_status *st = (pqg_status *)xmalloc(n * sizeof(pqg_status));
  pqg_sign_request *sreq = (pqg_sign_request *)xmalloc(n * sizeof(pqg_sign_request));
  pqg_verify_request *vreq = (pqg_verify_request *)xmalloc(n * sizeof(pqg_verify_request));
  double secs = 0, best[3] = {0, 0, 0};
  size_t i;
  int r;

  for (i = 0; i < n * MSG_LEN; i++) msgs[i] = (uint8_t)(i * 131u + 7u);
  reg(ctx, pks, n * pkl);
  reg(ctx, sks, n * skl);
  reg(ctx, sigs, n * sgl);
  reg(ctx, msgs, n * MSG_LEN);
  for (i = 0; i < n; i++) {
    pqg_sign_request s = {sks + i * skl, msgs + i * MSG_LEN, MSG_LEN, NULL, 0, NULL, sigs + i * sgl};
    pqg_verify_request v = {pks + i * pkl, msgs + i * MSG_LEN, MSG_LEN, NULL, 0, sigs + i * sgl, sgl};
    sreq[i] = s;
    vreq[i] = v;
  }
  /* One untimed round first (kernel loading, first touch of the arrays). */
  for (r = -1; r < reps; r++) {
    if (slh)
      TIMED(pqg_slhdsa_keygen_submit(ctx, alg, n, NULL, pks, sks, st, &job_));
    else
      TIMED(pqg_mldsa_keygen_submit(ctx, alg, n, NULL, pks, sks, st, &job_));
    all_ok(st, n, "keygen");
    if (r >= 0) best[0] = keep_best(best[0], secs);
    if (slh)
      TIMED(pqg_slhdsa_sign_submit(ctx, alg, sreq, n, st, &job_));
    else
      TIMED(pqg_mldsa_sign_submit(ctx, alg, sreq, n, st, &job_));
    all_ok(st, n, "sign");
    if (r >= 0) best[1] = keep_best(best[1], secs);
    if (slh)
      TIMED(pqg_slhdsa_verify_submit(ctx, alg, vreq, n, st, &job_));
    else
      TIMED(pqg_mldsa_verify_submit(ctx, alg, vreq, n, st, &job_));
    all_ok(st, n, "verify");
    if (r >= 0) best[2] = keep_best(best[2], secs);
  }
  report(name, "keygen", n, best[0]);
  report(name, "sign", n, best[1]);
  report(name, "verify", n, best[2]);
  unreg(ctx, pks);
  unreg(ctx, sks);
  unreg(ctx, sigs);
  unreg(ctx, msgs);
  free(pks);
  free(sks);
  free(sigs);
  free(msgs);
  free(st);
  free(sreq);
  free(vreq);
}

/* Whether the set `name` runs (PQG_BENCH_ONLY unset, or a prefix of `name`). */
static int wanted(const char *name) {
  const char *only = getenv("PQG_BENCH_ONLY");
  return only == NULL || strncmp(name, only, strlen(only)) == 0;
}

/* per_item: encapsulation and decapsulation with a key per item instead of one server key. */
static void kem(pqg_context *ctx, pqg_alg alg, const char *name, size_t n, int reps, int per_item) {
  const size_t pkl = pqg_public_key_len(alg), skl = pqg_secret_key_len(alg);
  const size_t ctl = pqg_ciphertext_len(alg), ssl = pqg_shared_secret_len(alg);
  uint8_t *pks = xmalloc(n * pkl), *sks = xmalloc(n * skl), *cts = xmalloc(n * ctl);
  uint8_t *sse = xmalloc(n * ssl), *ssd = xmalloc(n * ssl);
  pqg_status *st = (pqg_status *)xmalloc(n * sizeof(pqg_status));
  pqg_encaps_request *ereq = (pqg_encaps_request *)xmalloc(n * sizeof(pqg_encaps_request));
  pqg_decaps_request *dreq = (pqg_decaps_request *)xmalloc(n * sizeof(pqg_decaps_request));
  double secs = 0, best[3] = {0, 0, 0};
  size_t i;
  int r;

  reg(ctx, pks, n * pkl);
  reg(ctx, sks, n * skl);
  reg(ctx, cts, n * ctl);
  reg(ctx, sse, n * ssl);
  reg(ctx, ssd, n * ssl);
  /* Encapsulations all go to the first key (a server's key) and decapsulation uses it too,
   * or item i uses key pair i. */
  for (i = 0; i < n; i++) {
    size_t k = per_item ? i : 0;
    pqg_encaps_request e = {pks + k * pkl, NULL, cts + i * ctl, sse + i * ssl};
    pqg_decaps_request d = {sks + k * skl, cts + i * ctl, ssd + i * ssl};
    ereq[i] = e;
    dreq[i] = d;
  }
  for (r = -1; r < reps; r++) {
    TIMED(pqg_kem_keygen_submit(ctx, alg, n, NULL, pks, sks, st, &job_));
    all_ok(st, n, "kem keygen");
    if (r >= 0) best[0] = keep_best(best[0], secs);
    TIMED(pqg_kem_encaps_submit(ctx, alg, ereq, n, st, &job_));
    all_ok(st, n, "encaps");
    if (r >= 0) best[1] = keep_best(best[1], secs);
    memset(ssd, 0xff, n * ssl);
    TIMED(pqg_kem_decaps_submit(ctx, alg, dreq, n, st, &job_));
    all_ok(st, n, "decaps");
    CHECK(memcmp(sse, ssd, n * ssl) == 0, "decapsulated secrets equal the encapsulated ones");
    if (r >= 0) best[2] = keep_best(best[2], secs);
  }
  report(name, "keygen", n, best[0]);
  report(name, per_item ? "encaps/k" : "encaps", n, best[1]);
  report(name, per_item ? "decaps/k" : "decaps", n, best[2]);
  unreg(ctx, pks);
  unreg(ctx, sks);
  unreg(ctx, cts);
  unreg(ctx, sse);
  unreg(ctx, ssd);
  free(pks);
  free(sks);
  free(cts);
  free(sse);
  free(ssd);
  free(st);
  free(ereq);
  free(dreq);
}

int main(int argc, char **argv) {
  size_t n = (size_t)arg_or(argc, argv, 1, 65536);
  int reps = (int)arg_or(argc, argv, 2, 3);
  pqg_context *ctx = new_context();
  int i;
  g_register = argc <= 3;
  printf("batch %lu, best of %d, %s buffers\n", (unsigned long)n, reps,
         g_register ? "registered" : "pageable");
  if (wanted("ML-DSA-44")) sig(ctx, PQG_ML_DSA_44, "ML-DSA-44", n, reps, 0);
  if (wanted("ML-DSA-65")) sig(ctx, PQG_ML_DSA_65, "ML-DSA-65", n, reps, 0);
  if (wanted("ML-DSA-87")) sig(ctx, PQG_ML_DSA_87, "ML-DSA-87", n, reps, 0);
  if (wanted("CTRU-Prime-653")) kem(ctx, PQG_CTRU_PRIME_653, "CTRU-Prime-653", n, reps, 0);
  if (wanted("CTRU-Prime-761")) kem(ctx, PQG_CTRU_PRIME_761, "CTRU-Prime-761", n, reps, 0);
  if (wanted("CTRU-Prime-1277")) kem(ctx, PQG_CTRU_PRIME_1277, "CTRU-Prime-1277", n, reps, 0);
  for (i = 0; i < 3; i++) {
    static const pqg_alg sets[3] = {PQG_ML_KEM_512, PQG_ML_KEM_768, PQG_ML_KEM_1024};
    static const char *names[3] = {"ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"};
    if (!wanted(names[i])) continue;
    kem(ctx, sets[i], names[i], n, reps, 0);
    kem(ctx, sets[i], names[i], n, reps, 1);
  }
  /* SLH-DSA only when asked for by name (PQG_BENCH_ONLY=SLH-DSA...): its signing is slow
   * enough that a default run would take minutes. Batches of n/8 (f sets) or n/128 (s). */
  for (i = 0; i < 12 && getenv("PQG_BENCH_ONLY") != NULL; i++) {
    static const char *names[12] = {"SLH-DSA-SHA2-128s", "SLH-DSA-SHAKE-128s", "SLH-DSA-SHA2-128f",
                                    "SLH-DSA-SHAKE-128f", "SLH-DSA-SHA2-192s", "SLH-DSA-SHAKE-192s",
                                    "SLH-DSA-SHA2-192f", "SLH-DSA-SHAKE-192f", "SLH-DSA-SHA2-256s",
                                    "SLH-DSA-SHAKE-256s", "SLH-DSA-SHA2-256f", "SLH-DSA-SHAKE-256f"};
    size_t m = names[i][strlen(names[i]) - 1] == 's' ? n / 128 : n / 8;
    if (!wanted(names[i])) continue;
    sig(ctx, PQG_SLH_DSA_SHA2_128S + i, names[i], m ? m : 1, reps, 1);
  }
  pqg_context_free(ctx);
  return finish("bench");
}

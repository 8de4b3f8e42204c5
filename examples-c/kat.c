/* NIST ACVP ML-DSA keyGen vectors through the C API: for every test case, the seed's key
 * pair from pqg_mldsa_keygen must equal the expected pk and sk byte for byte; each parameter
 * set is then regenerated again in one pqg_mldsa_keygen_submit batch.
 *
 * Usage: kat DIR [max_per_set]
 *   DIR: the folder with prompt.json and expectedResults.json
 *        (shared/vectors/acvp/ML-DSA-keyGen-FIPS204).
 * The JSON is read with a small scanner for the fields used here, not a full parser. */
#include "example.h"

typedef struct {
  long tc_id;
  pqg_alg alg;
  uint8_t seed[32];
  char *pk_hex, *sk_hex; /* from expectedResults.json; point into its text */
} kat_case;

static char *read_file(const char *dir, const char *name) {
  char path[4096];
  FILE *f;
  long len;
  char *text;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  len = ftell(f);
  fseek(f, 0, SEEK_SET);
  text = (char *)xmalloc((size_t)len + 1);
  if (fread(text, 1, (size_t)len, f) != (size_t)len) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  text[len] = '\0';
  fclose(f);
  return text;
}

/* The next occurrence of "key" at or after p, positioned at its value (after ':' and
   blanks), or NULL. */
static char *find_value(char *p, const char *key) {
  char pattern[64];
  char *hit;
  snprintf(pattern, sizeof pattern, "\"%s\"", key);
  hit = strstr(p, pattern);
  if (hit == NULL) return NULL;
  hit += strlen(pattern);
  while (*hit == ' ' || *hit == ':' || *hit == '\n' || *hit == '\r' || *hit == '\t') hit++;
  return hit;
}

/* Terminates a "string" value in place and returns its contents. */
static char *string_value(char *v) {
  char *end;
  if (*v != '"') return NULL;
  end = strchr(v + 1, '"');
  if (end == NULL) return NULL;
  *end = '\0';
  return v + 1;
}

static int hex_nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes exactly n bytes of hex; 0 on success. */
static int unhex(const char *hex, uint8_t *out, size_t n) {
  size_t i;
  if (strlen(hex) != 2 * n) return -1;
  for (i = 0; i < n; i++) {
    int hi = hex_nibble(hex[2 * i]), lo = hex_nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return -1;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return 0;
}

static pqg_alg alg_of(const char *name) {
  if (strcmp(name, "ML-DSA-44") == 0) return PQG_ML_DSA_44;
  if (strcmp(name, "ML-DSA-65") == 0) return PQG_ML_DSA_65;
  if (strcmp(name, "ML-DSA-87") == 0) return PQG_ML_DSA_87;
  return 0;
}

/* Reads the prompt: test groups carry "parameterSet", their tests "tcId" and "seed". */
static size_t read_prompt(char *text, kat_case *cases, size_t cap, long max_per_set) {
  size_t n = 0;
  long in_set = 0;
  pqg_alg alg = 0;
  char *p = text;
  for (;;) {
    char *next_set = find_value(p, "parameterSet"), *next_tc = find_value(p, "tcId");
    if (next_tc == NULL) break;
    if (next_set != NULL && next_set < next_tc) {
      char *name = string_value(next_set);
      alg = name ? alg_of(name) : 0;
      in_set = 0;
      p = next_set + strlen(next_set) + 1;
      continue;
    }
    {
      long tc = strtol(next_tc, &p, 10);
      char *seed = find_value(p, "seed");
      char *hex = seed ? string_value(seed) : NULL;
      if (hex == NULL) break;
      p = hex + strlen(hex) + 1;
      if (alg == 0 || in_set >= max_per_set || n == cap) continue;
      cases[n].tc_id = tc;
      cases[n].alg = alg;
      cases[n].pk_hex = cases[n].sk_hex = NULL;
      if (unhex(hex, cases[n].seed, 32) != 0) {
        fprintf(stderr, "tcId %ld: bad seed\n", tc);
        exit(2);
      }
      in_set++;
      n++;
    }
  }
  return n;
}

/* Attaches the expected "pk" and "sk" of each case (matched by tcId). */
static void read_expected(char *text, kat_case *cases, size_t n) {
  char *p = text;
  char *tc_at;
  while ((tc_at = find_value(p, "tcId")) != NULL) {
    long tc = strtol(tc_at, &p, 10);
    char *pk = find_value(p, "pk"), *sk;
    size_t i;
    if (pk == NULL || (pk = string_value(pk)) == NULL) break;
    sk = find_value(pk + strlen(pk) + 1, "sk");
    if (sk == NULL || (sk = string_value(sk)) == NULL) break;
    p = sk + strlen(sk) + 1;
    for (i = 0; i < n; i++) {
      if (cases[i].tc_id == tc) {
        cases[i].pk_hex = pk;
        cases[i].sk_hex = sk;
      }
    }
  }
}

/* 1 when the key pair equals the case's expected hex. */
static int matches(const kat_case *c, const uint8_t *pk, const uint8_t *sk) {
  const size_t pk_len = pqg_public_key_len(c->alg), sk_len = pqg_secret_key_len(c->alg);
  uint8_t *want_pk = xmalloc(pk_len), *want_sk = xmalloc(sk_len);
  int ok = c->pk_hex && c->sk_hex && unhex(c->pk_hex, want_pk, pk_len) == 0 &&
           unhex(c->sk_hex, want_sk, sk_len) == 0 && memcmp(pk, want_pk, pk_len) == 0 &&
           memcmp(sk, want_sk, sk_len) == 0;
  free(want_pk);
  free(want_sk);
  return ok;
}

int main(int argc, char **argv) {
  static const pqg_alg algs[3] = {PQG_ML_DSA_44, PQG_ML_DSA_65, PQG_ML_DSA_87};
  kat_case cases[1024];
  char *prompt, *expected;
  size_t n, i, per_set[3] = {0, 0, 0}, batch_ok = 0;
  long max_per_set;
  pqg_context *ctx;
  int a;

  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR [max_per_set]  (DIR = .../acvp/ML-DSA-keyGen-FIPS204)\n",
            argv[0]);
    return 2;
  }
  max_per_set = arg_or(argc, argv, 2, 1000000);
  prompt = read_file(argv[1], "prompt.json");
  expected = read_file(argv[1], "expectedResults.json");
  n = read_prompt(prompt, cases, sizeof cases / sizeof cases[0], max_per_set);
  read_expected(expected, cases, n);
  CHECK(n > 0, "the prompt file has test cases");
  ctx = new_context();

  /* One at a time. */
  for (i = 0; i < n; i++) {
    const kat_case *c = &cases[i];
    const size_t pk_len = pqg_public_key_len(c->alg), sk_len = pqg_secret_key_len(c->alg);
    uint8_t *pk = xmalloc(pk_len), *sk = xmalloc(sk_len);
    EXPECT(pqg_mldsa_keygen(ctx, c->alg, c->seed, pk, pk_len, sk, sk_len), PQG_OK);
    if (!matches(c, pk, sk)) {
      fprintf(stderr, "tcId %ld: key pair differs from the expected result\n", c->tc_id);
      CHECK(0, "ACVP keyGen case matches");
    }
    per_set[c->alg - 1]++;
    free(pk);
    free(sk);
  }

  /* Each parameter set again as one batch. */
  for (a = 0; a < 3; a++) {
    const pqg_alg alg = algs[a];
    const size_t pk_len = pqg_public_key_len(alg), sk_len = pqg_secret_key_len(alg);
    size_t m = per_set[a], k = 0;
    uint8_t *seeds = xmalloc(m * 32), *pks = xmalloc(m * pk_len), *sks = xmalloc(m * sk_len);
    pqg_status *st = (pqg_status *)xmalloc(m * sizeof(pqg_status));
    const kat_case **picked = (const kat_case **)xmalloc(m * sizeof(kat_case *));
    pqg_job *job = NULL;
    for (i = 0; i < n; i++) {
      if (cases[i].alg != alg) continue;
      memcpy(seeds + k * 32, cases[i].seed, 32);
      picked[k++] = &cases[i];
    }
    EXPECT(pqg_mldsa_keygen_submit(ctx, alg, m, seeds, pks, sks, st, &job), PQG_OK);
    EXPECT(pqg_job_wait(job, -1), PQG_OK);
    pqg_job_free(job);
    for (k = 0; k < m; k++) {
      EXPECT(st[k], PQG_OK);
      if (matches(picked[k], pks + k * pk_len, sks + k * sk_len)) {
        batch_ok++;
      } else {
        fprintf(stderr, "tcId %ld: batch key pair differs\n", picked[k]->tc_id);
        CHECK(0, "ACVP keyGen case matches in a batch");
      }
    }
    free(seeds);
    free(pks);
    free(sks);
    free(st);
    free(picked);
  }

  printf("ACVP ML-DSA keyGen: %lu cases (ML-DSA-44: %lu, -65: %lu, -87: %lu) one at a time, "
         "%lu again in batches\n",
         (unsigned long)n, (unsigned long)per_set[0], (unsigned long)per_set[1],
         (unsigned long)per_set[2], (unsigned long)batch_ok);
  pqg_context_free(ctx);
  free(prompt);
  free(expected);
  return finish("kat");
}

/* Small helpers shared by the pqgpu C examples: status checks that count failures. */
#ifndef PQGPU_EXAMPLE_H
#define PQGPU_EXAMPLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pqgpu.h>

static int g_failures = 0;
static int g_checks = 0;

/* Checks that `got` is the status `want`; prints both on a mismatch. */
#define EXPECT(got, want) expect_status((got), (want), #got, __FILE__, __LINE__)

/* Checks a condition; prints the message on failure. */
#define CHECK(cond, msg) check_true((cond) ? 1 : 0, (msg), __FILE__, __LINE__)

static inline void expect_status(pqg_status got, pqg_status want, const char *expr,
                                 const char *file, int line) {
  g_checks++;
  if (got != want) {
    g_failures++;
    fprintf(stderr, "FAIL %s:%d: %s\n  got  %d (%s)\n  want %d (%s)\n", file, line, expr,
            got, pqg_status_str(got), want, pqg_status_str(want));
  }
}

static inline void check_true(int ok, const char *msg, const char *file, int line) {
  g_checks++;
  if (!ok) {
    g_failures++;
    fprintf(stderr, "FAIL %s:%d: %s\n", file, line, msg);
  }
}

/* True when all n bytes equal v. */
static inline int all_bytes(const uint8_t *p, size_t n, uint8_t v) {
  size_t i;
  for (i = 0; i < n; i++) {
    if (p[i] != v) return 0;
  }
  return 1;
}

/* Allocates n bytes or exits: the examples have no use for a half-allocated state. */
static inline uint8_t *xmalloc(size_t n) {
  uint8_t *p = (uint8_t *)malloc(n ? n : 1);
  if (p == NULL) {
    fprintf(stderr, "out of memory (%lu bytes)\n", (unsigned long)n);
    exit(2);
  }
  return p;
}

/* A positive integer argument, or `fallback` when absent. */
static inline long arg_or(int argc, char **argv, int i, long fallback) {
  long v;
  if (argc <= i) return fallback;
  v = strtol(argv[i], NULL, 10);
  return v > 0 ? v : fallback;
}

/* Prints the summary line and returns the exit code. */
static inline int finish(const char *name) {
  if (g_failures) {
    printf("%s: %d of %d checks FAILED\n", name, g_failures, g_checks);
    return 1;
  }
  printf("%s: all %d checks passed\n", name, g_checks);
  return 0;
}

/* A context on the backend chosen by PQG_BACKEND_AUTO (GPU if usable, else CPU). */
static inline pqg_context *new_context(void) {
  pqg_context *ctx = NULL;
  pqg_status s = pqg_context_new(PQG_BACKEND_AUTO, &ctx);
  if (s != PQG_OK) {
    fprintf(stderr, "pqg_context_new: %s\n", pqg_status_str(s));
    exit(2);
  }
  printf("pqgpu %s, backend %s\n", pqg_version(),
         pqg_context_backend(ctx) == PQG_BACKEND_GPU ? "GPU" : "CPU");
  {
    /* What the context says of itself (key=value lines: the backend, why AUTO chose it, the
       devices, why a GPU is unusable): ask for the size, then for the text. */
    size_t size = 0;
    char *text;
    EXPECT(pqg_context_describe(ctx, NULL, 0, &size), PQG_ERR_BAD_LENGTH);
    text = (char *)malloc(size);
    if (text != NULL) {
      EXPECT(pqg_context_describe(ctx, text, size, NULL), PQG_OK);
      CHECK(strlen(text) + 1 == size, "the description fills exactly the size it asked for");
      printf("%s", text);
      free(text);
    }
  }
  return ctx;
}

#endif

/*
 * p11_bench: signatures per second through the PKCS#11 module, as a multi-threaded server
 * would get them. N threads (default 256) each open their own session and sign in a loop
 * with one ML-DSA-44 key (C_SignInit + C_Sign per signature) for a fixed time; the module's
 * serving dispatcher merges the concurrent signatures into backend batches. Reports the rate
 * and the latency of C_SignInit + C_Sign (p50, p99).
 *
 *   p11_bench MODULE [threads] [seconds] [message bytes]
 *
 * The module reads its configuration from PQGPU_PKCS11_CONF. The token is initialised here
 * when it is not (SO PIN and user PIN from P11_SO_PIN / P11_PIN, defaults below); the key
 * pair is a session object, made once. Entry points are looked up by name (the module
 * exports them), so the harness needs no PKCS#11 header.
 *
 * Build: cc -O2 -pthread -o p11_bench p11_bench.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* PKCS#11 types and values used here (OASIS PKCS#11 3.2, pkcs11t.h). */
typedef unsigned long CK_ULONG, CK_RV, CK_SESSION_HANDLE, CK_OBJECT_HANDLE, CK_FLAGS;
typedef unsigned char CK_BYTE, CK_BBOOL;
typedef struct { CK_ULONG type; void *pValue; CK_ULONG ulValueLen; } CK_ATTRIBUTE;
typedef struct { CK_ULONG mechanism; void *pParameter; CK_ULONG ulParameterLen; } CK_MECHANISM;
typedef struct {
    void *CreateMutex, *DestroyMutex, *LockMutex, *UnlockMutex;
    CK_FLAGS flags;
    void *pReserved;
} CK_C_INITIALIZE_ARGS;
typedef struct {
    CK_BYTE label[32], manufacturerID[32], model[16], serialNumber[16];
    CK_FLAGS flags;
    CK_ULONG rest[10];
    CK_BYTE versions[4], utcTime[16];
} CK_TOKEN_INFO;

#define CKR_OK 0UL
#define CKR_USER_ALREADY_LOGGED_IN 0x100UL
#define CKF_OS_LOCKING_OK 0x2UL
#define CKF_RW_SESSION 0x2UL
#define CKF_SERIAL_SESSION 0x4UL
#define CKF_TOKEN_INITIALIZED 0x400UL
#define CKU_SO 0UL
#define CKU_USER 1UL
#define CKA_CLASS 0x0UL
#define CKA_TOKEN 0x1UL
#define CKA_PARAMETER_SET 0x61dUL
#define CKO_PUBLIC_KEY 2UL
#define CKO_PRIVATE_KEY 3UL
#define CKM_ML_DSA_KEY_PAIR_GEN 0x1cUL
#define CKM_ML_DSA 0x1dUL
#define CKP_ML_DSA_44 1UL
#define SIG_MAX 4627

static CK_RV (*C_Initialize)(void *);
static CK_RV (*C_Finalize)(void *);
static CK_RV (*C_GetTokenInfo)(CK_ULONG, CK_TOKEN_INFO *);
static CK_RV (*C_InitToken)(CK_ULONG, CK_BYTE *, CK_ULONG, CK_BYTE *);
static CK_RV (*C_OpenSession)(CK_ULONG, CK_FLAGS, void *, void *, CK_SESSION_HANDLE *);
static CK_RV (*C_CloseSession)(CK_SESSION_HANDLE);
static CK_RV (*C_Login)(CK_SESSION_HANDLE, CK_ULONG, CK_BYTE *, CK_ULONG);
static CK_RV (*C_Logout)(CK_SESSION_HANDLE);
static CK_RV (*C_InitPIN)(CK_SESSION_HANDLE, CK_BYTE *, CK_ULONG);
static CK_RV (*C_GenerateKeyPair)(CK_SESSION_HANDLE, CK_MECHANISM *, CK_ATTRIBUTE *, CK_ULONG,
                                  CK_ATTRIBUTE *, CK_ULONG, CK_OBJECT_HANDLE *, CK_OBJECT_HANDLE *);
static CK_RV (*C_SignInit)(CK_SESSION_HANDLE, CK_MECHANISM *, CK_OBJECT_HANDLE);
static CK_RV (*C_Sign)(CK_SESSION_HANDLE, CK_BYTE *, CK_ULONG, CK_BYTE *, CK_ULONG *);
static CK_RV (*C_VerifyInit)(CK_SESSION_HANDLE, CK_MECHANISM *, CK_OBJECT_HANDLE);
static CK_RV (*C_Verify)(CK_SESSION_HANDLE, CK_BYTE *, CK_ULONG, CK_BYTE *, CK_ULONG);

#define CHECK(call)                                                                  \
    do {                                                                             \
        CK_RV rv_ = (call);                                                          \
        if (rv_ != CKR_OK) {                                                         \
            fprintf(stderr, "p11_bench: %s failed: CKR 0x%lx\n", #call, rv_);        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static void *sym(void *h, const char *name) {
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "p11_bench: the module has no %s\n", name);
        exit(1);
    }
    return p;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

struct worker {
    pthread_t tid;
    CK_OBJECT_HANDLE key;
    size_t msg_len;
    double deadline;
    pthread_barrier_t *start;
    float *lat_us; /* one entry per signature, up to cap */
    size_t cap, n;
    int failed;
};

static void *run(void *arg) {
    struct worker *w = arg;
    CK_SESSION_HANDLE s;
    CK_MECHANISM mech = {CKM_ML_DSA, NULL, 0};
    CK_BYTE sig[SIG_MAX];
    CK_BYTE *msg = calloc(w->msg_len ? w->msg_len : 1, 1);
    CHECK(C_OpenSession(0, CKF_SERIAL_SESSION, NULL, NULL, &s));
    pthread_barrier_wait(w->start);
    while (1) {
        double t0 = now();
        if (t0 >= w->deadline)
            break;
        memcpy(msg, &w->n, w->msg_len < sizeof w->n ? w->msg_len : sizeof w->n);
        CK_ULONG len = sizeof sig;
        if (C_SignInit(s, &mech, w->key) != CKR_OK || C_Sign(s, msg, w->msg_len, sig, &len) != CKR_OK) {
            w->failed = 1;
            break;
        }
        if (w->n == w->cap) {
            w->cap = w->cap ? 2 * w->cap : 4096;
            w->lat_us = realloc(w->lat_us, w->cap * sizeof *w->lat_us);
        }
        w->lat_us[w->n++] = (float)((now() - t0) * 1e6);
    }
    C_CloseSession(s);
    free(msg);
    return NULL;
}

static int cmp(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODULE [threads=256] [seconds=10] [message bytes=32]\n", argv[0]);
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 256;
    double seconds = argc > 3 ? atof(argv[3]) : 10.0;
    size_t msg_len = argc > 4 ? (size_t)atol(argv[4]) : 32;
    if (threads < 1 || seconds <= 0) {
        fprintf(stderr, "p11_bench: threads >= 1 and seconds > 0\n");
        return 2;
    }
    const char *so_pin = getenv("P11_SO_PIN") ? getenv("P11_SO_PIN") : "bench-so-pin";
    const char *pin = getenv("P11_PIN") ? getenv("P11_PIN") : "bench-user-pin";

    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "p11_bench: %s\n", dlerror());
        return 1;
    }
    C_Initialize = sym(h, "C_Initialize");
    C_Finalize = sym(h, "C_Finalize");
    C_GetTokenInfo = sym(h, "C_GetTokenInfo");
    C_InitToken = sym(h, "C_InitToken");
    C_OpenSession = sym(h, "C_OpenSession");
    C_CloseSession = sym(h, "C_CloseSession");
    C_Login = sym(h, "C_Login");
    C_Logout = sym(h, "C_Logout");
    C_InitPIN = sym(h, "C_InitPIN");
    C_GenerateKeyPair = sym(h, "C_GenerateKeyPair");
    C_SignInit = sym(h, "C_SignInit");
    C_Sign = sym(h, "C_Sign");
    C_VerifyInit = sym(h, "C_VerifyInit");
    C_Verify = sym(h, "C_Verify");

    CK_C_INITIALIZE_ARGS init = {NULL, NULL, NULL, NULL, CKF_OS_LOCKING_OK, NULL};
    CHECK(C_Initialize(&init));
    CK_TOKEN_INFO ti;
    CHECK(C_GetTokenInfo(0, &ti));
    CK_SESSION_HANDLE s;
    if (!(ti.flags & CKF_TOKEN_INITIALIZED)) {
        CK_BYTE label[32];
        memset(label, ' ', sizeof label);
        memcpy(label, "p11_bench", 9);
        CHECK(C_InitToken(0, (CK_BYTE *)so_pin, strlen(so_pin), label));
        CHECK(C_OpenSession(0, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s));
        CHECK(C_Login(s, CKU_SO, (CK_BYTE *)so_pin, strlen(so_pin)));
        CHECK(C_InitPIN(s, (CK_BYTE *)pin, strlen(pin)));
        CHECK(C_Logout(s));
    } else {
        CHECK(C_OpenSession(0, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s));
    }
    CK_RV rv = C_Login(s, CKU_USER, (CK_BYTE *)pin, strlen(pin));
    if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN)
        CHECK(rv);

    CK_ULONG pub_class = CKO_PUBLIC_KEY, priv_class = CKO_PRIVATE_KEY, set = CKP_ML_DSA_44;
    CK_BBOOL no = 0;
    CK_ATTRIBUTE pub_t[] = {{CKA_CLASS, &pub_class, sizeof pub_class},
                            {CKA_TOKEN, &no, 1},
                            {CKA_PARAMETER_SET, &set, sizeof set}};
    CK_ATTRIBUTE priv_t[] = {{CKA_CLASS, &priv_class, sizeof priv_class}, {CKA_TOKEN, &no, 1}};
    CK_MECHANISM gen = {CKM_ML_DSA_KEY_PAIR_GEN, NULL, 0}, mech = {CKM_ML_DSA, NULL, 0};
    CK_OBJECT_HANDLE pub, priv;
    CHECK(C_GenerateKeyPair(s, &gen, pub_t, 3, priv_t, 2, &pub, &priv));

    /* One signature checked by the token before measuring. */
    CK_BYTE sig[SIG_MAX], m[3] = {1, 2, 3};
    CK_ULONG len = sizeof sig;
    CHECK(C_SignInit(s, &mech, priv));
    CHECK(C_Sign(s, m, sizeof m, sig, &len));
    CHECK(C_VerifyInit(s, &mech, pub));
    CHECK(C_Verify(s, m, sizeof m, sig, len));

    /* A short warm-up (backend start, first batches), then the measured run. */
    for (int round = 0; round < 2; round++) {
        double secs = round == 0 ? (seconds < 2 ? seconds / 2 : 1.0) : seconds;
        struct worker *w = calloc(threads, sizeof *w);
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, threads + 1);
        for (int i = 0; i < threads; i++) {
            w[i].key = priv;
            w[i].msg_len = msg_len;
            w[i].start = &start;
            w[i].deadline = 1e300;
            if (pthread_create(&w[i].tid, NULL, run, &w[i]) != 0) {
                fprintf(stderr, "p11_bench: cannot start thread %d\n", i);
                return 1;
            }
        }
        double t0 = now();
        for (int i = 0; i < threads; i++)
            w[i].deadline = t0 + secs;
        __sync_synchronize();
        pthread_barrier_wait(&start);
        size_t total = 0;
        int failed = 0;
        for (int i = 0; i < threads; i++) {
            pthread_join(w[i].tid, NULL);
            total += w[i].n;
            failed |= w[i].failed;
        }
        double elapsed = now() - t0;
        if (failed) {
            fprintf(stderr, "p11_bench: a signature failed\n");
            return 1;
        }
        if (round == 1) {
            float *all = malloc((total ? total : 1) * sizeof *all);
            size_t k = 0;
            for (int i = 0; i < threads; i++) {
                memcpy(all + k, w[i].lat_us, w[i].n * sizeof *all);
                k += w[i].n;
            }
            qsort(all, total, sizeof *all, cmp);
            double p50 = total ? all[total / 2] : 0, p99 = total ? all[(size_t)(total * 0.99)] : 0;
            printf("ML-DSA-44 C_SignInit+C_Sign threads=%d seconds=%.2f signatures=%zu rate=%.0f/s "
                   "p50=%.3fms p99=%.3fms\n",
                   threads, elapsed, total, total / elapsed, p50 / 1e3, p99 / 1e3);
            free(all);
        }
        for (int i = 0; i < threads; i++)
            free(w[i].lat_us);
        free(w);
        pthread_barrier_destroy(&start);
    }
    C_CloseSession(s);
    CHECK(C_Finalize(NULL));
    return 0;
}

/*
 * prefork: a pre-fork server's life with pqgpu.so, as nginx, Apache's prefork and HAProxy's
 * master-worker mode live it. The master loads OpenSSL's configuration (OPENSSL_CONF: pqgpu
 * loaded and preferred) and an ML-DSA private key, optionally signs a few times itself (a
 * start-up self-test), then forks workers; each signs its own messages with EVP_DigestSign
 * and verifies every signature twice: through the preferred provider and through OpenSSL's
 * default provider alone (an independent implementation).
 *
 * Output, one line per process, key=value:
 *   master phase=loaded|self-tested backend=<none|cpu|gpu> cuda_pid=<n> nvidia_fds=<n>
 *   worker i=<i> pid=<pid> backend=<cpu|gpu|none> signed=<ok>/<n> verified=<ok>
 *          verified_default=<ok> gpu_unusable="<why>" error="<first error, with its data>"
 *   workers=<n> exited=<n> all_signed=<yes|no>
 * backend, gpu_unusable and cuda_pid are pqgpu.so's provider parameters (pqgpu-backend,
 * pqgpu-gpu-unusable, pqgpu-cuda-pid: which backend this process's operations run on, why not
 * the GPU, which process initialised the CUDA driver); nvidia_fds counts this process's open
 * /dev/nvidia* descriptors (the CUDA driver opens them when it is initialised).
 *
 * Exit status: 0 when every worker exited normally (whatever its signatures' statuses: they
 * are reported), 1 otherwise (a worker crashed or was killed by its 120 s alarm), 2 on bad
 * usage or a master that could not load its key.
 *
 * Usage: prefork --key KEY.pem [--workers 4] [--signs 200] [--master-signs 0]
 * Build: bash provider/bench/build.sh OUTPUT prefork.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* This process's open descriptors on /dev/nvidia* (the driver's own trace of cuInit). */
static int nvidia_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (d == NULL)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[512], target[512];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len > 0) {
            target[len] = 0;
            n += strncmp(target, "/dev/nvidia", 11) == 0;
        }
    }
    closedir(d);
    return n;
}

struct state {
    const char *backend;
    char unusable[1024];
    int cuda_pid;
};

/* pqgpu.so's view of this process (never touches the GPU). */
static struct state pqgpu_state(OSSL_PROVIDER *prov) {
    struct state s = {"unknown", "", -1};
    OSSL_PARAM p[] = {
        OSSL_PARAM_utf8_ptr("pqgpu-backend", (char **)&s.backend, 0),
        OSSL_PARAM_utf8_string("pqgpu-gpu-unusable", s.unusable, sizeof s.unusable),
        OSSL_PARAM_int("pqgpu-cuda-pid", &s.cuda_pid),
        OSSL_PARAM_END,
    };
    if (prov == NULL || !OSSL_PROVIDER_get_params(prov, p))
        s.backend = "unknown";
    return s;
}

/* The first error on this thread's queue, with its data, on one line ("" if none). */
static void first_error(char *out, size_t len) {
    const char *data = NULL;
    int flags = 0;
    unsigned long e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags);
    out[0] = 0;
    if (e == 0)
        return;
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    snprintf(out, len, "%s%s%s", text, (data && (flags & ERR_TXT_STRING)) ? ": " : "",
             (data && (flags & ERR_TXT_STRING)) ? data : "");
    for (char *c = out; *c; c++)
        if (*c == '"' || *c == '\n')
            *c = '\'';
    ERR_clear_error();
}

/* Signs `msg` with `key` through the preferred provider; 1 on success. */
static int sign(EVP_PKEY *key, const char *msg, unsigned char *sig, size_t *siglen) {
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    int ok = m && EVP_DigestSignInit_ex(m, NULL, NULL, NULL, NULL, key, NULL) == 1 &&
             EVP_DigestSign(m, sig, siglen, (const unsigned char *)msg, strlen(msg)) == 1;
    EVP_MD_CTX_free(m);
    return ok;
}

/* Verifies under the property query `props` (NULL: the configured default); 1 if valid. */
static int verify(EVP_PKEY *key, const char *props, const char *msg, const unsigned char *sig,
                  size_t siglen) {
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    int ok = m && EVP_DigestVerifyInit_ex(m, NULL, NULL, NULL, props, key, NULL) == 1 &&
             EVP_DigestVerify(m, sig, siglen, (const unsigned char *)msg, strlen(msg)) == 1;
    EVP_MD_CTX_free(m);
    return ok;
}

static void master_line(OSSL_PROVIDER *prov, const char *phase) {
    struct state s = pqgpu_state(prov);
    printf("master phase=%s backend=%s cuda_pid=%d nvidia_fds=%d\n", phase, s.backend,
           s.cuda_pid, nvidia_fds());
    fflush(stdout);
}

static int worker(int i, OSSL_PROVIDER *prov, EVP_PKEY *key, int signs) {
    alarm(120);
    int signed_ok = 0, verified = 0, verified_default = 0;
    char error[1200] = "";
    unsigned char sig[8192];
    for (int n = 0; n < signs; n++) {
        char msg[64];
        snprintf(msg, sizeof msg, "worker %d message %d", i, n);
        size_t siglen = sizeof sig;
        if (!sign(key, msg, sig, &siglen)) {
            if (!error[0])
                first_error(error, sizeof error);
            ERR_clear_error();
            continue;
        }
        signed_ok++;
        verified += verify(key, NULL, msg, sig, siglen);
        verified_default += verify(key, "provider=default", msg, sig, siglen);
        ERR_clear_error();
    }
    struct state s = pqgpu_state(prov);
    printf("worker i=%d pid=%d backend=%s signed=%d/%d verified=%d verified_default=%d "
           "gpu_unusable=\"%s\" error=\"%s\"\n",
           i, (int)getpid(), s.backend, signed_ok, signs, verified, verified_default,
           s.unusable, error);
    fflush(stdout);
    return signed_ok == signs && verified == signs && verified_default == signs ? 0 : 3;
}

int main(int argc, char **argv) {
    const char *key_path = NULL;
    int workers = 4, signs = 200, master_signs = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--key"))
            key_path = argv[i + 1];
        else if (!strcmp(argv[i], "--workers"))
            workers = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--signs"))
            signs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--master-signs"))
            master_signs = atoi(argv[i + 1]);
    }
    if (key_path == NULL || workers < 1 || signs < 0 || master_signs < 0) {
        fprintf(stderr, "usage: prefork --key KEY.pem [--workers 4] [--signs 200] "
                        "[--master-signs 0]\n");
        return 2;
    }
    /* The configuration (OPENSSL_CONF) loads and activates pqgpu.so; this takes a reference. */
    OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL);
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(NULL, "pqgpu");
    FILE *f = fopen(key_path, "r");
    EVP_PKEY *key = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
    if (f)
        fclose(f);
    if (prov == NULL || key == NULL) {
        ERR_print_errors_fp(stderr);
        fprintf(stderr, "prefork: could not load pqgpu or %s\n", key_path);
        return 2;
    }
    master_line(prov, "loaded");
    if (master_signs > 0) {
        unsigned char sig[8192];
        int ok = 0;
        for (int n = 0; n < master_signs; n++) {
            size_t siglen = sizeof sig;
            ok += sign(key, "master self-test", sig, &siglen) &&
                  verify(key, "provider=default", "master self-test", sig, siglen);
        }
        ERR_clear_error();
        printf("master self-test signed=%d/%d\n", ok, master_signs);
        master_line(prov, "self-tested");
    }
    fflush(stdout);
    pid_t *pids = calloc((size_t)workers, sizeof *pids);
    for (int i = 0; i < workers; i++) {
        pids[i] = fork();
        if (pids[i] == 0)
            _exit(worker(i, prov, key, signs));
        if (pids[i] < 0) {
            perror("fork");
            return 1;
        }
    }
    int exited = 0, all_signed = 1;
    for (int i = 0; i < workers; i++) {
        int st = 0;
        if (waitpid(pids[i], &st, 0) == pids[i] && WIFEXITED(st)) {
            exited++;
            all_signed &= WEXITSTATUS(st) == 0;
        } else {
            all_signed = 0;
            printf("worker i=%d ended abnormally (status %#x)\n", i, st);
        }
    }
    printf("workers=%d exited=%d all_signed=%s\n", workers, exited, all_signed ? "yes" : "no");
    master_line(prov, "after-workers");
    free(pids);
    EVP_PKEY_free(key);
    OSSL_PROVIDER_unload(prov);
    return exited == workers ? 0 : 1;
}
